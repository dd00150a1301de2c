"""`enable_conditionals=True`: `if`/`elif`/`else`, `and`/`or`/`not` and `x if c else y` on
DataNodes give, per sample, what the same function gives on that sample's values (the check DALI's
own tests make), including helpers the definition calls and attributes assigned in branches."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import GraphError
from torch_dali.pipeline import do_not_convert
from torch_dali.types import SampleInfo

BS = 8


def _check(function, gens):
    """Runs `function` as a conditional pipeline over external sources, and sample by sample in
    Python, and compares (DALI's generic_execute)."""
    inputs = [fn.external_source(name=f"in{i}") for i in range(len(gens))]
    pipe = pipeline_def(enable_conditionals=True)(function)(*inputs, batch_size=BS, num_threads=2, device_id=None)
    for it in range(2):
        batches = [[g(SampleInfo(BS * it + i, i, it, 0)) for i in range(BS)] for g in gens]
        for i, b in enumerate(batches):
            pipe.feed_input(f"in{i}", b)
        outs = pipe.run()
        want = [function(*x) for x in zip(*batches)]
        want = [w if isinstance(w, tuple) else (w,) for w in want]
        for k, o in enumerate(outs):
            assert [np.asarray(o[i]).tolist() for i in range(BS)] == [np.asarray(w[k]).tolist() for w in want]


NUM = lambda x: np.int32(x.idx_in_batch - 3)  # noqa: E731
PRED = [lambda x: np.array(x.idx_in_batch < 3), lambda x: np.array(x.idx_in_batch % 2 == 0),
        lambda x: np.array(False)]


def test_if_else_with_constants_and_one_sided_assignments():
    def f(n):
        a = np.int32(0)
        b = np.int32(0)
        if n > 0:
            a = -n
        else:
            b = 2 * n
        if n == 0:
            c = np.int32(7)  # set in one branch only, never used after: fine
        return a, b
    _check(f, [NUM])


@pytest.mark.parametrize("p0", PRED)
@pytest.mark.parametrize("p1", PRED[:2])
def test_nested_elif_and_boolean_operators(p0, p1):
    def f(x, p0, p1):
        if p0:
            if p1:
                out = x + 10
            else:
                out = x * -5
        elif p1 and not p0:
            out = x + 3000
        elif p0 or p1:
            out = x - 1
        else:
            out = x
        return out, (x + 1 if p1 else x - 1)
    _check(f, [lambda s: np.array(s.idx_in_epoch), p0, p1])


class _Box:
    def __init__(self) -> None:
        self.a = np.int32(0)


def _helper(n, box):  # called from the definition: rewritten too
    if n > 0:
        box.a = n * 2
    return box.a


def test_helpers_attributes_and_returns_in_both_branches():
    def f(n):
        return _helper(n, _Box()), g(n)

    def g(n):
        if n >= 1:
            return n + 100
        else:
            return n - 100
    _check(f, [NUM])


def test_predicate_of_any_type():
    for t in (bool, np.uint8, np.int64, np.float16, np.float64):
        @pipeline_def(batch_size=BS, num_threads=1, device_id=None, enable_conditionals=True)
        def p():
            pred = fn.external_source(lambda s: np.array(7 if s.idx_in_batch < 4 else 0, dtype=t), batch=False)
            if pred:
                out = types.Constant(np.array(42), device="cpu")
            else:
                out = types.Constant(np.array(0), device="cpu")
            return out
        (o,) = p().run()
        assert [int(np.asarray(o[i])) for i in range(BS)] == [42] * 4 + [0] * 4


def test_errors():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def one_branch():
        if fn.random.coin_flip(dtype=types.BOOL):
            output = fn.random.uniform()
        return output
    with pytest.raises(GraphError, match="'output' must also be initialized in the `else` branch"):
        one_branch()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def one_return():
        if fn.random.coin_flip(dtype=types.BOOL):
            return fn.random.uniform()
    with pytest.raises(GraphError, match="`else` branch must also have a return"):
        one_return()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def non_scalar():
        if fn.random.uniform(shape=[2]):
            out = np.array(1)
        else:
            out = np.array(0)
        return out
    with pytest.raises(RuntimeError, match="scalar"):
        non_scalar().run()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)  # conditionals off: as DALI, a TypeError
    def off():
        if fn.random.coin_flip():
            return np.array(1)
        return np.array(0)
    with pytest.raises(TypeError, match="enable_conditionals"):
        off()


def test_do_not_convert_and_call_time_switch():
    @do_not_convert
    def raw(x):
        if x:  # not rewritten: a DataNode has no truth value here
            return x
        return x

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def p():
        return raw(fn.random.coin_flip())
    with pytest.raises(TypeError):
        p()

    @pipeline_def
    def q(a, b):
        if fn.random.coin_flip(seed=3):
            out = types.Constant(np.array(a), device="cpu")
        else:
            out = types.Constant(np.array(b), device="cpu")
        return out
    (o,) = q(10, enable_conditionals=True, b=4, batch_size=6, num_threads=1, device_id=None).run()
    assert set(int(np.asarray(o[i])) for i in range(6)) <= {10, 4}


