"""Geometry reference cases, part 2: erase, pad, slice, paste, random crop windows, decoders,
resize_crop_mirror, multi_paste (see geometry_cases.py)."""
from __future__ import annotations

import numpy as np

from .geometry_cases import IMG, IMG2, IMG_I16, VOL, Case, f32


# -- erase, pad, slice, paste -----------------------------------------------------------------------------

RAMP = (np.arange(5 * 7, dtype=np.uint8).reshape(5, 7, 1) + 1).repeat(3, -1)
RAMP_F = RAMP.astype(np.float32) * 10 - 20


def _region_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    er = {
        "trunc": dict(anchor=[1.7, 2.2], shape=[1.6, 2.5]),
        "negative": dict(anchor=[-1.5, 4.5], shape=[3.0, 9.0]),
        "normalized": dict(anchor=[0.2, 0.3], shape=[0.5, 0.5], normalized=True, fill_value=[99.0]),
        "centered_rgb": dict(anchor=[2, 3], shape=[2, 2], centered_anchor=True, fill_value=[7.0, 8.0, 9.0]),
        "axis_W": dict(anchor=[1], shape=[2], axis_names="W"),
        "two_regions": dict(anchor=[1, 2, 3, 4], shape=[1, 1, 1, 1]),
        "axes_0": dict(anchor=[1], shape=[2], axes=[0]),
        "shape_only": dict(shape=[2, 2]),
        "nothing": {},
        "fill_wraps": dict(anchor=[1, 2], shape=[2, 2], fill_value=[300.0]),
        "fill_negative": dict(anchor=[1, 2], shape=[2, 2], fill_value=[-1.0]),
        "fill_truncates": dict(anchor=[1, 2], shape=[2, 2], fill_value=[2.5]),
        "norm_shape_only": dict(anchor=[1, 0.5], shape=[2, 0.5], normalized_shape=True),
        "err_fill_channels": dict(anchor=[1, 2], shape=[2, 2], fill_value=[1.0, 2.0]),
        "err_normalized_both": dict(anchor=[1, 2], shape=[2, 2], normalized=True, normalized_anchor=True),
    }
    for k, kw in er.items():
        c[f"erase/{k}"] = Case("erase", [[RAMP]], ["HWC"], kw)
    c["erase/float"] = Case("erase", [[RAMP_F]], ["HWC"], dict(anchor=[1, 2], shape=[2, 2], fill_value=[-1.5]))
    c["erase/int32_fill_overflow"] = Case("erase", [[RAMP.astype(np.int32)]], ["HWC"],
                                          dict(anchor=[1, 2], shape=[2, 2], fill_value=[1e10]))
    c["erase/hw"] = Case("erase", [[np.ascontiguousarray(RAMP[..., 0])]], ["HW"], dict(anchor=[1, 2], shape=[2, 2]))
    c["erase/fhwc"] = Case("erase", [[np.stack([RAMP, RAMP])]], ["FHWC"], dict(anchor=[0, 1, 2], shape=[1, 2, 2]))
    c["erase/per_sample"] = Case("erase", [[RAMP, RAMP]], ["HWC"], {},
                                 arg_inputs={"anchor": [f32(1, 1), f32(0, 3)], "shape": [f32(2, 3), f32(4, 1)],
                                             "fill_value": [f32(5.0, 4.0, 3.0), f32(6.0, 7.0, 8.0)]})
    c["erase/err_hw_multifill"] = Case("erase", [[np.ascontiguousarray(RAMP[..., 0])]], ["HW"],
                                       dict(anchor=[1, 2], shape=[2, 2], fill_value=[1.0, 2.0]))
    c["erase/err_float64"] = Case("erase", [[RAMP.astype(np.float64)]], ["HWC"], dict(anchor=[1, 2], shape=[2, 2]))
    # pad
    a, b = np.arange(6, dtype=np.uint8).reshape(2, 3, 1), np.arange(8, dtype=np.uint8).reshape(4, 2, 1)
    big = np.arange(10, dtype=np.uint8).reshape(1, 10, 1)
    pd = {
        "all": {}, "fill_wraps": dict(fill_value=300.0), "fill_neg": dict(fill_value=-1.7),
        "fill_trunc": dict(fill_value=2.5), "shape_0": dict(axes=[1], shape=[0]), "shape_small": dict(axes=[1], shape=[2]),
        "align_neg_axis": dict(axes=[-2], align=[4]), "align_only": dict(axis_names="W", align=[4], shape=[1]),
        "shape_bcast": dict(axis_names="HW", shape=[5]), "channels": dict(axis_names="C", align=[4]),
        "err_shape_len": dict(axis_names="HW", shape=[5, -1, 3]), "err_both": dict(axes=[0, 1], axis_names="HW"),
        "err_axis_range": dict(axes=[3]), "err_axis_name": dict(axis_names="D"), "err_align_0": dict(align=[0]),
    }
    for k, kw in pd.items():
        c[f"pad/{k}"] = Case("pad", [[a, b]], ["HWC"], kw)
    c["pad/float"] = Case("pad", [[a.astype(np.float32), b.astype(np.float32)]], ["HWC"], dict(fill_value=-0.5))
    c["pad/bool"] = Case("pad", [[a.astype(bool), b.astype(bool)]], ["HWC"], {})
    c["pad/no_layout"] = Case("pad", [[a.astype(np.int16), b.astype(np.int16)]], [""], dict(axes=[0], fill_value=-1.0))
    c["pad/per_sample_fill"] = Case("pad", [[a, b]], ["HWC"], {}, arg_inputs={"fill_value": [f32(5.0).reshape(()), f32(9.0).reshape(())]})
    c["pad/per_sample_axes"] = Case("pad", [[a, b, big]], ["HWC"], {}, arg_inputs={
        "axes": [np.array([0], np.int32), np.array([1], np.int32), np.array([0, 1], np.int32)]})
    c["pad/per_sample_shape"] = Case("pad", [[a, b]], ["HWC"], dict(axes=[0, 1]), arg_inputs={
        "shape": [np.array([3, 5], np.int32), np.array([-1, 1], np.int32)]})
    c["pad/per_sample_align"] = Case("pad", [[a, b]], ["HWC"], dict(axes=[0, 1]), arg_inputs={
        "align": [np.array([3, 5], np.int32), np.array([1, 2], np.int32)]})
    c["pad/err_float64"] = Case("pad", [[a.astype(np.float64), b.astype(np.float64)]], ["HWC"], {})
    # slice
    sl = {
        "start_shape": dict(start=[1, 2], shape=[2, 3]), "rel": dict(rel_start=[0.2, 0.3], rel_shape=[0.5, 0.5]),
        "rel_end_hw": dict(rel_start=[0.3, 0.3], rel_end=[0.9, 0.9], axis_names="HW"),
        "start_end_axes": dict(start=[1, 2], end=[3, 6], axes=[0, 1]), "start_bcast": dict(start=[1]),
        "start_rel_shape": dict(start=[1, 2], rel_shape=[0.5, 0.5]), "rel_round": dict(rel_start=[0.5], rel_end=[0.75], axis_names="H"),
        "dtype_float": dict(start=[1, 2], shape=[2, 3], dtype="FLOAT"), "dtype_f16": dict(start=[1], end=[3], axis_names="W", dtype="FLOAT16"),
        "channels": dict(start=[1], end=[3], axes=[-1]),
        "err_oob": dict(start=[3], end=[9], axis_names="W"),
        "pad_rgb": dict(start=[3], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[7.0, 8.0, 9.0]),
        "pad_wraps": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[300.7]),
        "pad_neg": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[-2.7]),
        "pad_float": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[300.7], dtype="FLOAT"),
        "trim": dict(start=[-2], end=[9], axis_names="W", out_of_bounds_policy="trim_to_shape"),
        "trim_2d": dict(start=[-2, 3], end=[4, 9], axis_names="HW", out_of_bounds_policy="trim_to_shape"),
        "err_end_before": dict(start=[2], end=[1], axes=[0]), "err_dtype_int32": dict(start=[1, 2], shape=[2, 3], dtype="INT32"),
        "err_fill_count": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[1.0, 2.0]),
        "err_both_ends": dict(start=[1, 1], shape=[2, 2], rel_shape=[0.3, 0.2]), "err_axis": dict(start=[1], end=[3], axes=[5]),
    }
    for pol in ("edge", "clamp", "reflect", "reflect_1001", "reflect_101", "wrap", "constant"):
        sl[f"policy_{pol}"] = dict(start=[-4, -2], end=[12, 8], axis_names="WH", out_of_bounds_policy=pol)
    for k, kw in sl.items():
        c[f"slice/{k}"] = Case("slice", [[RAMP]], ["HWC"], kw)
    c["slice/float_to_u8"] = Case("slice", [[RAMP_F]], ["HWC"], dict(start=[1], end=[3], axis_names="W", dtype="UINT8"))
    c["slice/float64"] = Case("slice", [[RAMP.astype(np.float64)]], ["HWC"], dict(start=[1], end=[3], axis_names="W"))
    c["slice/pos_rel"] = Case("slice", [[RAMP], [f32(0.2, 0.3)], [f32(0.5, 0.5)]], ["HWC", "", ""], {})
    c["slice/pos_abs_float"] = Case("slice", [[RAMP], [f32(1, 2)], [f32(3, 2)]], ["HWC", "", ""],
                                    dict(normalized_anchor=False, normalized_shape=False))
    c["slice/pos_int"] = Case("slice", [[RAMP], [np.array([1, 2], np.int32)], [np.array([3, 2], np.int32)]],
                              ["HWC", "", ""], {})
    c["slice/pos_scalar"] = Case("slice", [[RAMP], [f32(0.2).reshape(())], [f32(0.5).reshape(())]], ["HWC", "", ""],
                                 dict(axis_names="H"))
    c["slice/pos_mixed_types"] = Case("slice", [[RAMP], [f32(0.2).reshape(())], [np.int32(2).reshape(())]],
                                      ["HWC", "", ""], dict(axis_names="H"))
    c["slice/per_sample"] = Case("slice", [[RAMP, RAMP]], ["HWC"], dict(axis_names="HW"),
                                 arg_inputs={"start": [np.array([1, 2], np.int32), np.array([0, 0], np.int32)],
                                             "rel_end": [f32(0.8, 0.9), f32(0.5, 0.5)]})
    c["slice/3d"] = Case("slice", [[VOL]], ["DHWC"], dict(start=[1, 2, 3], shape=[4, 5, 6], axis_names="DHW"))
    c["slice/no_layout_all_axes"] = Case("slice", [[RAMP]], [""], dict(start=[1, 2, 0], end=[3, 4, 2], axes=[0, 1, 2]))
    c["slice/no_layout_default_axes"] = Case("slice", [[RAMP]], [""], dict(start=[1, 2]))
    c["slice/err_bool"] = Case("slice", [[RAMP.astype(bool)]], ["HWC"], dict(start=[1], end=[3], axis_names="W"))
    # paste
    ps = {
        "half": dict(ratio=1.5, fill_value=[9, 9, 9]), "corner": dict(ratio=1.3, fill_value=[9, 8, 7], paste_x=0.0, paste_y=1.0),
        "min_canvas": dict(ratio=1.0, fill_value=[9, 8, 7], min_canvas_size=9.5),
        "trunc": dict(ratio=1.25, fill_value=[9, 8, 7], paste_x=0.3, paste_y=0.7), "one_fill": dict(ratio=2.0, fill_value=[9]),
        "fill_wraps": dict(ratio=2.0, fill_value=[300, 8, 7]), "err_ratio": dict(ratio=0.5, fill_value=[9, 8, 7]),
        "err_pos": dict(ratio=1.5, fill_value=[9, 8, 7], paste_x=1.5),
    }
    for k, kw in ps.items():
        c[f"paste/{k}"] = Case("paste", [[RAMP]], ["HWC"], kw)
    c["paste/per_sample"] = Case("paste", [[RAMP, IMG2]], ["HWC"], dict(fill_value=[1, 2, 3]),
                                 arg_inputs={"ratio": [f32(2.0).reshape(()), f32(1.7).reshape(())],
                                             "paste_x": [f32(0.1).reshape(()), f32(0.9).reshape(())]})
    c["paste/err_float"] = Case("paste", [[RAMP_F]], ["HWC"], dict(ratio=2.0, fill_value=[9, 8, 7]))
    return c


