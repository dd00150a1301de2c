"""python_function's handling of what the user's function returns and of a missing or non-callable
`function`, as DALI 2.4's CPU backend does (measured there with a 1-D uint8 constant input)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.pipeline import Pipeline


def _run(**kw):
    with Pipeline(batch_size=2, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False) as p:
        a = fn.constant(idata=[1, 2, 3], dtype=types.UINT8)
        out = fn.python_function(a, **kw)
        p.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    p.build()
    return [o.as_array() for o in p.run()]


def test_single_output_tuple_gives_its_first_value():
    # DALI 2.4: a tuple returned for num_outputs=1 is taken as its first value
    (out,) = _run(function=lambda x: (x + 1, x * 0))
    np.testing.assert_array_equal(out, [[2, 3, 4]] * 2)
    (out,) = _run(function=lambda x: (x,))
    np.testing.assert_array_equal(out, [[1, 2, 3]] * 2)


def test_several_outputs_must_be_a_tuple():
    a, b = _run(function=lambda x: (x, x + 1), num_outputs=2)
    np.testing.assert_array_equal(b, [[2, 3, 4]] * 2)
    with pytest.raises(RuntimeError, match="tuple"):  # DALI 2.4 refuses a list: RuntimeError at run
        _run(function=lambda x: [x, x], num_outputs=2)


def test_missing_or_uncallable_function():
    with pytest.raises(TypeError):  # DALI: PythonFunction.__init__() missing argument `function`
        _run()
    with pytest.raises(RuntimeError):  # DALI calls it when the pipeline runs: RuntimeError there
        _run(function=5)


def test_python_function_classes_take_their_function_by_position():
    """DALI 2.4: `ops.PythonFunction(f)`, `ops.PythonFunction(f, 2)` and
    `plugin.pytorch.TorchPythonFunction(f)` (function, num_outputs, device, batch_processing)."""
    import numpy as np
    import torch

    from torch_dali import ops, pipeline_def
    from torch_dali.plugin.pytorch import TorchPythonFunction

    def run(make):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return make()
        pipe = p()
        pipe.build()
        return [np.asarray(pipe.run()[0].at(i)).tolist() for i in range(2)]

    assert run(lambda: ops.PythonFunction(lambda: np.full((2,), 7))()) == [[7, 7]] * 2
    assert run(lambda: ops.PythonFunction(lambda: (np.full((2,), 7), np.full((1,), 1)), 2)()[1]) == [[1]] * 2
    assert run(lambda: TorchPythonFunction(lambda: torch.full((2,), 7))()) == [[7, 7]] * 2
    with pytest.raises(TypeError, match="multiple values"):
        ops.PythonFunction(lambda: 1, function=lambda: 2)


def test_python_functions_run_when_no_output_uses_them():
    """DALI 2.4 never prunes Python function ops: a `num_outputs=0` sink and a function whose output
    is unused are called for every sample (measured: 2 calls each for batch 2, with the inputs they
    need computed). torch_dali pruned both, so DALI's test_python_function.test_sink wrote nothing."""
    calls = []

    def one(x):
        calls.append("one")
        return x

    def zero(x):
        calls.append("zero")

    with Pipeline(batch_size=2, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False) as p:
        a = fn.constant(idata=[1, 2, 3], dtype=types.UINT8)
        fn.python_function(a + 1, function=one)
        fn.python_function(a, function=zero, num_outputs=0)
        fn.cast(a, dtype=types.INT32)  # an unused ordinary op is still pruned (no side effects)
        p.set_outputs(a)
    p.build()
    p.run()
    assert sorted(calls) == ["one", "one", "zero", "zero"]
