"""constant / zeros / ones / full (+ _like), reshape / reinterpret, cast_like and fn.cast's
conversion, checked against the outputs NVIDIA DALI 2.4 gives on the CPU for the same pipeline
(the expected rows below were printed by DALI)."""
from __future__ import annotations

import numpy as np

from torch_dali import fn, pipeline_def, types


@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def _tensor_ops():
    x = types.Constant(np.arange(12, dtype=np.int16).reshape(3, 4), layout="HW", device="cpu")
    f = types.Constant(np.array([1.5, 2.5, -0.5], np.float32), device="cpu")
    return (fn.zeros(shape=[2, 3]), fn.ones(shape=[2], dtype=types.FLOAT), fn.full(f, shape=[2, 3]),
            fn.zeros_like(x), fn.ones_like(x, dtype=types.UINT8), fn.full_like(x, np.int16(7)),
            fn.reshape(x, shape=[6, -1]), fn.reshape(x, rel_shape=[2, 0.5]), fn.reshape(x, src_dims=[1, 0]),
            fn.reshape(x, shape=[4, 3], layout="AB"), fn.reinterpret(x, dtype=types.UINT8),
            fn.reinterpret(x, rel_shape=[1, -1]), fn.cast_like(f, x), fn.zeros(shape=[2, 3], layout="XY"),
            types.Constant([1, 2, 3], device="cpu"), types.Constant(2.5, shape=[2], device="cpu"),
            types.Constant(np.array([[1, 2]], dtype=np.int64), device="cpu"),
            types.Constant(7, dtype=types.UINT8, device="cpu"))


_R = list(range(12))
DALI = [  # layout, dtype, shape, values
    ("", "int32", (2, 3), [0] * 6), ("", "float32", (2,), [1.0, 1.0]),
    ("", "float32", (2, 3), [1.5, 2.5, -0.5] * 2), ("HW", "int16", (3, 4), [0] * 12),
    ("HW", "uint8", (3, 4), [1] * 12), ("HW", "int16", (3, 4), [7] * 12), ("HW", "int16", (6, 2), _R),
    ("HW", "int16", (6, 2), _R), ("HW", "int16", (4, 3), _R), ("AB", "int16", (4, 3), _R),
    ("HW", "uint8", (3, 8), [v for i in _R for v in (i, 0)]), ("HW", "int16", (3, 4), _R),
    ("", "int16", (3,), [2, 3, -1]), ("XY", "int32", (2, 3), [0] * 6), ("", "int32", (3,), [1, 2, 3]),
    ("", "float32", (2,), [2.5, 2.5]), ("", "int32", (1, 2), [1, 2]), ("", "uint8", (), [7]),
]


def test_tensor_ops_match_dali():
    outs = _tensor_ops().run()
    assert len(outs) == len(DALI)
    for k, (o, (layout, dtype, shape, values)) in enumerate(zip(outs, DALI)):
        a = np.asarray(o.at(0))
        assert (o.layout(), str(a.dtype), a.shape, a.ravel().tolist()) == (layout, dtype, shape, values), k


@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def _casts():
    f = types.Constant(np.array([1e6, -1e6, 70000.5, np.inf, 3.7, -3.5, 300.6, -200.0], np.float32), device="cpu")
    i = types.Constant(np.array([-5, 300, 70000, -70000], np.int32), device="cpu")
    return (fn.cast(f, dtype=types.FLOAT16), fn.cast(f, dtype=types.UINT8), fn.cast(f, dtype=types.INT8),
            fn.cast(i, dtype=types.UINT8), fn.cast(i, dtype=types.INT16), fn.cast(f, dtype=types.INT32),
            fn.cast(i, dtype=types.BOOL), fn.cast(i, dtype=types.UINT32), fn.cast(f, dtype=types.UINT16))


def test_cast_converts_as_dali():
    """Integers saturate, floats round half away from zero and saturate (DALI's values)."""
    inf = float("inf")
    want = [[inf, -inf, inf, inf, 3.69921875, -3.5, 300.5, -200.0], [255, 0, 255, 255, 4, 0, 255, 0],
            [127, -128, 127, 127, 4, -4, 127, -128], [0, 255, 255, 0], [-5, 300, 32767, -32768],
            [1000000, -1000000, 70001, 2147483647, 4, -4, 301, -200], [True, True, True, True],
            [0, 300, 70000, 0], [65535, 0, 65535, 65535, 4, 0, 301, 0]]
    for o, w in zip(_casts().run(), want):
        assert np.asarray(o.at(0)).tolist() == w



def _cast_run(values, src, dst):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return fn.cast(fn.external_source(source=lambda: [np.array(values, src)], batch=True), dtype=dst)
    pipe = p()
    pipe.build()
    return np.asarray(pipe.run()[0].at(0)).tolist()


