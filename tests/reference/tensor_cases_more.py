"""Cases for reductions.* and tensor_resize, added to tensor_cases' table (same form)."""
from __future__ import annotations

from typing import Any

import numpy as np


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _seg_map() -> np.ndarray:
    """Labels 1 and 2 in blobs of several sizes; diagonal neighbours are separate objects."""
    m = np.zeros((9, 11), np.int32)
    m[0, 0] = m[1, 1] = 1
    m[0, 6:9] = 1
    m[3:6, 2:5] = 2
    m[8, 10] = 2
    m[6:9, 7] = 3
    m[7, 6:9] = 3
    return m


def _seg_map_3d() -> np.ndarray:
    m = np.zeros((3, 4, 5), np.uint8)
    m[0, 0, 0] = m[1, 0, 0] = 1
    m[2, 3, 4] = 1
    m[1:3, 1:3, 1:3] = 4
    return m


def inputs() -> dict[str, list[np.ndarray]]:
    r = _rng
    return {
        "red_u8": [r(101).integers(0, 256, (3, 4, 5)).astype(np.uint8), r(102).integers(0, 256, (2, 6, 5)).astype(np.uint8)],
        "red_u8_dense": [r(103).integers(0, 256, (4, 5, 3)).astype(np.uint8) for _ in range(3)],
        "red_i8": [r(104).integers(-128, 128, (6, 7)).astype(np.int8), r(105).integers(-128, 128, (3, 7)).astype(np.int8)],
        "red_i16": [r(106).integers(-30000, 30000, (5, 4)).astype(np.int16)],
        "red_u16": [r(107).integers(0, 65536, (4, 9)).astype(np.uint16), r(108).integers(0, 65536, (2, 9)).astype(np.uint16)],
        # squares below 2**31: DALI squares uint16 in a signed 32-bit int (larger values overflow there)
        "red_u16_small": [r(121).integers(0, 46341, (4, 9)).astype(np.uint16)],
        "red_i32_big": [np.array([[2000000000, 2000000000, -5], [7, -2000000000, 1]], np.int32)],
        "red_u32": [r(109).integers(0, 2**32, (3, 5), dtype=np.uint64).astype(np.uint32)],
        "red_i64": [r(110).integers(-2**40, 2**40, (4, 3)).astype(np.int64)],
        "red_u64": [np.array([[1, 2**63 + 5, 7], [2**64 - 1, 3, 0]], np.uint64)],
        "red_f32": [(r(111).random((5, 6, 2)) * 200 - 100).astype(np.float32),
                    (r(112).random((3, 6, 2)) * 2 - 1).astype(np.float32)],
        "red_f32_dense": [(r(113 + k).random((4, 6)) * 50).astype(np.float32) for k in range(3)],
        "red_empty": [np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)],
        "red_empty_u8": [np.zeros((4, 0), np.uint8)],
        "red_1d": [np.array([1, 2, 3, 4], np.int32), np.array([33, 2, 10, 10], np.int32)],
        "red_overflow": [(r(120).integers(0, 10, (2, 2, 3)) * 100000).astype(np.int32)],
        "shape_like": [np.zeros((60, 50), np.uint8), np.zeros((30, 40), np.uint8)],
        "n_choices": [np.array(5, np.int32), np.array(9, np.int32)],
        "n_choices_i64": [np.array(1 << 40, np.int64)],
        "choice_1d": [np.array([3, 5, 7, 11], np.int16), np.array([-1, 2], np.int16)],
        "choice_nd": [np.arange(12, dtype=np.float32).reshape(4, 3), np.arange(6, dtype=np.float32).reshape(3, 2)],
        "choice_f32_scalar": [np.array(5.0, np.float32)],
        "rs_u8_hwc": [r(130).integers(0, 256, (9, 13, 3)).astype(np.uint8), r(131).integers(0, 256, (12, 7, 3)).astype(np.uint8)],
        "rs_f32_1d": [np.arange(8, dtype=np.float32) ** 1.5, (r(132).random(11) * 10).astype(np.float32)],
        "rs_f32_3d": [(r(133).random((6, 8, 5)) * 100).astype(np.float32)],
        "rs_u16_4d": [r(134).integers(0, 65536, (5, 6, 4, 2)).astype(np.uint16)],
        "seg_map": [_seg_map()] * 400,
        "seg_map_3d": [_seg_map_3d()] * 300,
        "seg_map_f32": [_seg_map().astype(np.float32)],
        "seg_empty": [np.zeros((3, 4), np.int32)] * 2,
        "sel_ids": [np.array([2, 0], np.int32), np.array([1], np.int32), np.array([], np.int32)],
        "sel_polys": [np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10]], np.int32),
                      np.array([[1, 0, 3], [0, 3, 5], [1, 5, 8]], np.int32),
                      np.array([[4, 0, 2]], np.int32)],
        "sel_verts": [np.arange(20, dtype=np.float32).reshape(10, 2), np.arange(24, dtype=np.float32).reshape(8, 3),
                      np.ones((2, 2), np.float32)],
        "sel_verts_i16": [np.arange(20, dtype=np.int16).reshape(10, 2), np.arange(24, dtype=np.int16).reshape(8, 3),
                          np.ones((2, 2), np.int16)],
        "sel_missing": [np.array([7], np.int32)] * 3,
        "sel_twice": [np.array([1, 1], np.int32)] * 3,
        "sel_bad_polys": [np.array([[0, 0, 3, 1]], np.int32)] * 3,
        "sel_out_of_range": [np.array([[0, 0, 30]], np.int32)] * 3,
        "sel_zero": [np.array([0], np.int32)] * 3,
        "rs_i16_2d": [r(135).integers(-3000, 3000, (10, 9)).astype(np.int16), r(136).integers(-3000, 3000, (10, 9)).astype(np.int16)],
    }