# -- random crop windows: many draws, compared as distributions (outputs stored stacked) -----------------

DIST_DRAWS = 1500


def _dist_cases() -> dict[str, Case]:
    n = DIST_DRAWS
    shapes = [np.array([200, 300, 3], np.int64)] * n
    return {
        "dist/roi_holds": Case("roi_random_crop", kwargs=dict(crop_shape=[30, 12], roi_start=[10, 20],
                                                              roi_shape=[20, 30], in_shape=[45, 60]), batch=n),
        "dist/roi_unbounded": Case("roi_random_crop", kwargs=dict(crop_shape=[5, 50], roi_start=[3, 7],
                                                                  roi_end=[13, 17]), batch=n),
        "dist/roi_input": Case("roi_random_crop", [[np.zeros((40, 30, 3), np.uint8)] * n], ["HWC"],
                               dict(crop_shape=[8, 20, 3], roi_start=[5, 0, 0], roi_shape=[25, 30, 3])),
        "dist/crop_generator": Case("random_crop_generator", [shapes], [""], {}),
        "dist/crop_generator_wide": Case("random_crop_generator", [shapes], [""],
                                         dict(random_area=[0.5, 0.6], random_aspect_ratio=[2.0, 3.0])),
    }


def _random_error_cases() -> dict[str, Case]:
    c = {}
    base = dict(crop_shape=[2, 2], roi_start=[1, 1], roi_shape=[1, 1])
    c["roi_random_crop/err_in_shape_and_input"] = Case("roi_random_crop", [[np.zeros((4, 4), np.uint8)]], [""],
                                                       dict(base, in_shape=[4, 4]))
    c["roi_random_crop/err_end_and_shape"] = Case("roi_random_crop", kwargs=dict(base, roi_end=[2, 2]), batch=1)
    c["roi_random_crop/err_negative_in_shape"] = Case("roi_random_crop", kwargs=dict(base, in_shape=[-4, 4]), batch=1)
    c["roi_random_crop/err_negative_crop"] = Case("roi_random_crop", kwargs=dict(base, crop_shape=[1, -1], in_shape=[4, 4]),
                                                  batch=1)
    c["roi_random_crop/err_roi_out"] = Case("roi_random_crop", kwargs=dict(base, roi_start=[-1, -1], in_shape=[4, 4]),
                                            batch=1)
    c["roi_random_crop/err_crop_too_big"] = Case("roi_random_crop", kwargs=dict(base, crop_shape=[5, 2], in_shape=[4, 4]),
                                                 batch=1)
    c["random_crop_generator/err_4d_shape"] = Case("random_crop_generator", [[np.array([2, 3, 4, 5], np.int64)]], [""], {})
    return c


