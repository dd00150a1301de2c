"""Behaviours of slicing / shape ops found missing by DALI 2.4's own tests (conformance run)."""
from __future__ import annotations

import pytest

from torch_dali import fn, types
from torch_dali.errors import GraphError
from torch_dali.pipeline import Pipeline


def test_gpu_input_to_a_cpu_op_is_a_runtime_error() -> None:
    """DALI raises RuntimeError for GPU data fed positionally to a CPU op, when the op is called."""
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        data = types.Constant(0, shape=[4, 4, 3], dtype=types.FLOAT, device="cpu")
        start = fn.random.uniform(range=[0.0, 0.3], shape=(2,), device="gpu")
        with pytest.raises(RuntimeError, match="input 1") as info:
            fn.slice(data, start, start, device="cpu")
        assert isinstance(info.value, GraphError)