def _red(kind: str, inp: str, layout: Any = None, **args: Any) -> dict[str, Any]:
    return dict(op=f"reductions.{kind}", inputs=[(inp, layout)], args=args)


def _dev(kind: str, inp: str, layout: Any = None, mean: Any = None, **args: Any) -> dict[str, Any]:
    m = {k: v for k, v in args.items() if k in ("axes", "axis_names", "keep_dims")} if mean is None else mean
    return dict(op=f"reductions.{kind}", inputs=[(inp, layout)], args=args, mean=m)


_RED = {
    "sum_u8_all": _red("sum", "red_u8", "HWC"),
    "sum_u8_axes": _red("sum", "red_u8", "HWC", axes=[0, 2]),
    "sum_u8_keep": _red("sum", "red_u8", "HWC", axes=1, keep_dims=True),
    "sum_u8_names": _red("sum", "red_u8", "HWC", axis_names="WC"),
    "sum_u8_wrap": _red("sum", "red_u8", "HWC", axes=[0], dtype="UINT8"),
    "sum_u8_float": _red("sum", "red_u8", None, axes=[1, 2], dtype="FLOAT"),
    "sum_dense": _red("sum", "red_u8_dense", "HWC", axes=[0, 1]),
    "sum_i8_negative": _red("sum", "red_i8", "AB", axes=-1),
    "sum_i32_wrap": _red("sum", "red_i32_big", None, axes=1, dtype="INT32"),
    "sum_i32_wide": _red("sum", "red_i32_big", None, axes=1),
    "sum_u32": _red("sum", "red_u32", "AB", axes=0),
    "sum_u64": _red("sum", "red_u64", None, axes=0),
    "sum_f32": _red("sum", "red_f32", "XYZ", axes=[0, 2]),
    "sum_empty": _red("sum", "red_empty", None, axes=0),
    "sum_no_axes": _red("sum", "red_i16", "AB", axes=[]),
    "sum_overflow_float": _red("sum", "red_overflow", None, dtype="FLOAT"),
    "min_u8": _red("min", "red_u8", "HWC", axes=[0, 1]),
    "min_i8_keep": _red("min", "red_i8", "AB", keep_dims=True),
    "min_u16": _red("min", "red_u16", None, axes=1),
    "min_u64": _red("min", "red_u64", None, axes=0),
    "min_empty": _red("min", "red_empty", None),
    "max_f32": _red("max", "red_f32", "XYZ", axes=[1]),
    "max_i64": _red("max", "red_i64", None, axes=0),
    "max_u32": _red("max", "red_u32", None),
    "max_u64": _red("max", "red_u64", None, axes=1),
    "max_empty_u8": _red("max", "red_empty_u8", "AB", axes=1),
    "mean_u8": _red("mean", "red_u8", "HWC", axes=[0, 1]),
    "mean_u8_as_u8": _red("mean", "red_u8", "HWC", axes=[0, 1], dtype="UINT8"),
    "mean_i8_trunc": _red("mean", "red_i8", None, axes=1, dtype="INT8"),
    "mean_f32": _red("mean", "red_f32", "XYZ", axes=[0, 1], keep_dims=True),
    "mean_dense": _red("mean", "red_f32_dense", "HW", axes=0),
    "mean_empty": _red("mean", "red_empty", None),
    "mean_1d": _red("mean", "red_1d", None),
    "mean_overflow": _red("mean", "red_overflow", "ABC", axes=[1, 2]),
    "mean_square_i16": _red("mean_square", "red_i16", None, axes=0),
    "mean_square_f32": _red("mean_square", "red_f32", "XYZ", axis_names="Z"),
    "rms_u16": _red("rms", "red_u16_small", None, axes=1),
    "rms_u8_as_u8": _red("rms", "red_u8", None, axes=[0, 1, 2], dtype="UINT8"),
    "rms_f32": _red("rms", "red_f32", None),
    "std_f32": _dev("std_dev", "red_f32", "XYZ", axes=[0, 1]),
    "std_f32_keep": _dev("std_dev", "red_f32", "XYZ", axes=[2], keep_dims=True),
    "std_u8_ddof": _dev("std_dev", "red_u8", None, axes=[0, 2], ddof=1),
    "std_scalar_mean": _dev("std_dev", "red_f32", None, mean=0.0),
    "var_i16": _dev("variance", "red_i16", None, axes=1, ddof=1),
    "var_dense": _dev("variance", "red_f32_dense", "HW", axes=1),
    "var_names": _dev("variance", "red_f32", "XYZ", axis_names="XZ"),
    "var_all_ddof_n": _dev("variance", "red_1d", None, mean=dict(), ddof=4),
    "var_keep_mean_plain": _dev("variance", "red_f32", None, mean=dict(axes=[0]), axes=[0], keep_dims=True),
    "red_bad_axis": _red("sum", "red_u8", None, axes=[3]),
    "red_twice": _red("max", "red_u8", None, axes=[1, 1]),
    "red_missing_name": _red("min", "red_u8", "HWC", axis_names="D"),
    "red_names_no_layout": _red("min", "red_u8", None, axis_names="H"),
    "red_both": _red("sum", "red_u8", "HWC", axes=[0], axis_names="H"),
}