# -- decoders.image_crop / image_slice, peek_image_shape: on the encoded files of dali_tables.npz ---------

def encoded() -> dict[str, np.ndarray]:
    """The encoded test images stored with the decoder tables (the same bytes on both sides)."""
    from pathlib import Path
    with np.load(Path(__file__).with_name("dali_tables.npz")) as z:
        return {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith("decode_input/")}


def _decoder_cases() -> dict[str, Case]:
    enc = encoded()
    c: dict[str, Case] = {}
    for name in ("jpeg_420", "jpeg_444", "jpeg_gray", "png_rgba", "bmp"):
        data = [[enc[name]]]
        c[f"decoders/crop_{name}"] = Case("decoders.image_crop", data, [""], dict(crop=(10, 12), crop_pos_x=0.3,
                                                                                    crop_pos_y=0.8))
        c[f"decoders/slice_{name}"] = Case("decoders.image_slice", data, [""], dict(start=[5, 3], end=[29, 17]))
        c[f"decoders/peek_{name}"] = Case("peek_image_shape", data, [""], {})
    j = [[enc["jpeg_420"]]]
    c["decoders/crop_hw_trunc"] = Case("decoders.image_crop", j, [""], dict(crop_h=10.6, crop_w=12.4, rounding="truncate",
                                                                            crop_pos_x=0.33))
    c["decoders/crop_gray_float"] = Case("decoders.image_crop", j, [""], dict(crop=(7, 9), output_type="GRAY", dtype="FLOAT"))
    c["decoders/crop_corner"] = Case("decoders.image_crop", j, [""], dict(crop=(24, 32), crop_pos_x=1.0, crop_pos_y=0.0))
    c["decoders/crop_per_sample"] = Case("decoders.image_crop", [[enc["jpeg_420"], enc["png_rgba"]]], [""], dict(crop=(8, 8)),
                                         arg_inputs={"crop_pos_x": [f32(0.0).reshape(()), f32(1.0).reshape(())]})
    c["decoders/slice_rel"] = Case("decoders.image_slice", j, [""], dict(rel_start=[0.1, 0.2], rel_shape=[0.5, 0.5]))
    c["decoders/slice_hw"] = Case("decoders.image_slice", j, [""], dict(start=[2, 3], shape=[10, 12], axis_names="HW"))
    c["decoders/slice_positional"] = Case("decoders.image_slice", [[enc["png_rgba"]], [f32(0.1, 0.2)], [f32(0.5, 0.5)]],
                                          ["", "", ""], {})
    c["decoders/slice_positional_int"] = Case("decoders.image_slice", [[enc["jpeg_444"]], [np.array([4, 5], np.int32)],
                                                                       [np.array([9, 7], np.int32)]], ["", "", ""], {})
    c["decoders/peek_gray_int32"] = Case("peek_image_shape", j, [""], dict(image_type="GRAY", dtype="INT32"))
    c["decoders/peek_float"] = Case("peek_image_shape", j, [""], dict(dtype="FLOAT"))
    c["decoders/err_crop_out"] = Case("decoders.image_crop", j, [""], dict(crop=(30, 12)))
    c["decoders/err_slice_out"] = Case("decoders.image_slice", j, [""], dict(start=[20, 3], end=[40, 12]))
    c["decoders/err_slice_axis"] = Case("decoders.image_slice", j, [""], dict(start=[2, 3, 0], end=[10, 12, 2], axes=[0, 1, 2]))
    return c


