"""Arithmetic on DataNodes with DALI 2.4's semantics: type promotion (DALI's, not NumPy's or
torch's), `/` `//` `%` `**` on integers, comparisons, bitwise ops and shifts, `nvidia.dali.math`'s
functions, typed constants, refusals, broadcasting and layouts. Expected values were printed by
DALI for the same expressions on the CPU."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.math as dmath
from torch_dali import fn, pipeline_def, types
from torch_dali.errors import PipelineError
from torch_dali.pipeline import DataNode


def _run(make):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return make()
    return p().run()


def _operands():
    x = types.Constant(np.array([[200, 7, 9]], dtype=np.uint8), device="cpu")
    f = types.Constant(np.array([-7.5, 7.5, 2.0], dtype=np.float32), device="cpu")
    u64 = fn.cast(types.Constant(np.array([2**62 + 5, 3, 1], dtype=np.int64), dtype=types.INT64, device="cpu"),
                  dtype=types.UINT64)
    i = types.Constant(np.array([-7, 7, 3], dtype=np.int32), device="cpu")
    return x, f, u64, i


def test_expressions_match_dali():
    def make():
        x, f, u64, i = _operands()
        return (x + 1, x / 255, f // 2, x * 2.5, -x, i // 2, i % 2, i % -2, dmath.sqrt(x), abs(i), u64 // 2,
                u64 > 3, ~x, dmath.clamp(i, 0.5, 5), x == 200, i ** -1, dmath.fpow(i, 2), x + True, f % 2,
                dmath.abs(f), -u64, u64 + i, f // 0, x << 9, i >> 1, dmath.min(x, i), x ** 2,
                dmath.atan2(i, x), i / 0)
    want = [  # (dtype, values) as DALI 2.4 gives them
        ("int32", [[201, 8, 10]]), ("float32", [[0.7843137383460999, 0.027450980618596077, 0.03529411926865578]]),
        ("float32", [-3.75, 3.75, 1.0]), ("float32", [[500.0, 17.5, 22.5]]), ("uint8", [[56, 249, 247]]),
        ("int32", [-3, 3, 1]), ("int32", [-1, 1, 1]), ("int32", [-1, 1, 1]),
        ("float32", [[14.142135620117188, 2.6457512378692627, 3.0]]), ("int32", [7, 7, 3]),
        ("int64", [2305843009213693954, 1, 0]), ("bool", [True, False, False]), ("uint8", [[55, 248, 246]]),
        ("float32", [0.5, 5.0, 3.0]), ("bool", [[True, False, False]]), ("int32", [0, 0, 0]),
        ("float32", [49.0, 49.0, 9.0]), ("uint8", [[201, 8, 10]]), ("float32", [-1.5, 1.5, 0.0]),
        ("float32", [7.5, 7.5, 2.0]), ("uint64", [13835058055282163707, 18446744073709551613, 18446744073709551615]),
        ("int64", [4611686018427387902, 10, 4]), ("float32", [-np.inf, np.inf, np.inf]),
        ("int32", [[102400, 3584, 4608]]), ("int32", [-4, 3, 1]), ("int32", [[-7, 7, 3]]),
        ("int32", [[40000, 49, 81]]), ("float32", [[-0.03498571738600731, 0.7853981852531433, 0.32175055146217346]]),
        ("float32", [-np.inf, np.inf, np.inf]),
    ]
    outs = _run(make)
    assert len(outs) == len(want)
    for k, (o, (dtype, values)) in enumerate(zip(outs, want)):
        a = np.asarray(o.at(0))
        assert str(a.dtype) == dtype, k
        np.testing.assert_allclose(a, np.array(values, dtype=a.dtype), rtol=1e-6, err_msg=str(k))


def test_signed_with_unsigned_promotes_to_twice_the_unsigned_width():
    def make():
        i = types.Constant(np.array([-7, 7, 3], dtype=np.int32), device="cpu")
        i8 = types.Constant(np.array([-7, 7, 3], dtype=np.int8), device="cpu")
        return i + types.Constant(1, types.UINT32), i8 * np.uint8(200), i8 < types.Constant(3, types.UINT16)
    got = [(str(np.asarray(o.at(0)).dtype), np.asarray(o.at(0)).tolist()) for o in _run(make)]
    assert got == [("int64", [-6, 8, 4]), ("int16", [-1400, 1400, 600]), ("bool", [True, False, False])]  # DALI's


def test_typed_constants_take_part_in_promotion():
    def make():
        x = types.Constant(np.array([1, 2], dtype=np.uint8), device="cpu")
        return x + types.Constant(3, types.UINT8), x + np.uint16(3), x * types.Constant(2.0, types.FLOAT64)
    a, b, c = (np.asarray(o.at(0)) for o in _run(make))
    assert a.dtype == np.uint8 and b.dtype == np.uint16 and c.dtype == np.float64
    assert a.tolist() == [4, 5] and c.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("make,msg", [
    (lambda b: b + b, "cannot be booleans"), (lambda b: -b, "cannot be a boolean"),
    (lambda b: dmath.sqrt(b), "cannot be a boolean"),
    (lambda b: fn.cast(b, dtype=types.FLOAT) & 1, "must be of integral type"),
])
def test_refusals(make, msg):
    with pytest.raises(PipelineError, match=msg):
        _run(lambda: make(types.Constant(np.array([True, False]), device="cpu")))


def test_bool_inputs_that_dali_allows():
    outs = _run(lambda: (lambda b: (b * b, b & b, b << b, ~b, +b))(types.Constant(np.array([True, False]),
                                                                                     device="cpu")))
    assert [np.asarray(o.at(0)).tolist() for o in outs] == [[True, False], [True, False], [True, False],
                                                            [False, True], [True, False]]


def test_comparisons_make_nodes_and_nodes_have_no_truth_value():
    outs = _run(lambda: (lambda x: (x < 2, x == 2, 2 > x))(types.Constant(np.array([1, 2, 3]), device="cpu")))
    assert [np.asarray(o.at(0)).tolist() for o in outs] == [[True, False, False], [False, True, False],
                                                            [True, False, False]]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.random.uniform()
        return x if bool(x) else x
    with pytest.raises(TypeError, match="no truth value"):
        p()


@pytest.mark.parametrize("layouts,out", [
    (("ABCD", "CD"), "ABCD"), (("D", "ABCD"), "ABCD"), ((4, "C"), ""), (("C", 1), "C"), ((0, "C"), "C"),
    (("ABCD", "ABC"), None), (("X", "ABCD"), None),
])
def test_layout_broadcasting(layouts, out):
    """The output has the layout of the inputs with the most dimensions; layouts must agree as
    suffixes (an int is a number of dimensions with no layout), as in DALI."""
    def desc(d):
        ndim, lay = (d, None) if isinstance(d, int) else (len(d), d)
        return np.ones((5, 7, 11, 13)[4 - ndim:], np.float32), lay

    def make():
        a, b = (types.Constant(v, device="cpu", layout=lay) for v, lay in map(desc, layouts))
        return a + b

    if out is None:
        with pytest.raises(PipelineError, match="suffix"):
            _run(make)
        return
    (o,) = _run(make)
    assert o.layout() == out and o.shape() == [(5, 7, 11, 13)[4 - max(len(desc(d)[0].shape) for d in layouts):]]


def test_broadcasting_samples_and_nested_node_lists():
    (o,) = _run(lambda: types.Constant(np.ones((2, 1, 3), np.int32), device="cpu")
                + types.Constant(np.arange(4, dtype=np.int32).reshape(4, 1), device="cpu"))
    assert o.shape() == [(2, 4, 3)]
    with pytest.raises(TypeError, match="nested DataNode"):
        _run(lambda: (lambda u, v: u + [v])(fn.random.uniform(), fn.random.uniform()))


def test_datanode_is_importable_from_dali_paths():
    import torch_dali.data_node as dn
    import torch_dali.ops as ops
    assert dn.DataNode is DataNode and ops._DataNode is DataNode
