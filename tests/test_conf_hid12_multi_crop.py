"""torch_dali.experimental.multi_crop: N slices of one sample, stacked or as a list (the helper DALI
added after 2.4; the expected values are those of fn.slice + fn.stack, measured with DALI 2.4's CPU
backend on the same image)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.experimental.multi_crop import multi_crop
from torch_dali.pipeline import Pipeline

IMAGE = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)


def _run(**kw):
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        src = fn.external_source(source=lambda: IMAGE, batch=False, layout="HWC")
        out = multi_crop(src, **kw)
        pipe.set_outputs(*(out if isinstance(out, list) else [out]))
    pipe.build()
    return pipe.run()


def test_stacked_absolute_crops_are_the_slices_along_a_new_outer_axis():
    anchors = [(0, 0), (2, 4), (1, 3)]
    (out,) = _run(anchors=anchors, crop=(4, 4))
    assert out.layout() == ""  # fn.stack without axis_name, as DALI 2.4
    for s in range(2):
        arr = np.asarray(out.at(s))
        assert arr.shape == (3, 4, 4, 3)
        for i, (y, x) in enumerate(anchors):
            np.testing.assert_array_equal(arr[i], IMAGE[y:y + 4, x:x + 4])


def test_list_output_keeps_each_slice_and_forwards_padding():
    outs = _run(anchors=[(0, 0), (3, 5)], crop=(4, 4), stack=False, out_of_bounds_policy="pad", fill_values=7)
    assert len(outs) == 2 and outs[1].layout() == "HWC"
    padded = np.asarray(outs[1].at(0))
    ref = np.full((4, 4, 3), 7, np.uint8)
    ref[:3, :3] = IMAGE[3:6, 5:8]
    np.testing.assert_array_equal(padded, ref)
    np.testing.assert_array_equal(np.asarray(outs[0].at(1)), IMAGE[:4, :4])


def test_relative_anchors_and_crop():
    (out,) = _run(rel_anchors=[(0.0, 0.0), (0.5, 0.5)], rel_crop=(0.5, 0.5))
    arr = np.asarray(out.at(0))
    assert arr.shape == (2, 3, 4, 3)
    np.testing.assert_array_equal(arr[0], IMAGE[:3, :4])
    np.testing.assert_array_equal(arr[1], IMAGE[3:, 4:])


@pytest.mark.parametrize("kw, fact", [
    ({}, "exactly one of"),
    ({"anchors": [(0, 0)], "rel_anchors": [(0.0, 0.0)], "crop": (1, 1)}, "exactly one of"),
    ({"anchors": [(0, 0)]}, "`crop`"),
    ({"rel_anchors": [(0.0, 0.0)]}, "`rel_crop`"),
    ({"anchors": [], "crop": (8, 8)}, "at least one anchor"),
])
def test_bad_arguments_are_value_errors_before_any_op(kw, fact):
    with pytest.raises(ValueError, match=fact):
        multi_crop(None, **kw)