def _rand(op: str, ins: list[tuple[str, Any]], **kw: Any) -> dict[str, Any]:
    return dict(op=f"random.{op}", inputs=ins, random=True, float_args=("alpha", "beta", "p"), **kw)


# random ops: compared in distribution (tests/test_ops_random_draws.py); DALI's generator differs
RANDOM = {
    "beta_skewed": _rand("beta", [], args=dict(alpha=0.5, beta=2.0, shape=[3000]), batch=2),
    "beta_tiny": _rand("beta", [], args=dict(alpha=0.003, beta=0.002, shape=[3000]), batch=2),
    "beta_large": _rand("beta", [], args=dict(alpha=1000.0, beta=1500.0, shape=[3000], dtype="FLOAT64"), batch=2),
    "beta_uniform": _rand("beta", [], args=dict(shape=[3000]), batch=2),
    "beta_per_sample": _rand("beta", [], args=dict(shape=[3000]), per_sample=dict(alpha=[0.7, 4.0], beta=[3.0, 4.0])),
    "beta_shape_like": _rand("beta", [("shape_like", "HW")], args=dict(alpha=2.0, beta=5.0)),
    "beta_scalar": _rand("beta", [], args=dict(alpha=2.0, beta=2.0), batch=3),
    "beta_bad_alpha": _rand("beta", [], args=dict(alpha=0.0), batch=1),
    "beta_bad_dtype": _rand("beta", [], args=dict(dtype="INT32"), batch=1),
    "choice_range": _rand("choice", [("n_choices", None)], args=dict(shape=[3000])),
    "choice_range_p": _rand("choice", [("n_choices", None)], args=dict(shape=[3000]),
                            per_sample=dict(p=[[0.1, 0.2, 0.3, 0.0, 0.4], [0.5] + [0.0625] * 8])),
    "choice_values": _rand("choice", [("choice_1d", "N")], args=dict(shape=[3000])),
    "choice_rows": _rand("choice", [("choice_nd", "NC")], args=dict(shape=[50, 40])),
    "choice_one_row": _rand("choice", [("choice_nd", "NC")]),
    "choice_shape_like": _rand("choice", [("choice_1d", "N"), ("shape_like", None)]),
    "choice_large": _rand("choice", [("n_choices_i64", None)], args=dict(shape=[3000])),
    "choice_bad_sum": _rand("choice", [("n_choices", None)], per_sample=dict(p=[[0.5] * 5, [0.5] * 9])),
    "choice_float_scalar": _rand("choice", [("choice_f32_scalar", None)]),
}