def _rcm_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    variants = [
        (dict(resize_shorter=20), dict(crop=(16, 16))),
        (dict(resize_x=40, resize_y=30), dict(crop=(16, 20), crop_pos_x=0.2, crop_pos_y=0.7)),
        (dict(size=(50, 60)), dict(crop=(7.5, 9.5), crop_pos_x=0.33)),
        (dict(resize_longer=15, interp_type="nn"), dict(crop_h=6, crop_w=5, rounding="truncate", crop_pos_x=0.5)),
        (dict(resize_shorter=20), {}),
        (dict(resize_shorter=20), dict(crop=(30, 30))),
        (dict(size=(12, 14), antialias=False, dtype="FLOAT"), dict(crop=(10, 10))),
    ]
    for k, (rkw, ckw) in enumerate(variants):
        for mirror in (0, 1, 2, 3):  # a mask: 1 left-right, 2 up-down
            c[f"resize_crop_mirror/{k}_m{mirror}"] = Case("resize_crop_mirror", [[IMG]], ["HWC"], dict(rkw, **ckw, mirror=mirror))
    # sequences and channel-first images: DALI's mirror bits name the layout's first two axes
    seq = np.stack([IMG, IMG[::-1, ::-1]])
    for lay, perm in (("FHWC", (0, 1, 2, 3)), ("FCHW", (0, 3, 1, 2)), ("CFHW", (3, 0, 1, 2)), ("CHW", (2, 0, 1))):
        x = np.ascontiguousarray((IMG if lay == "CHW" else seq).transpose(perm))
        for mirror in (0, 1, 2, 3):
            c[f"resize_crop_mirror/{lay}_m{mirror}"] = Case("resize_crop_mirror", [[x]], [lay],
                                                            dict(size=(14, 20), crop=(10, 12), mirror=mirror))
    c["resize_crop_mirror/plain_resize_shorter"] = Case("resize", [[IMG]], ["HWC"], dict(resize_shorter=20))
    c["resize_crop_mirror/plain_resize_xy"] = Case("resize", [[IMG]], ["HWC"], dict(resize_x=40, resize_y=30))
    c["resize_crop_mirror/per_sample"] = Case("resize_crop_mirror", [[IMG, IMG2]], ["HWC"], dict(resize_shorter=14, crop=(10, 10)),
                                              arg_inputs={"mirror": [np.int32(1), np.int32(0)],
                                                          "crop_pos_x": [f32(0.0).reshape(()), f32(0.8).reshape(())]})
    return c


