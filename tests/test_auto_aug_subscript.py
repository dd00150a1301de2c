"""DataNode subscripts (`node[k]`, `node[lo:hi:step]`, `node[per_sample_index]`), which the
automatic augmentations index their parameter tables and random draws with: NumPy's indexing is
the reference for values and shapes (DALI 2.4's `_tensor_subscript` gives NumPy's results; the
layout rules and the errors below are DALI's, as observed in its CPU backend)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import torch_dali as td
from torch_dali import fn, pipeline_def, types
from torch_dali.errors import PipelineError

X = np.arange(5 * 4 * 3, dtype=np.int32).reshape(5, 4, 3)
IDX = [0, 3, -1, 2]


def samples(dense: bool) -> list[np.ndarray]:
    """Four samples: X each (given as one constant, a batch held as one tensor: the batched path),
    or (ragged) X with its first k rows appended, + k."""
    return [X if dense else np.concatenate([X, X[:k]]) + k for k in range(4)]


def run(f: Callable[[Any, Any], Any], layout: str = "HWC", dense: bool = True) -> tuple[list[np.ndarray], str]:
    batch = samples(dense)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        x = types.Constant(X, layout=layout, device="cpu") if dense else \
            fn.external_source(source=lambda: batch, batch=True, layout=layout)
        i = fn.external_source(source=lambda: [np.int32(v) for v in IDX], batch=True)
        return f(x, i)

    p = pipe()
    p.build()
    out, = p.run()
    return [np.asarray(out.at(k)) for k in range(4)], out.layout()


CASES = {  # DataNode expression -> (NumPy expression on sample k, output layout)
    "x[1]": (lambda x, i: x[1], lambda s, k: s[1], "WC"),
    "x[-1, 2]": (lambda x, i: x[-1, 2], lambda s, k: s[-1, 2], "C"),
    "x[:, 1:3]": (lambda x, i: x[:, 1:3], lambda s, k: s[:, 1:3], "HWC"),
    "x[0:10]": (lambda x, i: x[0:10], lambda s, k: s[0:10], "HWC"),
    "x[::-1]": (lambda x, i: x[::-1], lambda s, k: s[::-1], "HWC"),
    "x[4:1:-2, ::2]": (lambda x, i: x[4:1:-2, ::2], lambda s, k: s[4:1:-2, ::2], "HWC"),
    "x[3:1]": (lambda x, i: x[3:1], lambda s, k: s[3:1], "HWC"),
    # a negative step whose start is before its end: empty, as in NumPy and DALI 2.4 (shape [0, 4, 3]
    # for x[0:1:-1] of these samples); torch.arange refused these bounds. (DALI 2.4 fails x[1:3:-2]
    # on a negative buffer size; empty here, see conformance/on_purpose.md)
    "x[0:1:-1]": (lambda x, i: x[0:1:-1], lambda s, k: s[0:1:-1], "HWC"),
    "x[:, 0:3:-1]": (lambda x, i: x[:, 0:3:-1], lambda s, k: s[:, 0:3:-1], "HWC"),
    "x[1:3:-2]": (lambda x, i: x[1:3:-2], lambda s, k: s[1:3:-2], "HWC"),
    "x[i:4:-1]": (lambda x, i: x[i:4:-1], lambda s, k: s[IDX[k]:4:-1], "HWC"),
    "x[i]": (lambda x, i: x[i], lambda s, k: s[IDX[k]], "WC"),
    "x[1, i]": (lambda x, i: x[1, i], lambda s, k: s[1, IDX[k]], "C"),
    "x[i + 1:]": (lambda x, i: x[i + 1:], lambda s, k: s[IDX[k] + 1:], "HWC"),
    "x[None, 2]": (lambda x, i: x[None, 2], lambda s, k: s[:, 2], "HC"),  # None is a full slice in DALI
    "x[:, :]": (lambda x, i: x[:, :], lambda s, k: s, "HWC"),
    "shape[1]": (lambda x, i: x.shape()[1], lambda s, k: np.int64(s.shape[1]), ""),
    "x[np.int64(2)]": (lambda x, i: x[np.int64(2)], lambda s, k: s[2], "WC"),
    "x[Constant(-2)]": (lambda x, i: x[types.Constant(np.int32(-2))], lambda s, k: s[-2], "WC"),
}


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "ragged"])
@pytest.mark.parametrize("case", list(CASES))
def test_subscript_as_numpy(case: str, dense: bool) -> None:
    ours, numpy_ref, layout = CASES[case]
    got, got_layout = run(ours, dense=dense)
    batch = samples(dense)
    for k, (g, s) in enumerate(zip(got, batch)):
        want = numpy_ref(s, k)
        assert g.shape == np.shape(want) and np.array_equal(g, want), (case, k)
        assert g.dtype == np.asarray(want).dtype
    assert got_layout == layout


def test_a_per_sample_index_into_a_constant_table() -> None:
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    got, layout = run(lambda x, i: types.Constant(table)[i])
    assert [g.tolist() for g in got] == [table[v].tolist() for v in IDX] and layout == ""


@pytest.mark.parametrize("expr, message", [
    (lambda x, i: x[5], "index 5 is out of range for dimension 0 of length 5"),
    (lambda x, i: x[-6], "index -6 is out of range"),
    (lambda x, i: x[1, 2, 3, 0], "too many indices \\(4\\) for a 3-D tensor"),
    (lambda x, i: x[:, :, :, :], "too many indices \\(4\\) for a 3-D tensor"),
    (lambda x, i: x[::0], "step of a slice cannot be zero"),
    (lambda x, i: x[i * 3], "out of range"),
])
def test_errors(expr: Callable[[Any, Any], Any], message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        run(expr)


def test_index_types() -> None:
    with pytest.raises(TypeError, match="invalid index type float"):
        run(lambda x, i: x[1.5])
    with pytest.raises(NotImplementedError, match="Ellipsis"):
        run(lambda x, i: x[..., 1])
    with pytest.raises(TypeError, match="not iterable"):  # not a sequence: no endless x[0], x[1], ...
        run(lambda x, i: list(x))


@pytest.mark.parametrize("f,ref,layout", [
    (lambda x: x[1:, td.newaxis, :2], lambda a: a[1:, np.newaxis, :2], ""),
    (lambda x: x[td.newaxis("N"), -1:, :-2], lambda a: a[np.newaxis, -1:, :-2], "NHWC"),
    (lambda x: x[:, td.newaxis("N"), :], lambda a: a[:, np.newaxis, :], "HNWC"),
    (lambda x: x[1, td.newaxis("N"), 1], lambda a: a[1, np.newaxis, 1], "NC"),
])
def test_newaxis_inserts_a_dimension_named_or_not(f, ref, layout):
    """`dali.newaxis` (DALI 2.4 lowers it to expand_dims after the subscript): NumPy's values and
    shapes; a named axis joins the layout, an unnamed one clears it (layouts as DALI gives them)."""
    outs, got_layout = run(lambda x, i: f(x))
    assert got_layout == layout
    for o in outs:
        np.testing.assert_array_equal(o, ref(X))


def test_subscript_of_a_node_made_outside_the_pipeline():
    """DALI code makes a source before the pipeline and indexes it inside (the node is copied in)."""
    src = fn.external_source(source=lambda: [X, X + 1])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe(s):
        return s[1, ::2], s[1, ::2]

    p = pipe(src)
    p.build()
    a, b = p.run()
    np.testing.assert_array_equal(np.asarray(a.at(1)), (X + 1)[1, ::2])
    np.testing.assert_array_equal(np.asarray(b.at(0)), X[1, ::2])


@pytest.mark.parametrize("values, expr, message", [
    ([np.float32(v) for v in IDX], lambda x, i: x[i], "`at_0` must be of an integer type, got float32"),
    ([np.float64(1)] * 4, lambda x, i: x[:i], "`hi_0` must be of an integer type, got float64"),
    ([np.bool_(True)] * 4, lambda x, i: x[i], "`at_0` must be of an integer type, got bool"),
    ([np.array([v], np.int32) for v in IDX], lambda x, i: x[i], "`at_0` must be a scalar"),
    ([np.array([1], np.int64)] * 4, lambda x, i: x[i:], "`lo_0` must be a scalar"),
])
def test_per_sample_indices_are_integer_scalars(values, expr, message):
    """DALI 2.4 refuses per-sample subscripts of a float or bool type and 1-element 1-D ones when
    the pipeline runs (RuntimeError); torch_dali read them as the number they hold."""
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        x = types.Constant(X, device="cpu")
        return expr(x, fn.external_source(source=lambda: values, batch=True))
    with pytest.raises(PipelineError, match=message) as info:
        pipe().run()
    assert isinstance(info.value, RuntimeError)
