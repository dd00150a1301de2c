"""A config sets op arguments, and a config is untrusted: every registered CPU op, given one extreme
value per argument of the argument's own kind (NaN, infinities, huge and negative numbers, empty
and long lists, empty and odd strings), runs or raises torch_dali's own error. Never another
exception, a crash or a hang: each op runs in a child process (tests/_isolate.py) with a deadline
and at most 8 GiB of address space (a value that asks for more gets an error, not the OOM killer).
(Values of the wrong kind are refused by the schema before an op sees them: test_yaml_fuzz.py.)"""
from __future__ import annotations

import math
import signal
import traceback
from typing import Any

import numpy as np
import pytest

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

EXTREMES: dict[str, list[Any]] = {
    "int": [0, -1, 2**31, -2**31, 2**62],
    "float": [0.0, -1.0, math.nan, math.inf, -math.inf, 1e30],
    "int_list": [[], [-1, -1], [2**31] * 3, list(range(40))],
    "float_list": [[], [math.nan], [math.inf, 0.0], [1e30] * 4, [-1.0] * 9],
    "floats": [math.nan, -1e30, [], [math.nan] * 3],
    "ints": [-1, 2**40, [], [0] * 5],
    "str": ["", "x" * 300, "../../x"],
    "strs": ["", ["", ""]],
    "layout": ["", "ZZZZ", "HWCHWC"],
}
# ops that read files, run user code or only feed others: their paths and callables are other tests'
SKIP_PREFIXES = ("readers.", "experimental.readers.", "_")
SKIP = {"external_source", "python_function", "torch_python_function", "dl_tensor_python_function",
        "experimental.numba_function", "io.file.read", "experimental.inputs.video", "dump_image"}


def ops_on(device: str) -> list[str]:
    from torch_dali.ops import _registry
    # torch_dali's own ops (other test modules register fixtures of their own in this process)
    return sorted(s.name for s in _registry.all_schemas()
                  if device in s.devices and s.name not in SKIP and not s.name.startswith(SKIP_PREFIXES)
                  and s.impl.__module__.startswith("torch_dali."))


def attack_op(req: Any) -> list[str]:
    """Child side: the findings (not torch_dali's errors) for op `name` (req: the name, or [name,
    "gpu"]: the op on the GPU, fed from the CPU with .gpu())."""
    name, device = (req, "cpu") if isinstance(req, str) else req
    import resource
    import warnings

    # a bound on the child's memory: an allocation a value asks for fails here instead of the
    # kernel's OOM killer ending the child (or CI's machine) before it can answer
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

    from torch_dali import fn, pipeline_def
    from torch_dali.errors import TorchDaliError
    from torch_dali.ops import _registry
    from torch_dali.ops._schema import COMMON_ARGS

    warnings.simplefilter("ignore")
    schema = next(s for s in _registry.all_schemas() if s.name == name)
    op: Any = fn
    for part in name.split("."):
        op = getattr(op, part)
    n_in = 0 if schema.max_inputs == 0 else max(1, schema.min_inputs)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (32, 40, 3), dtype=np.uint8), rng.integers(0, 255, (20, 50, 3), dtype=np.uint8)]

    def hang(*_: Any) -> None:
        raise TimeoutError

    signal.signal(signal.SIGALRM, hang)
    found = []
    for arg in schema.args:
        if arg.name in COMMON_ARGS:
            continue
        for value in EXTREMES.get(arg.kind, []):
            @pipeline_def(batch_size=2, num_threads=1, device_id=None if device == "cpu" else 0, seed=1,
                          exec_pipelined=False, exec_async=False)
            def pipe():
                x = fn.external_source(source=lambda: images, batch=True, layout="HWC")
                x = x.gpu() if device == "gpu" else x
                out = op(*([x] * n_in), **{arg.name: value}, device=device)
                return tuple(out) if isinstance(out, (list, tuple)) else out
            signal.alarm(20)
            try:
                p = pipe()
                p.build()
                p.run()
                p.shutdown()
            except TorchDaliError as e:
                cause: Any = e
                while cause is not None and not isinstance(cause, TimeoutError):
                    cause = cause.__cause__ or cause.__context__
                if cause is not None:  # the alarm went off inside an op, which wrapped it
                    found.append(f"{name}[{device}]({arg.name}={value!r:.40}): no result in 20 s")
            except TimeoutError:
                found.append(f"{name}[{device}]({arg.name}={value!r:.40}): no result in 20 s")
            except Exception as e:  # noqa: BLE001 - what the test looks for
                where = traceback.extract_tb(e.__traceback__)[-1]
                found.append(f"{name}[{device}]({arg.name}={value!r:.40}): {type(e).__name__}: {str(e)[:120]} "
                             f"at {where.filename.rsplit('torch_dali/', 1)[-1]}:{where.lineno}")
            finally:
                signal.alarm(0)
    return found


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    names = ops_on("cpu")
    # two children at once: the ops are independent, and CI's machine has two cores
    return dict(zip(names, run_isolated("tests.test_arg_extremes:attack_op", names, timeout=120, workers=2)))


def test_every_op_runs_or_gives_its_own_error_for_extreme_arguments(results):
    assert len(results) > 100
    died = {n: r.reason for n, r in results.items() if isinstance(r, Died)}
    assert not died, died
    found = [f for r in results.values() for f in r]
    assert not found, "\n".join(found)