def _tr(inp: str, layout: Any = None, op: str = "tensor_resize", **args: Any) -> dict[str, Any]:
    return dict(op=op, inputs=[(inp, layout)], args=args)


RESIZE = {
    "tr_hw": _tr("rs_u8_hwc", "HWC", sizes=[14, 9], axes=[0, 1]),
    "tr_names": _tr("rs_u8_hwc", "HWC", sizes=[5, 20], axis_names="HW"),
    "tr_names_reversed": _tr("rs_u8_hwc", "HWC", sizes=[20, 5], axis_names="WH"),
    "tr_channels_too": _tr("rs_u8_hwc", "HWC", sizes=[6, 6, 5], dtype="FLOAT"),
    "tr_scales": _tr("rs_u8_hwc", "HWC", scales=[1.7, 0.6], axes=[0, 1]),
    "tr_scales_ceil": _tr("rs_u8_hwc", "HWC", scales=[0.55, 1.3], axes=[0, 1], size_rounding="ceil"),
    "tr_scales_align": _tr("rs_f32_1d", None, scales=[0.7], alignment=[0.0]),
    "tr_fraction": _tr("rs_f32_1d", None, sizes=[5.5]),
    "tr_fraction_no_subpixel": _tr("rs_f32_1d", None, sizes=[5.5], subpixel_scale=False),
    "tr_cubic_up": _tr("rs_f32_1d", None, sizes=[19], interp_type="INTERP_CUBIC"),
    "tr_nn": _tr("rs_u8_hwc", "HWC", sizes=[17, 5], axes=[0, 1], interp_type="INTERP_NN"),
    "tr_lanczos": _tr("rs_f32_3d", None, sizes=[9, 4], axes=[0, 2], interp_type="INTERP_LANCZOS3"),
    "tr_3d": _tr("rs_f32_3d", "DHW", sizes=[4, 11, 7]),
    "tr_default_mode": _tr("rs_f32_3d", None, sizes=[9, 0], axes=[0, 1]),
    "tr_not_smaller": _tr("rs_f32_3d", None, sizes=[10, 10], axes=[1, 2], mode="not_smaller"),
    "tr_not_larger_cap": _tr("rs_f32_3d", None, sizes=[3, 0, 9], mode="not_larger", max_size=[100, 100, 6]),
    "tr_stretch": _tr("rs_f32_3d", None, sizes=[9, 0, 0], mode="stretch"),
    "tr_roi": _tr("rs_u8_hwc", "HWC", sizes=[10, 10], axes=[0, 1], roi_start=[1.5, 2], roi_end=[7, 6.5]),
    "tr_roi_flip": _tr("rs_u8_hwc", "HWC", scales=[1, 1], axes=[0, 1], roi_start=[9, 0], roi_end=[0, 7]),
    "tr_roi_relative": _tr("rs_f32_3d", None, sizes=[8], axes=[1], roi_start=[0.25], roi_end=[0.75], roi_relative=True),
    "tr_4d_u16": _tr("rs_u16_4d", None, sizes=[3, 9, 2], axes=[0, 1, 2]),
    "tr_i16": _tr("rs_i16_2d", None, sizes=[4, 12], min_filter="INTERP_GAUSSIAN", mag_filter="INTERP_CUBIC"),
    "tr_legacy_name": _tr("rs_u8_hwc", "HWC", op="experimental.tensor_resize", sizes=[5, 5], axes=[0, 1]),
    "tr_both": _tr("rs_u8_hwc", "HWC", sizes=[5, 5], scales=[1, 1], axes=[0, 1]),
    "tr_scales_not_larger": _tr("rs_u8_hwc", "HWC", scales=[2, 2], axes=[0, 1], mode="not_larger"),
    "frcm": _tr("rs_u8_hwc", "HWC", op="fast_resize_crop_mirror", resize_shorter=10, crop=[6, 7]),
    "frcm_mirror": _tr("rs_u8_hwc", "HWC", op="fast_resize_crop_mirror", size=[15, 15], crop=[9, 8], mirror=1),
}


