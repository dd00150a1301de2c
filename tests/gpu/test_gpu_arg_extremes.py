"""tests/test_arg_extremes.py on the GPU (skipped without CUDA): every op with a GPU backend, given one
extreme value per argument of its own kind, runs or raises torch_dali's own error. A kernel reading
or writing out of bounds kills the child (an illegal memory access poisons the CUDA context), so
each op runs in a child process with a deadline."""
from __future__ import annotations

import pytest
import torch

try:
    from tests._isolate import Died, run_isolated
    from tests.test_arg_extremes import ops_on
except ImportError:  # tests/ itself on the path
    from _isolate import Died, run_isolated  # type: ignore[no-redef]
    from test_arg_extremes import ops_on  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_every_gpu_op_runs_or_gives_its_own_error_for_extreme_arguments():
    names = ops_on("gpu")
    results = dict(zip(names, run_isolated("tests.test_arg_extremes:attack_op", [[n, "gpu"] for n in names],
                                           timeout=180)))
    assert len(results) > 60
    died = {n: r.reason for n, r in results.items() if isinstance(r, Died)}
    assert not died, died
    found = [f for r in results.values() if not isinstance(r, Died) for f in r]
    assert not found, "\n".join(found)
