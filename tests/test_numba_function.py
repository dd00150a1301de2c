"""fn.experimental.numba_function / nvidia.dali.plugin.numba (CPU). The expected values are what
DALI 2.4's CPU NumbaFunction gives for the same calls (measured: its own test file and the
docs notebook's rotate / RGB-split pipelines give identical arrays under both)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from torch_dali import fn, pipeline_def, types  # noqa: E402
from torch_dali.graph.pipeline_def import do_not_convert  # noqa: E402
from torch_dali.plugin.numba.fn.experimental import numba_function  # noqa: E402

U8 = types.UINT8


def _images():
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, s, dtype=np.uint8) for s in [(3, 5, 3), (6, 2, 3), (4, 4, 3)]]


def _run(body, batch_size=3, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, **kw)
    def pipe():
        return body()
    p = pipe()
    p.build()
    return p.run()


def _src(data):
    return fn.external_source(lambda: data, batch=True)


# run functions (module level, as numba compiles them)
def invert(out0, in0):
    out0[:] = 255 - in0[:]


def rot_batch(out0, in0):
    for out_sample, in_sample in zip(out0, in0):
        for i in range(out_sample.shape[0]):
            for j in range(out_sample.shape[1]):
                out_sample[i][j] = in_sample[j][out_sample.shape[0] - i - 1]


def rot_setup(outs, ins):
    for s in range(len(outs[0])):
        outs[0][s][0] = ins[0][s][1]
        outs[0][s][1] = ins[0][s][0]
        outs[0][s][2] = ins[0][s][2]


def split_setup(outs, ins):
    for k in range(len(outs)):
        for s in range(len(outs[k])):
            outs[k][s][0] = ins[0][s][0]
            outs[k][s][1] = ins[0][s][1]


def split_run(r, g, b, img):
    r[:] = img[:, :, 0]
    g[:] = img[:, :, 1]
    b[:] = img[:, :, 2]


def shape_setup(outs, ins):
    for s in range(len(outs[0])):
        for d in range(3):
            outs[0][s][d] = ins[0][s][d]
        outs[1][s][0] = 3


def invert_and_shape(out_img, out_shape, in_img):
    out_img[:] = 255 - in_img[:]
    out_shape[:] = out_img.shape


def sum3(out0, a, b, c):
    out0[:] = a + b + c


def negative_setup(outs, ins):
    for s in range(len(outs[0])):
        outs[0][s][0] = -1


def writes_input(out0, in0):
    in0[:] = 0


def not_nopython(out0, in0):
    out0[:] = object()


def test_per_sample_keeps_each_inputs_shape_and_drops_the_layout():
    imgs = _images()
    (out,) = _run(lambda: numba_function(fn.external_source(lambda: imgs, batch=True, layout="HWC"),
                                         run_fn=invert, out_types=[U8], in_types=[U8], outs_ndim=[3], ins_ndim=[3]))
    assert out.layout() == "" and out.dtype == types.UINT8
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(out.at(i), 255 - img)


def test_batch_processing_with_setup_rotates_ragged_images():
    imgs = _images()
    (out,) = _run(lambda: numba_function(_src(imgs), run_fn=rot_batch, setup_fn=rot_setup, out_types=[U8],
                                         in_types=[U8], outs_ndim=[3], ins_ndim=[3], batch_processing=True))
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(out.at(i), np.rot90(img))


def test_several_outputs_of_different_types_and_ranks():
    imgs = _images()
    r, g, b = _run(lambda: numba_function(_src(imgs), run_fn=split_run, setup_fn=split_setup, out_types=[U8] * 3,
                                          in_types=[U8], outs_ndim=[2, 2, 2], ins_ndim=[3]))
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(np.stack([r.at(i), g.at(i), b.at(i)], axis=2), img)
    img_out, shape = _run(lambda: numba_function(_src(imgs), run_fn=invert_and_shape, setup_fn=shape_setup,
                                                 out_types=[U8, types.INT64], in_types=[U8],
                                                 outs_ndim=[3, 1], ins_ndim=[3]))
    assert shape.dtype == types.INT64
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(img_out.at(i), 255 - img)
        np.testing.assert_array_equal(shape.at(i), img.shape)


def test_several_inputs():
    data = [np.full((2, 3), k, np.int32) for k in (1, 2)]
    (out,) = _run(lambda: numba_function(_src(data), _src(data), _src(data), run_fn=sum3, setup_fn=split_setup,
                                         out_types=[types.INT32], in_types=[types.INT32] * 3,
                                         outs_ndim=[2], ins_ndim=[2] * 3), batch_size=2)
    np.testing.assert_array_equal(out.at(1), np.full((2, 3), 6, np.int32))


def test_conditionals_leave_the_functions_alone():
    imgs = _images()
    (out,) = _run(lambda: numba_function(_src(imgs), run_fn=do_not_convert(invert), out_types=[U8],
                                         in_types=[U8], outs_ndim=[3], ins_ndim=[3]), enable_conditionals=True)
    np.testing.assert_array_equal(out.at(0), 255 - imgs[0])


def test_the_plugin_names_are_dalis():
    from torch_dali.plugin import numba as plugin
    from torch_dali.plugin.numba import experimental
    from torch_dali.plugin.numba import fn as plugin_fn
    assert plugin_fn.numba_function is numba_function is fn.experimental.numba_function
    assert experimental.NumbaFunction is plugin.NumbaFunction
    assert plugin.NumbaFunction.__name__ == "NumbaFunction"


@pytest.mark.parametrize("kw,exc,words", [
    # the data does not match the declared input
    (dict(in_types=[types.INT32], out_types=[types.INT32]), RuntimeError, "in_types"),
    (dict(ins_ndim=[2], outs_ndim=[2]), RuntimeError, "ins_ndim"),
    # without setup_fn the outputs are their inputs' shape and type
    (dict(out_types=[types.INT32]), ValueError, "setup_fn"),
    (dict(outs_ndim=[2]), ValueError, "setup_fn"),
    (dict(out_types=[U8, U8], outs_ndim=[3, 3]), ValueError, "setup_fn"),
    (dict(out_types=[U8], outs_ndim=[3, 3]), ValueError, "outs_ndim"),
    (dict(in_types=[types.FLOAT16], out_types=[types.FLOAT16]), ValueError, "float16"),
    (dict(setup_fn=negative_setup), RuntimeError, ">= 0"),
    (dict(device="gpu"), ValueError, "device"),
])
def test_refusals(kw, exc, words):
    args = {**dict(run_fn=invert, out_types=[U8], in_types=[U8], outs_ndim=[3], ins_ndim=[3]), **kw}
    with pytest.raises(exc, match=words):
        _run(lambda: numba_function(_src(_images()), **args))


def test_functions_numba_cannot_compile_are_refused_at_build():
    args = dict(out_types=[U8], in_types=[U8], outs_ndim=[3], ins_ndim=[3])
    for bad in (not_nopython, writes_input):  # inputs are read-only to the function
        with pytest.raises(ValueError, match=f"could not compile `run_fn` \\({bad.__name__}\\)"):
            _run(lambda: numba_function(_src(_images()), run_fn=bad, **args))


def test_without_numba_building_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(ImportError, match=r"torch_dali\[numba\]"):
        _run(lambda: numba_function(_src(_images()), run_fn=invert, out_types=[U8], in_types=[U8],
                                    outs_ndim=[3], ins_ndim=[3]))


def replace_entry(outs, ins):
    outs[0] = ins[0]  # replaces the list's entry: the shapes written stay as they were (DALI alike)


def shapes_as_rows(outs, ins):
    for s in range(len(outs[0])):
        outs[0][s][:] = [2, ins[0][s][0]]


def fill7(out0, in0):
    out0[:] = 7


def test_setup_fn_gets_lists_of_shapes_as_dali():
    """DALI hands setup_fn lists (one entry per output / input, each holding every sample's
    shape): assigning a list entry compiles and changes no shape; rows take lists."""
    data = [np.zeros((4,), np.int32), np.zeros((6,), np.int32)]
    (o,) = _run(lambda: numba_function(_src(data), run_fn=fill7, setup_fn=replace_entry, out_types=[types.INT32],
                                       in_types=[types.INT32], outs_ndim=[1], ins_ndim=[1]), batch_size=2)
    assert [np.asarray(o.at(i)).shape for i in range(2)] == [(0,), (0,)]
    (o,) = _run(lambda: numba_function(_src(data), run_fn=fill7, setup_fn=shapes_as_rows, out_types=[types.INT32],
                                       in_types=[types.INT32], outs_ndim=[2], ins_ndim=[1]), batch_size=2)
    assert [np.asarray(o.at(i)).tolist() for i in range(2)] == [[[7] * 4] * 2, [[7] * 6] * 2]


def test_dalis_gpu_variant_checks_say_no():
    from torch_dali.plugin.numba import NumbaFunction
    from torch_dali.plugin.numba.experimental import NumbaFunction as Experimental
    for cls in (NumbaFunction, Experimental):
        assert cls._check_minimal_numba_version(False) is False and cls._check_cuda_compatibility(False) is False
        with pytest.raises(RuntimeError, match="GPU"):
            cls._check_cuda_compatibility()
