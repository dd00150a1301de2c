"""Operands of `and`, `or` and `not` on DataNodes (enable_conditionals), as DALI restricts them:
one CPU scalar per sample, of type bool for `and`/`or`; `not` takes any type (nonzero is true).
Anything else is an error, not a silently elementwise result."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import GraphError, PipelineError

BS = 4


def _source(values):
    return fn.external_source(source=lambda si: values[si.idx_in_batch], batch=False)


def _pipe(body):
    return pipeline_def(batch_size=BS, num_threads=1, device_id=None, enable_conditionals=True)(body)()


BOOLS = [np.array(v) for v in (True, False, True, False)]
INTS = [np.int32(v) for v in (0, 3, 0, 5)]
ROWS = [np.array([True, False]) for _ in range(BS)]


def test_and_or_of_bool_scalars_and_not_of_any_scalar():
    def body():
        a, b, n = _source(BOOLS), _source(BOOLS[::-1]), _source(INTS)
        return a and b, a or b, not n
    both, either, neg = _pipe(body).run()
    assert [bool(x) for x in both] == [False, False, False, False]
    assert [bool(x) for x in either] == [True, True, True, True]
    assert [bool(x) for x in neg] == [True, False, True, False]


@pytest.mark.parametrize("expr", [lambda x, y: x and y, lambda x, y: y or x, lambda x, y: x or y])
def test_and_or_refuse_non_bool_operands(expr):
    def body():
        return expr(_source(INTS), _source(BOOLS))
    with pytest.raises(PipelineError, match="must be of type bool"):
        _pipe(body).run()


@pytest.mark.parametrize("expr", [lambda x, y: not x, lambda x, y: x and y, lambda x, y: y or x])
def test_operands_must_be_scalars(expr):
    def body():
        return expr(_source(ROWS), _source(BOOLS))
    with pytest.raises(PipelineError, match="one scalar"):
        _pipe(body).run()


@pytest.mark.parametrize("expr", [lambda x, y: x.gpu() and y, lambda x, y: x or y.gpu(), lambda x, y: not x.gpu()])
def test_operands_must_be_on_the_cpu(expr):
    """DALI 2.4 raises a RuntimeError while tracing `gpu_node and x`; ours is a GraphError too."""
    def body():
        return expr(_source(BOOLS), _source(BOOLS))
    with pytest.raises(GraphError, match="on the CPU") as e:
        _pipe(body)
    assert isinstance(e.value, RuntimeError)


def test_conditional_not_called_directly():
    """fn._conditional.not_ (DALI's op behind `not`): a bool per sample, nonzero is true; values
    as DALI 2.4 gives them for these inputs; 1-d samples are refused."""
    def body():
        return fn._conditional.not_(_source(INTS)), fn._conditional.not_(_source(BOOLS))
    ints, bools = _pipe(body).run()
    assert [np.asarray(x).dtype for x in ints] == [np.bool_] * BS
    assert [bool(x) for x in ints] == [True, False, True, False]
    assert [bool(x) for x in bools] == [False, True, False, True]
    with pytest.raises(PipelineError, match="one scalar"):
        _pipe(lambda: fn._conditional.not_(_source(ROWS))).run()


@pytest.mark.parametrize("other, message", [(1, "must be of type bool"), (0, "must be of type bool"),
                                            (1.0, "must be of type bool"), ([True], "one scalar"),
                                            (np.uint8(1), "must be of type bool")])
@pytest.mark.parametrize("op", ["and", "or"])
def test_a_python_right_operand_is_checked_as_a_constant(op, other, message):
    """DALI 2.4 makes a constant of a Python right operand and checks it as any operand: `node and 1`
    fails when the pipeline runs (RuntimeError: an int32 operand), as `node and [True]` does (1-d).
    Before, torch_dali took bool(other)."""
    def body():
        a = _source(BOOLS)
        return (a and other) if op == "and" else (a or other)
    with pytest.raises(PipelineError, match=message):
        _pipe(body).run()


def test_python_bool_right_operands():
    """`node and True` / `node or np.array(False)`: the bool constant, as in DALI 2.4."""
    def body():
        a = _source(BOOLS)
        return a and True, a or np.array(False), a and np.array(False)
    both, either, never = _pipe(body).run()
    assert [bool(x) for x in both] == [True, False, True, False]
    assert [bool(x) for x in either] == [True, False, True, False]
    assert [bool(x) for x in never] == [False] * BS