def test_lambdas_on_one_line_with_the_same_arguments_keep_their_own_bodies() -> None:
    """The rewriter finds a lambda's source by its line: two lambdas there taking the same
    arguments each keep their own body (the first one's used to serve both), closures included."""
    from torch_dali.conditionals import convert
    y = 10
    f, g = (lambda x: x + 1), (lambda x: x * 2)
    h, k = (lambda x: x - y), (lambda x: x + y)
    assert (convert(f)(3), convert(g)(3)) == (4, 6)
    assert (convert(h)(3), convert(k)(3)) == (-7, 13)


def test_lambdas_on_one_line_calling_a_module_function_keep_their_own_bodies() -> None:
    """CPython 3.11 compiles `np.add(...)` of a module-level import with LOAD_ATTR, and the same
    lambda compiled alone with LOAD_METHOD: the second lambda was taken for the first (found with
    `lambda x: fn.reshape(x, layout=...)` pairs passed to a pipeline)."""
    from torch_dali.conditionals import convert
    f, g = (lambda x: np.add(x, 1)), (lambda x: np.add(x, 2))
    assert (convert(f)(1), convert(g)(1)) == (2, 3)


def test_lambdas_on_one_line_that_cannot_be_told_apart_run_as_they_are() -> None:
    """When no candidate's code is surely the lambda's own (a comprehension reading a closure), it
    runs unconverted, as DALI runs such lambdas, instead of as the first lambda of the line."""
    from torch_dali.conditionals import converted
    y = 1
    f, g = (lambda x: [x + y for _ in range(1)]), (lambda x: [x - y for _ in range(1)])
    assert (converted(f)(3), converted(g)(3)) == ([4], [2])


@pytest.mark.parametrize("nested", [False, True])
def test_a_branch_sees_only_values_meant_for_it(nested):
    """DALI runs a branch on its own samples; here both run on the whole batch, and the values a branch
    reads from before the `if` come to it with the other branch's samples replaced by its own: an
    index the condition guards is never out of range (graph.branch_scope)."""
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        idx = fn.external_source(lambda si: np.int32(si.idx_in_batch), batch=False)
        data = types.Constant(np.int32([10, 20]), device="cpu")
        if nested:
            if idx < 3:
                if idx < 2:
                    out = data[idx]
                else:
                    out = idx * 0 + 99
            else:
                out = idx
        else:
            if idx < 2:
                out = data[idx]
            else:
                out = idx
        return out

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [np.asarray(s).item() for s in out] == ([10, 20, 99, 3] if nested else [10, 20, 2, 3])  # DALI's


def test_a_split_side_sees_only_values_meant_for_it():
    """In place of the other side's samples, a side gets a stand-in made from one of its own samples:
    an index the predicate guards (`data[i]` for i < 2) is never out of range there."""
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        idx = fn.external_source(lambda si: np.int32(si.idx_in_batch), batch=False)
        data = types.Constant(np.int32([10, 20]), device="cpu")
        pred = idx < 2
        t, f = fn._conditional.split(idx, predicate=pred)
        return fn._conditional.merge(data[t], f, predicate=pred)

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [np.asarray(s).item() for s in out] == [10, 20, 2, 3]  # what DALI's `if` gives


def test_a_split_side_s_ops_see_the_shapes_of_its_own_samples():
    """DALI 2.4: `reshape(f, shape=[10, 10, 3])` on split's false side, merged back, gives every sample
    (each side's ops see only that side's samples; stand-ins cut to 1x1xC made the reshape fail)."""
    data = [np.full((10, 10, 3), i, np.int32) for i in range(4)]

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: data)
        pred = fn.external_source(source=lambda: [np.array(i % 2 == 0) for i in range(4)])
        t, f = fn._conditional.split(x, predicate=pred)
        return fn._conditional.merge(t, fn.reshape(f, shape=[10, 10, 3]), predicate=pred)

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [np.asarray(out[i]).tolist() for i in range(4)] == [d.tolist() for d in data]


def test_split_and_merge_called_directly():
    """DALI's `fn._conditional.split`/`merge`: each side's ops give what they give on that side's samples
    alone, and merge puts every sample back in its place; sides whose layouts differ are refused."""
    data = [np.full((2, 3), i, np.int32) for i in range(BS)]

    @pipeline_def(batch_size=BS, num_threads=2, device_id=None)
    def pipe(layout_of_false=None):
        x = fn.external_source(source=lambda: data)
        pred = fn.external_source(source=lambda: [np.array(i % 3 == 0) for i in range(BS)])
        t, f = fn._conditional.split(x, predicate=pred)
        if layout_of_false:
            f = fn.reinterpret(f, layout=layout_of_false)
        return fn._conditional.merge(t * 10, f + 1, predicate=pred)

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [np.asarray(out[i]).tolist() for i in range(BS)] == \
        [(d * 10 if i % 3 == 0 else d + 1).tolist() for i, d in enumerate(data)]
    with pytest.raises(RuntimeError, match="layout"):
        p = pipe(layout_of_false="HW")
        p.build()
        p.run()