def test_cast_to_bool_rounds_floats_and_uint64_saturates_as_dali():
    """DALI 2.4's CPU values (found by probing fn.cast beyond test_dali_cpu_only.py, 2026-12-05): a
    float is rounded before the test against 0 (|x| < 0.5 is False); uint64 saturates both ways
    (2**64 and above, inf included, is the maximum; a uint64 of 2**63 or more is above every other
    integer type's maximum)."""
    small = [0.3, -0.3, 0.5, -0.5, 0.49, -0.49, 1e-30, 0.0, 2.0, float("inf")]
    bools = [False, False, True, True, False, False, False, False, True, True]
    for src in (np.float32, np.float64, np.float16):
        assert _cast_run(small, src, types.BOOL) == bools, src
    big = [1e19, 3e19, 1.8e19, float("inf"), -1.0, 2.0 ** 63, 2.0 ** 64]
    want = [9999999980506447872, 2 ** 64 - 1, 18000000404716257280, 2 ** 64 - 1, 0, 2 ** 63, 2 ** 64 - 1]
    assert _cast_run(big, np.float32, types.UINT64) == want
    assert _cast_run(big, np.float64, types.UINT64) == [10 ** 19] + want[1:2] + [18 * 10 ** 18] + want[3:]
    u = [2 ** 64 - 1, 2 ** 63, 5, 300]
    assert _cast_run(u, np.uint64, types.INT64) == [2 ** 63 - 1, 2 ** 63 - 1, 5, 300]
    assert _cast_run(u, np.uint64, types.UINT8) == [255, 255, 5, 255]
    assert _cast_run(u, np.uint64, types.INT32) == [2 ** 31 - 1, 2 ** 31 - 1, 5, 300]
    assert _cast_run(u, np.uint64, types.UINT32) == [2 ** 32 - 1, 2 ** 32 - 1, 5, 300]

def test_reshape_refuses_a_wrong_volume():
    import pytest
    from torch_dali.errors import PipelineError

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return fn.reshape(types.Constant(np.zeros((3, 4), np.int16), device="cpu"), shape=[5, 2])

    with pytest.raises(PipelineError, match="cannot reshape"):
        p().run()


#: (fill shape, output shape or like-input, DALI 2.4's CPU output values; None: DALI refuses it)
_FITS = [((2, 3), (), [0]), ((2, 3), (3,), [0, 1, 2]), ((2, 3), (1, 3), [0, 1, 2]), ((2, 3), (2, 1), [0, 1]),
         ((2, 3), (5, 2, 3), list(range(6)) * 5), ((2, 3), (1,), [0]), ((3, 4), (3, 1), [0, 1, 2]),
         ((2, 3, 4), (2, 1, 4), list(range(8))), ((2, 3, 4), (2, 3, 1), list(range(6))),
         ((2, 3, 4), (2, 1, 1), [0, 1]), ((2, 3, 4), (3, 1), [0, 1, 2]), ((3, 1), (3, 5), [0] * 5 + [1] * 5 + [2] * 5),
         ((4, 3), (2, 4, 1), [0, 1, 2, 3] * 2), ((2, 3, 4), (2, 2, 1, 4), [0, 1, 2, 3, 4, 5, 6, 7] * 2),
         ((2, 3), (4, 3), None), ((2, 3), (4,), None), ((2, 3), (3, 2), None)]


def _fit_pipe(fill_shape, shape, like: bool):
    fill = np.arange(int(np.prod(fill_shape)), dtype=np.float32).reshape(fill_shape)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        f = fn.external_source(source=lambda: [fill], batch=True)
        if like:
            return fn.full_like(fn.external_source(source=lambda: [np.zeros(shape, np.float32)], batch=True), f)
        return fn.full(f, shape=list(shape))
    p = pipe()
    p.build()
    return p


def test_full_and_full_like_fit_a_fill_value_as_dali():
    """Sizes matched from the last dimension; 1 on either side fits; DALI reads the fill's first
    values in order for the reduced shape (so (2, 3) into (2, 1) gives 0, 1)."""
    import pytest
    for fill_shape, shape, want in _FITS:
        for like in (False, True):
            p = _fit_pipe(fill_shape, shape, like)
            if want is None:
                with pytest.raises(RuntimeError, match="does not fit"):
                    p.run()
                continue
            a = np.asarray(p.run()[0].at(0))
            assert a.shape == shape and a.ravel().tolist() == want, (fill_shape, shape, like)


def test_full_like_takes_the_inputs_type_converting_the_fill_as_dali():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = types.Constant(np.zeros((2, 3), np.int32), device="cpu")
        u = types.Constant(np.zeros((2, 3), np.uint8), device="cpu")
        f = types.Constant(np.array([1.5, 2.5, 3.5], np.float32), device="cpu")
        g = types.Constant(np.array([-1.5, 255.5, 300.0], np.float32), device="cpu")
        return fn.full_like(x, f), fn.full_like(u, g), fn.full_like(fn.cast(x, dtype=types.FLOAT), np.int64(3))
    a, b, c = (np.asarray(o.at(0)) for o in pipe().run())
    assert (str(a.dtype), a.ravel().tolist()) == ("int32", [2, 3, 4] * 2)
    assert (str(b.dtype), b.ravel().tolist()) == ("uint8", [0, 255, 255] * 2)
    assert (str(c.dtype), c.ravel().tolist()) == ("float32", [3.0] * 6)


def test_an_op_with_several_outputs_returns_a_list_as_dali():
    """DALI gives a list (code appends to it or tests isinstance(list)); one output is the node."""
    seen = {}

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        boxes = types.Constant(np.array([[0.1, 0.1, 0.5, 0.5]], np.float32), device="cpu")
        out = fn.random_bbox_crop(boxes, bbox_layout="xyXY")
        seen["several"], seen["one"] = out, fn.cast(boxes, dtype=types.FLOAT16)
        return out[0]
    pipe().build()
    assert type(seen["several"]) is list and len(seen["several"]) == 3
    assert not isinstance(seen["one"], (list, tuple))