def _multipaste_cases() -> dict[str, Case]:
    a = (np.arange(6 * 7, dtype=np.uint8).reshape(6, 7, 1) + 1).repeat(2, -1)
    b = (np.arange(5 * 5, dtype=np.uint8).reshape(5, 5, 1) + 100).repeat(2, -1)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    pairs = lambda *v: np.array(v, np.int32).reshape(-1, 2)  # noqa: E731
    rel = lambda *v: np.array(v, np.float32).reshape(-1, 2)  # noqa: E731
    c: dict[str, Case] = {}
    mp = "multi_paste"
    c["multi_paste/ids"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1, 0), i32(0)], "in_anchors": [pairs(1, 1, 0, 2), pairs(2, 3)],
        "shapes": [pairs(2, 3, 3, 2), pairs(3, 3)], "out_anchors": [pairs(0, 0, 4, 5), pairs(5, 6)]})
    c["multi_paste/rel"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1), i32(0)], "in_anchors_rel": [rel(0.3, 0.5), rel(0.25, 0.35)],
        "shapes_rel": [rel(0.5, 0.5), rel(0.49, 0.51)], "out_anchors_rel": [rel(0.3, 0.55), rel(0.5, 0.5)]})
    c["multi_paste/rel_rounding"] = Case(mp, [[np.arange(100, dtype=np.uint8).reshape(10, 10, 1) + 1] * 4], ["HWC"],
                                         dict(output_size=[10, 10]), arg_inputs={
        "in_ids": [i32(0), i32(1), i32(2), i32(3)],
        "in_anchors_rel": [rel(0.18, 0.05), rel(0.12, 0.33), rel(0.07, 0.0), rel(0.21, 0.0)],
        "shapes_rel": [rel(0.34, 0.47), rel(0.25, 0.33), rel(0.55, 0.45), rel(0.29, 0.35)]})
    c["multi_paste/uniform_no_size"] = Case(mp, [[a, a]], ["HWC"], {}, arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/overlap_order"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[7, 8]), arg_inputs={
        "in_ids": [i32(0, 1), i32(1, 0)], "out_anchors": [pairs(0, 0, 1, 2), pairs(0, 0, 1, 1)]})
    c["multi_paste/float_out"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9], dtype="FLOAT"),
                                      arg_inputs={"in_ids": [i32(1), np.zeros(0, np.int32)]})
    c["multi_paste/positional"] = Case(mp, [[a, b], [b, a]], ["HWC", "HWC"], dict(output_size=[8, 9]))
    c["multi_paste/positional_anchors"] = Case(mp, [[a, b], [b, a]], ["HWC", "HWC"], dict(output_size=[9, 12]),
                                               arg_inputs={"out_anchors": [pairs(0, 0, 3, 5), pairs(4, 4, 0, 0)]})
    c["multi_paste/int16_to_u8"] = Case(mp, [[IMG_I16]], ["HWC"], dict(dtype="UINT8"), arg_inputs={"in_ids": [i32(0)]})
    c["multi_paste/size_hwc"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9, 3], in_ids=[0]))
    c["multi_paste/size_extra"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9, 5, 1]),
                                       arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_size_short"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8]),
                                           arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_sizes"] = Case(mp, [[a, b]], ["HWC"], {}, arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_out_bounds"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[4, 4]), arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_idx"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={"in_ids": [i32(1), i32(5)]})
    c["multi_paste/err_negative_anchor"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1), i32(0)], "out_anchors": [pairs(-1, 0), pairs(0, 0)]})
    c["multi_paste/err_channels"] = Case(mp, [[a, np.ascontiguousarray(b[..., :1])]], ["HWC"], dict(output_size=[8, 9]),
                                         arg_inputs={"in_ids": [i32(0, 1), i32(1)]})
    return c
