"""Cases for the color, filter and noise ops (tests/test_ops_color_*.py), shared by the DALI table
generator and the tests. NumPy only: the pipeline is built by `graph`, which is handed DALI's or
torch_dali's `fn` and `types` (their APIs are the same), so both sides run the same definition.

A case: the op's `fn` path, the input batch's name and layout, constant arguments (dtypes and image
types as names) and per-sample arguments (one value per sample, fed by an external source).
"""
from __future__ import annotations

from typing import Any

import numpy as np

TABLES = "color_ops_tables.npz"  # beside this file


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _u8(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return _rng(seed).integers(0, 256, shape).astype(np.uint8)


def _f32(shape: tuple[int, ...], seed: int, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    return (lo + (hi - lo) * _rng(seed).random(shape)).astype(np.float32)


def _i16(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return _rng(seed).integers(-3000, 30000, shape).astype(np.int16)


def inputs() -> dict[str, list[np.ndarray]]:
    """Named input batches (a list of samples each)."""
    return {
        "u8_hwc": [_u8((9, 11, 3), 1), _u8((9, 11, 3), 2), _u8((9, 11, 3), 3)],
        "u8_hwc_ragged": [_u8((7, 5, 3), 4), _u8((12, 9, 3), 5)],
        "f32_hwc": [_f32((9, 11, 3), 6), _f32((9, 11, 3), 7)],
        "i16_hwc": [_i16((6, 7, 3), 8), _i16((6, 7, 3), 9)],
        "u8_fhwc": [_u8((3, 6, 7, 3), 10), _u8((2, 6, 7, 3), 11)],
        "u8_gray": [_u8((8, 9, 1), 12), _u8((5, 4, 1), 13)],
        "u8_dhwc": [_u8((4, 5, 6, 3), 14)],
        "u8_fdhwc": [_u8((2, 3, 4, 5, 3), 15)],
        "u8_dhw": [_u8((4, 5, 6), 16), _u8((4, 5, 6), 17)],
        "u8_hw": [_u8((12, 13), 18), _u8((12, 13), 19)],
        "f32_hw": [_f32((12, 13), 20, -100, 100), _f32((7, 15), 21, -100, 100)],
        "u8_chw": [_u8((3, 10, 9), 22), _u8((3, 10, 9), 23)],
        "u16_hwc": [_rng(24).integers(0, 65536, (8, 9, 3)).astype(np.uint16)],
        "i16_hw": [_rng(25).integers(-32768, 32768, (10, 11)).astype(np.int16)],
        "f64_hwc": [_rng(26).random((8, 9, 2))],
        "u8_thin": [_u8((1, 10, 3), 27), _u8((2, 9, 3), 28), _u8((10, 1, 3), 29)],
        "u8_fchw": [_u8((2, 3, 8, 9), 30)],
        "u8_big": [_u8((24, 23, 3), 31), _u8((24, 23, 3), 32)],
        "u8_flat": [np.full((64, 64, 3), 100, np.uint8), np.full((64, 64, 3), 30, np.uint8)],
        "f32_noise": [_f32((64, 64, 3), 33), _f32((64, 64, 3), 34)],
        "i16_flat": [np.full((32, 64, 3), -1000, np.int16)],
        "u8_chw_flat": [np.full((3, 64, 64), 100, np.uint8)],
        "f32_3d": [_f32((4, 5, 3), 35, -50, 80), _f32((4, 5, 3), 36, 0, 2), _f32((4, 5, 3), 37, -1, 1)],
        "f32_ragged": [_f32((4, 5, 3), 38, -5, 8), _f32((6, 5, 3), 39, 0, 2), _f32((2, 5, 3), 40, -1, 1)],
        "u8_1d": [_u8((50,), 41), _u8((7,), 42)],
        "i16_lut": [_rng(43).integers(-5, 300, (6, 7)).astype(np.int16)],
        "f32_const": [np.full((3, 4), 2.5, np.float32), _f32((3, 4), 44)],
        "u8_skewed": [(_f32((30, 40, 3), 45) ** 3 * 255).astype(np.uint8),
                      (_f32((30, 40, 3), 46) ** 0.3 * 200).astype(np.uint8)],
        "u8_skewed_chw": [(_f32((2, 20, 30), 47) ** 2 * 255).astype(np.uint8)],
        "u8_skewed_hw": [(_f32((25, 31), 48) ** 4 * 255).astype(np.uint8), np.full((4, 5), 9, np.uint8)],
        "u8_skewed_fhwc": [(_f32((2, 16, 17, 5), 49) ** 2 * 255).astype(np.uint8)],
        "f32_hwc": [_f32((9, 11, 3), 6), _f32((9, 11, 3), 7)],
        "u16_hw": [_rng(50).integers(0, 65536, (13, 14)).astype(np.uint16)],
        "u8_fchw": [_u8((2, 3, 8, 9), 30)],
        "u8_photo": [_photo(70, 93, 51), _photo(64, 64, 52)],
        "u8_photo_seq": [np.stack([_photo(40, 50, 53), _photo(40, 50, 54)])],
    }


def _photo(h: int, w: int, seed: int) -> np.ndarray:
    """A smooth, photo-like RGB image: gradients, a few soft discs and a little noise."""
    rng = _rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.stack([x / w * 200 + 20, y / h * 180 + 30, (x + y) / (w + h) * 150 + 50], -1)
    for _ in range(4):
        cy, cx, r = rng.random() * h, rng.random() * w, 5 + rng.random() * 15
        disc = np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r))[..., None]
        img = img * (1 - disc) + disc * rng.random(3) * 255
    img += rng.normal(0, 3, img.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def kernels() -> dict[str, list[np.ndarray]]:
    """Named batches of fn.filter kernels (float32)."""
    return {
        "k3": [_f32((3, 3), 40, -1, 1), _f32((3, 3), 41, -1, 1), _f32((3, 3), 42, -1, 1)],
        "k42": [_f32((4, 2), 43, -1, 1), _f32((4, 2), 44, -1, 1), _f32((4, 2), 45, -1, 1)],
        "k_wide": [_f32((1, 15), 46), _f32((7, 1), 47), _f32((5, 5), 48)],
        "k_tall": [_f32((13, 3), 49), _f32((1, 1), 50), _f32((2, 2), 51)],
    }


_COLOR = {
    "brightness_u8": dict(op="brightness", input="u8_hwc", args=dict(brightness=1.7, brightness_shift=0.1)),
    "brightness_u8_float": dict(op="brightness", input="u8_hwc", args=dict(brightness=0.5, dtype="float")),
    "brightness_f32_u8": dict(op="brightness", input="f32_hwc", args=dict(brightness=300.0, dtype="uint8")),
    "brightness_i16": dict(op="brightness", input="i16_hwc", args=dict(brightness=1.3, brightness_shift=-0.2)),
    "brightness_per_sample": dict(op="brightness", input="u8_hwc",
                                  per_sample=dict(brightness=[0.5, 1.0, 2.5], brightness_shift=[0.0, 0.3, -0.1])),
    "brightness_fhwc": dict(op="brightness", input="u8_fhwc", layout="FHWC", args=dict(brightness=1.4)),
    "brightness_no_layout": dict(op="brightness", input="u8_fhwc", layout="", args=dict(brightness=0.8)),
    "contrast_u8": dict(op="contrast", input="u8_hwc", args=dict(contrast=1.9)),
    "contrast_u8_center": dict(op="contrast", input="u8_hwc", args=dict(contrast=0.4, contrast_center=40.0)),
    "contrast_f32": dict(op="contrast", input="f32_hwc", args=dict(contrast=2.5)),
    "contrast_i16_u8": dict(op="contrast", input="i16_hwc", args=dict(contrast=0.5, dtype="uint8")),
    "contrast_per_sample": dict(op="contrast", input="u8_hwc",
                                per_sample=dict(contrast=[0.0, 1.5, 3.0], contrast_center=[10.0, 128.0, 200.0])),
    "contrast_dhwc": dict(op="contrast", input="u8_dhwc", layout="DHWC", args=dict(contrast=1.2)),
    "hue_u8": dict(op="hue", input="u8_hwc", args=dict(hue=33.0)),
    "hue_u8_negative": dict(op="hue", input="u8_hwc", args=dict(hue=-140.0)),
    "hue_f32": dict(op="hue", input="f32_hwc", args=dict(hue=77.0)),
    "hue_u8_float": dict(op="hue", input="u8_hwc", args=dict(hue=200.0, dtype="float")),
    "hue_per_sample": dict(op="hue", input="u8_hwc", per_sample=dict(hue=[0.0, 90.0, 359.0])),
    "hue_fhwc": dict(op="hue", input="u8_fhwc", layout="FHWC", args=dict(hue=45.0)),
    "saturation_u8": dict(op="saturation", input="u8_hwc", args=dict(saturation=0.3)),
    "saturation_u8_up": dict(op="saturation", input="u8_hwc", args=dict(saturation=2.2)),
    "saturation_f32": dict(op="saturation", input="f32_hwc", args=dict(saturation=0.0)),
    "saturation_per_sample": dict(op="saturation", input="u8_hwc", per_sample=dict(saturation=[0.0, 0.5, 1.8])),
}
_CSC = {f"csc_{a}_{b}": dict(op="color_space_conversion", input="u8_gray" if a == "GRAY" else "u8_hwc",
                             args=dict(image_type=a, output_type=b))
        for a in ("RGB", "BGR", "GRAY", "YCbCr") for b in ("RGB", "BGR", "GRAY", "YCbCr") if a != b}
_CSC["csc_fdhwc"] = dict(op="color_space_conversion", input="u8_fdhwc", layout="FDHWC",
                         args=dict(image_type="RGB", output_type="YCbCr"))

_BLUR = {
    "blur_sigma": dict(op="gaussian_blur", input="u8_big", args=dict(sigma=1.0)),
    "blur_sigma_frac": dict(op="gaussian_blur", input="u8_big", args=dict(sigma=0.7)),
    "blur_window": dict(op="gaussian_blur", input="u8_big", args=dict(window_size=5)),
    "blur_window_11": dict(op="gaussian_blur", input="u8_big", args=dict(window_size=11)),
    "blur_both_per_axis": dict(op="gaussian_blur", input="u8_big", args=dict(sigma=[1.0, 2.0], window_size=[7, 5])),
    "blur_float_out": dict(op="gaussian_blur", input="u8_big", args=dict(sigma=1.3, dtype="float")),
    "blur_f32": dict(op="gaussian_blur", input="f32_hw", layout="HW", args=dict(sigma=2.0)),
    "blur_f64": dict(op="gaussian_blur", input="f64_hwc", args=dict(sigma=1.5)),
    "blur_i16": dict(op="gaussian_blur", input="i16_hw", layout="HW", args=dict(sigma=0.9)),
    "blur_u16": dict(op="gaussian_blur", input="u16_hwc", args=dict(window_size=3)),
    "blur_chw": dict(op="gaussian_blur", input="u8_chw", layout="CHW", args=dict(sigma=[0.8, 1.6])),
    "blur_fchw": dict(op="gaussian_blur", input="u8_fchw", layout="FCHW", args=dict(sigma=1.0)),
    "blur_fhwc": dict(op="gaussian_blur", input="u8_fhwc", layout="FHWC", args=dict(sigma=1.0)),
    "blur_dhwc": dict(op="gaussian_blur", input="u8_dhwc", layout="DHWC", args=dict(sigma=[1.0, 0.5, 2.0])),
    "blur_no_layout_3d": dict(op="gaussian_blur", input="u8_dhw", layout="", args=dict(sigma=1.0)),
    "blur_thin": dict(op="gaussian_blur", input="u8_thin", args=dict(sigma=2.0, window_size=31)),
    "blur_per_sample": dict(op="gaussian_blur", input="u8_big", per_sample=dict(sigma=[[0.5, 3.0], [2.0, 1.0]])),
}
_LAPLACIAN = {
    "lap_u8": dict(op="laplacian", input="u8_big"),
    "lap_u8_float": dict(op="laplacian", input="u8_big", args=dict(dtype="float")),
    "lap_5_float": dict(op="laplacian", input="u8_big", args=dict(window_size=5, dtype="float")),
    "lap_7_normalized": dict(op="laplacian", input="u8_big", args=dict(window_size=7, normalized_kernel=True)),
    "lap_no_smoothing": dict(op="laplacian", input="f32_hw", layout="HW",
                             args=dict(window_size=5, smoothing_size=1)),
    "lap_per_axis": dict(op="laplacian", input="u8_big",
                         args=dict(window_size=[3, 9], smoothing_size=[5, 1], scale=[0.5, 0.01], dtype="float")),
    "lap_i16": dict(op="laplacian", input="i16_hw", layout="HW", args=dict(window_size=3)),
    "lap_dhwc": dict(op="laplacian", input="u8_dhwc", layout="DHWC", args=dict(window_size=3, dtype="float")),
    "lap_chw": dict(op="laplacian", input="u8_chw", layout="CHW", args=dict(window_size=5, normalized_kernel=True)),
    "lap_thin": dict(op="laplacian", input="u8_thin", args=dict(window_size=5, dtype="float")),
    "lap_31": dict(op="laplacian", input="f32_hw", layout="HW", args=dict(window_size=31, normalized_kernel=True)),
    "lap_per_sample": dict(op="laplacian", input="u8_big", args=dict(dtype="float"),
                           per_sample=dict(window_size=[[3, 5], [7, 3]])),
}
_FILTER = {
    "filter_u8": dict(op="filter", input="u8_hwc", filter="k3"),
    "filter_even_anchor": dict(op="filter", input="u8_hwc", filter="k42", args=dict(anchor=[3, 0])),
    "filter_1001": dict(op="filter", input="u8_hwc", filter="k_wide", args=dict(border="reflect_1001")),
    "filter_wrap": dict(op="filter", input="u8_hwc", filter="k_tall", args=dict(border="wrap")),
    "filter_clamp": dict(op="filter", input="u8_hwc", filter="k_wide", args=dict(border="clamp")),
    "filter_constant": dict(op="filter", input="u8_hwc", filter="k42", fill=[7, 100, 255],
                            args=dict(border="constant")),
    "filter_constant_zero": dict(op="filter", input="u8_hwc", filter="k3", args=dict(border="constant")),
    "filter_valid": dict(op="filter", input="u8_hwc", filter="k42", args=dict(mode="valid", anchor=[0, 1])),
    "filter_float_out": dict(op="filter", input="u8_hwc", filter="k3", args=dict(dtype="float")),
    "filter_f32_hw": dict(op="filter", input="f32_hw", layout="HW", filter="k42"),
    "filter_chw": dict(op="filter", input="u8_chw", layout="CHW", filter="k3"),
    "filter_u16": dict(op="filter", input="u16_hwc", filter="k3"),
    "filter_i16": dict(op="filter", input="i16_hw", layout="HW", filter="k_tall"),
    "filter_fhwc": dict(op="filter", input="u8_fhwc", layout="FHWC", filter="k3"),
    "filter_no_layout": dict(op="filter", input="u8_hw", layout="", filter="k42"),
    "filter_per_sample_anchor": dict(op="filter", input="u8_hwc", filter="k3",
                                     per_sample=dict(anchor=[[0, 0], [2, 1], [-1, 2]])),
}

# noise: compared in distribution (tests/test_ops_noise.py), DALI's generator is not reproduced
_NOISE = {
    "noise_gauss_u8": dict(op="noise.gaussian", input="u8_flat", args=dict(mean=5.0, stddev=10.0)),
    "noise_gauss_f32": dict(op="noise.gaussian", input="f32_noise", args=dict(stddev=0.2)),
    "noise_gauss_saturate": dict(op="noise.gaussian", input="u8_flat", args=dict(stddev=300.0)),
    "noise_gauss_per_sample": dict(op="noise.gaussian", input="u8_flat",
                                   per_sample=dict(mean=[0.0, 20.0], stddev=[1.0, 40.0])),
    "noise_snp_u8": dict(op="noise.salt_and_pepper", input="u8_flat", args=dict(prob=0.2)),
    "noise_snp_per_channel": dict(op="noise.salt_and_pepper", input="u8_flat",
                                  args=dict(prob=0.3, per_channel=True, salt_vs_pepper=0.8)),
    "noise_snp_values": dict(op="noise.salt_and_pepper", input="u8_flat",
                             args=dict(prob=0.5, salt_val=3.7, pepper_val=-2.0)),
    "noise_snp_f32": dict(op="noise.salt_and_pepper", input="f32_noise", args=dict(prob=0.1, salt_vs_pepper=0.3)),
    "noise_snp_i16": dict(op="noise.salt_and_pepper", input="i16_flat", args=dict(prob=0.25)),
    "noise_snp_chw": dict(op="noise.salt_and_pepper", input="u8_chw_flat", layout="CHW", args=dict(prob=0.2)),
    "noise_shot_u8": dict(op="noise.shot", input="u8_flat", args=dict(factor=20.0)),
    "noise_shot_small": dict(op="noise.shot", input="u8_flat", args=dict(factor=15.0)),
    "noise_shot_f32": dict(op="noise.shot", input="f32_noise", args=dict(factor=0.05)),
    "noise_shot_per_sample": dict(op="noise.shot", input="u8_flat", per_sample=dict(factor=[2.0, 30.0])),
}

_NORMALIZE = {
    "norm_all": dict(op="normalize", input="f32_3d"),
    "norm_axes_01": dict(op="normalize", input="f32_3d", args=dict(axes=[0, 1])),
    "norm_axes_last": dict(op="normalize", input="f32_3d", args=dict(axes=[2], ddof=1)),
    "norm_names": dict(op="normalize", input="f32_3d", args=dict(axis_names="HW", epsilon=0.5)),
    "norm_ragged": dict(op="normalize", input="f32_ragged", args=dict(axes=[0, 2])),
    "norm_batch": dict(op="normalize", input="f32_3d", args=dict(batch=True, axes=[0, 1])),
    "norm_batch_ragged": dict(op="normalize", input="f32_ragged", args=dict(batch=True, axes=[0], ddof=2)),
    "norm_batch_all": dict(op="normalize", input="f32_ragged", args=dict(batch=True)),
    "norm_scalars": dict(op="normalize", input="f32_3d", args=dict(mean=1.0, stddev=2.0, epsilon=0.25)),
    "norm_mean_only": dict(op="normalize", input="f32_3d", args=dict(mean=1.0, axes=[0, 1], ddof=2)),
    "norm_scale_u8": dict(op="normalize", input="u8_hwc", args=dict(scale=64.0, shift=128.0, dtype="uint8")),
    "norm_i16_out": dict(op="normalize", input="f32_3d", args=dict(axes=[2], scale=1000.0, dtype="int16")),
    "norm_const": dict(op="normalize", input="f32_const", layout="HW", args=dict(shift=3.0)),
    "norm_tensor_mean": dict(op="normalize", input="f32_3d",
                             per_sample=dict(mean=[np.full((1, 5, 1), v) for v in (3.0, 1.0, 0.0)])),
    "norm_tensor_both": dict(op="normalize", input="f32_3d", args=dict(axes=[0, 2]),
                             per_sample=dict(mean=[np.full((1, 5, 1), v) for v in (3.0, 1.0, 0.0)],
                                             stddev=[np.full((1, 5, 1), v) for v in (30.0, 0.5, 2.0)])),
    "norm_1d_u8": dict(op="normalize", input="u8_1d", layout=""),
}
_LUT = {
    "lut_float": dict(op="lookup_table", input="u8_hwc",
                      args=dict(keys=list(range(0, 256, 3)), values=[k / 7.0 for k in range(0, 256, 3)],
                                default_value=-1.5)),
    "lut_u8": dict(op="lookup_table", input="u8_hwc",
                   args=dict(keys=[0, 2, 3, 5, 3, 200], values=[0.2, 2.7, -3.5, 300.6, 0.1, 7.5],
                             default_value=9.9, dtype="uint8")),
    "lut_i16_in": dict(op="lookup_table", input="i16_lut", layout="HW",
                       args=dict(keys=[0, 1, 250], values=[10.0, -20.5, 30.0], default_value=0.5, dtype="int32")),
    "lut_empty": dict(op="lookup_table", input="u8_hwc", args=dict(default_value=0.33, dtype="float16")),
    "lut_int64": dict(op="lookup_table", input="u8_1d", layout="", args=dict(keys=[0, 1], values=[100, 200],
                                                                           dtype="int64")),
}

_EQUALIZE = {
    "eq_hwc": dict(op="equalize", input="u8_skewed"),
    "eq_chw": dict(op="equalize", input="u8_skewed_chw", layout="CHW"),
    "eq_hw": dict(op="equalize", input="u8_skewed_hw", layout="HW"),
    "eq_fhwc": dict(op="equalize", input="u8_skewed_fhwc", layout="FHWC"),
    "eq_experimental": dict(op="experimental.equalize", input="u8_skewed"),
}
# DALI has these on the GPU only: the expectation is OpenCV's (which DALI's own tests hold them to)
_OPENCV = {
    "median_3": dict(op="experimental.median_blur", input="u8_big", ref="opencv", args=dict(window_size=3)),
    "median_5_f32": dict(op="experimental.median_blur", input="f32_hwc", ref="opencv", args=dict(window_size=[5, 5])),
    "median_u16": dict(op="experimental.median_blur", input="u16_hw", layout="HW", ref="opencv",
                       args=dict(window_size=[5, 5])),
    "median_fchw": dict(op="experimental.median_blur", input="u8_fchw", layout="FCHW", ref="opencv",
                        args=dict(window_size=[3, 3])),
    "dilate_u8": dict(op="experimental.dilate", input="u8_big", ref="opencv", args=dict(mask_size=[3, 5])),
    "dilate_anchor": dict(op="experimental.dilate", input="u8_big", ref="opencv",
                               args=dict(mask_size=[4, 3], anchor=[0, 2])),
    "dilate_iter_reflect": dict(op="experimental.dilate", input="f32_hwc", ref="opencv",
                                args=dict(mask_size=[3, 3], iterations=2, border_mode="reflect")),
    "erode_u8": dict(op="experimental.erode", input="u8_big", ref="opencv", args=dict(mask_size=[5, 3])),
    "erode_replicate_chw": dict(op="experimental.erode", input="u8_chw", layout="CHW", ref="opencv",
                                args=dict(mask_size=[3, 4], anchor=[2, 1], border_mode="replicate")),
    "erode_101_u16": dict(op="experimental.erode", input="u16_hw", layout="HW", ref="opencv",
                          args=dict(mask_size=[5, 5], border_mode="reflect_101")),
}

_WAVES = dict(ampl_x=3.3, ampl_y=2.1, freq_x=0.3, freq_y=0.21, phase_x=0.4, phase_y=1.1)
_DISTORT = {
    "water_default": dict(op="water", input="u8_big"),
    "water_nn": dict(op="water", input="u8_big", args=dict(_WAVES, fill_value=17.0)),
    "water_linear_f32": dict(op="water", input="f32_hwc", args=dict(_WAVES, interp_type="INTERP_LINEAR")),
    "water_linear_u8": dict(op="water", input="u8_big", args=dict(_WAVES, interp_type="INTERP_LINEAR",
                                                                  fill_value=99.7)),
    "water_mask": dict(op="water", input="u8_hwc", per_sample=dict(mask=[1, 0, 1]), int_args=("mask",)),
    "water_no_layout": dict(op="water", input="u8_big", layout=""),
    "sphere_u8": dict(op="sphere", input="u8_big"),
    "sphere_ragged": dict(op="sphere", input="u8_hwc_ragged", args=dict(interp_type="INTERP_LINEAR")),
    "sphere_f32_fill": dict(op="sphere", input="f32_hwc", args=dict(interp_type="INTERP_LINEAR", fill_value=-5.0)),
    "gridmask_default": dict(op="grid_mask", input="u8_big", args=dict(tile=8)),
    "gridmask_rotated": dict(op="grid_mask", input="u8_big", args=dict(tile=7, ratio=0.3, angle=0.7,
                                                                      shift_x=2.5, shift_y=-1.25)),
    "gridmask_f32": dict(op="grid_mask", input="f32_hwc", args=dict(tile=4, ratio=0.6, angle=-2.0)),
    "gridmask_i16": dict(op="grid_mask", input="i16_hwc", args=dict(tile=3, ratio=0.4)),
    "gridmask_per_sample": dict(op="grid_mask", input="u8_hwc",
                                per_sample=dict(tile=[3, 5, 9], angle=[0.0, 1.0, 2.0], ratio=[0.2, 0.5, 0.8]),
                                int_args=("tile",)),
}

# libjpeg through OpenCV on DALI's side: compared by mean absolute difference (tests/test_ops_distort.py)
_JPEG = {
    "jpeg_q50": dict(op="jpeg_compression_distortion", input="u8_photo"),
    "jpeg_q5": dict(op="jpeg_compression_distortion", input="u8_photo", args=dict(quality=5)),
    "jpeg_q95": dict(op="jpeg_compression_distortion", input="u8_photo", args=dict(quality=95)),
    "jpeg_per_sample": dict(op="jpeg_compression_distortion", input="u8_photo", per_sample=dict(quality=[20, 80]),
                            int_args=("quality",)),
    "jpeg_sequence": dict(op="jpeg_compression_distortion", input="u8_photo_seq", layout="FHWC",
                          args=dict(quality=30)),
}

_CLAHE = {
    "clahe_gray": dict(op="clahe", input="u8_gray", args=dict(tiles_x=4, tiles_y=3, clip_limit=2.0)),
    "clahe_gray_hwc": dict(op="clahe", input="u8_gray", args=dict(tiles_x=2, tiles_y=2, clip_limit=3.0)),
    "clahe_per_channel": dict(op="clahe", input="u8_photo",
                              args=dict(tiles_x=8, tiles_y=8, clip_limit=2.0, luma_only=False)),
    "clahe_no_clip": dict(op="clahe", input="u8_skewed", args=dict(tiles_x=3, tiles_y=5, clip_limit=0.0,
                                                                  luma_only=False)),
    "clahe_luma": dict(op="clahe", input="u8_photo", args=dict(tiles_x=4, tiles_y=4, clip_limit=2.5)),
    # DALI 2.4 equalizes over 256 bins whatever `bins` says
    "clahe_bins_64": dict(op="clahe", input="u8_gray", args=dict(tiles_x=3, tiles_y=2, clip_limit=1.5, bins=64)),
    "clahe_bins_100": dict(op="clahe", input="u8_photo", args=dict(tiles_x=2, tiles_y=2, clip_limit=2.0, bins=100,
                                                                   luma_only=False)),
}

CASES: dict[str, dict[str, Any]] = {**_COLOR, **_CSC, **_BLUR, **_LAPLACIAN, **_FILTER, **_NOISE, **_NORMALIZE,
                                    **_LUT, **_EQUALIZE, **_OPENCV, **_DISTORT, **_JPEG, **_CLAHE}


def noise_stats(case: dict[str, Any], x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Statistics of one noisy sample `y` of input `x`, and how far two independent draws' values
    may lie apart (6 standard errors of their difference)."""
    n = x.size
    d = y.astype(np.float64) - x.astype(np.float64)
    if case["op"] == "noise.gaussian":
        sd = d.std()
        lo, hi = (np.iinfo(y.dtype).min, np.iinfo(y.dtype).max) if y.dtype.kind in "iu" else (-np.inf, np.inf)
        f_lo, f_hi = (y == lo).mean(), (y == hi).mean()
        vals = [d.mean(), sd, f_lo, f_hi]
        tols = [6 * np.sqrt(2) * sd / np.sqrt(n) + 0.02, 0.06 * sd + 0.02,
                *(6 * np.sqrt(2 * f * (1 - f) / n) + 1e-3 for f in (f_lo, f_hi))]
    elif case["op"] == "noise.salt_and_pepper":
        changed = y != x
        ax = 0 if case.get("layout", "HWC").startswith("C") else -1  # the channel axis
        hit = changed.any(axis=ax)
        same = (changed.all(axis=ax) | ~changed.any(axis=ax)).mean()
        top = np.sort(np.unique(y[changed]))[-1:] if changed.any() else np.zeros(1)
        f_top = (y[changed] == top[0]).mean() if changed.any() else 0.0
        f = changed.mean()
        vals = [f, f_top, same]
        tols = [6 * np.sqrt(2 * f * (1 - f) / hit.size) + 1e-3, 6 * np.sqrt(2 * f_top * (1 - f_top) / max(1, changed.sum()))
                + 1e-3, 6 * np.sqrt(2 * same * (1 - same) / (n / 3)) + 1e-3]
    else:
        m, v = y.astype(np.float64).mean(), d.var()
        vals = [m, v]
        tols = [6 * np.sqrt(2 * v / n) + 0.02, 6 * v * np.sqrt(2 * 2.0 / n) + 0.02 + 0.01 * v]
    return np.array(vals, np.float64), np.array(tols, np.float64)


def _feed(batch: list[np.ndarray]) -> Any:
    """A source taking no arguments (DALI passes an iteration index to one that takes any)."""
    return lambda: list(batch)


def graph(fn: Any, types: Any, case: dict[str, Any], batch: list[np.ndarray]) -> Any:
    """The case's pipeline body on DALI's or torch_dali's `fn`/`types`: returns its output node."""
    layout = case.get("layout", "HWC")
    x = fn.external_source(source=_feed(batch), batch=True, layout=layout)
    kw = dict(case.get("args", {}))
    for key in ("dtype",):
        if key in kw:
            kw[key] = getattr(types, {"float": "FLOAT", "float16": "FLOAT16"}.get(kw[key], kw[key].upper()))
    for key in ("image_type", "output_type", "interp_type"):
        if key in kw:
            kw[key] = getattr(types, kw[key])
    for key, values in case.get("per_sample", {}).items():
        dt = np.int32 if key in ("window_size", "smoothing_size", "anchor") + case.get("int_args", ()) else np.float32
        kw[key] = fn.external_source(source=_feed([np.array(v, dtype=dt) for v in values]), batch=True)
    ins = [x]
    if "filter" in case:
        ins.append(fn.external_source(source=_feed(kernels()[case["filter"]][:len(batch)]), batch=True))
    if "fill" in case:
        dt = batch[0].dtype
        ins.append(fn.external_source(source=_feed([np.array(v, dtype=dt) for v in case["fill"][:len(batch)]]),
                                      batch=True))
    op = fn
    for part in case["op"].split("."):
        op = getattr(op, part)
    return op(*ins, **kw)