def _bbox(inp: str = "seg_map", **args: Any) -> dict[str, Any]:
    return dict(op="segmentation.random_object_bbox", inputs=[(inp, None)], args=args, random=True)


def _pixel(inp: str = "seg_map", **args: Any) -> dict[str, Any]:
    return dict(op="segmentation.random_mask_pixel", inputs=[(inp, None)], args=args, random=True)


def _select(ids: str, polys: str = "sel_polys", verts: str = "sel_verts", **args: Any) -> dict[str, Any]:
    return dict(op="segmentation.select_masks", inputs=[(ids, None), (polys, None), (verts, None)], args=args)


# random_object_bbox / random_mask_pixel: outcome frequencies over a batch of copies of one mask
SEGMENTATION_RANDOM = {
    "bbox_default": _bbox(),
    "bbox_box_class": _bbox(format="box", output_class=True),
    "bbox_start_end_ignore": _bbox(format="start_end", ignore_class=True),
    "bbox_k_largest": _bbox(format="box", k_largest=1, output_class=True),
    "bbox_threshold": _bbox(format="box", threshold=[2, 2], output_class=True),
    "bbox_foreground_prob": _bbox(format="box", foreground_prob=0.4, output_class=True),
    "bbox_weights": _bbox(format="box", classes=[1, 3], class_weights=[0.8, 0.2], output_class=True),
    "bbox_background": _bbox(format="box", background=1, output_class=True),
    "bbox_zero_class": _bbox(format="box", classes=[0, 2], foreground_prob=0.5, output_class=True),
    "bbox_3d": _bbox("seg_map_3d", format="box", output_class=True),
    "pixel_any": _pixel(),
    "pixel_threshold": _pixel(foreground=1, threshold=1.5),
    "pixel_value": _pixel(foreground=1, value=3),
    "pixel_none": _pixel("seg_map_3d", foreground=1, value=9),
}
SEGMENTATION = {
    "bbox_empty": _bbox("seg_empty", format="box", output_class=True),
    "bbox_bad_k": _bbox(k_largest=0),
    "bbox_ignore_and_classes": _bbox(ignore_class=True, classes=[1]),
    "bbox_float_mask": _bbox("seg_map_f32"),
    "bbox_bad_format": _bbox(format="xyz"),
    "pixel_value_and_threshold": _pixel(foreground=1, value=1, threshold=0.5),
    "select": _select("sel_ids"),
    "select_reindex": _select("sel_ids", reindex_masks=True),
    "select_int_vertices": _select("sel_ids", verts="sel_verts_i16"),
    "select_missing": _select("sel_missing"),
    "select_twice": _select("sel_twice"),
    "select_bad_polygons": _select("sel_zero", polys="sel_bad_polys"),
    "select_out_of_range": _select("sel_zero", polys="sel_out_of_range"),
}

REDUCTIONS = _RED
CASES: dict[str, dict[str, Any]] = {**_RED, **RANDOM, **RESIZE, **SEGMENTATION_RANDOM, **SEGMENTATION}
