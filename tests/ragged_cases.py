"""Batches of variable-size images through the ops that run them as one batched call on CUDA
(`torch_dali.ops.batching`), and a runner that forces that path on or off, so tests compare the
batched result with the per-sample one: on CPU tensors (tests/test_ragged_batches.py) and on
CUDA (tests/gpu/test_gpu_ragged.py)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.ops import batching, color, geometry


def images(n: int, lo: int, hi: int, seed: int = 0, channels: int | None = 3) -> list[np.ndarray]:
    """n uint8 images of random sizes in [lo, hi) (HWC, or HW with channels=None)."""
    g = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shape = (int(g.integers(lo, hi)), int(g.integers(lo, hi))) + ((channels,) if channels else ())
        out.append(g.integers(0, 256, shape).astype(np.uint8))
    return out


def _u(lo: float, hi: float, seed: int = 1) -> Any:
    return fn.random.uniform(range=(lo, hi), seed=seed)


M3 = [1.0, 0.05, -2.0, 0.02, 1.0, -1.0, 1e-3, 2e-3, 1.0]
M3B = [1.2, 0.05, -2.0, 0.02, 0.8, -1.0, 1e-3, 2e-3, 1.0]
Build = Callable[[Any], Any]
# name -> pipeline body on the fed images (HWC uint8)
CASES: dict[str, Build] = {
    "brightness_contrast": lambda x: fn.brightness_contrast(x, brightness=_u(.5, 1.5), contrast=_u(.5, 1.5, 2),
                                                            brightness_shift=0.1),
    "brightness_contrast_center_float": lambda x: fn.brightness_contrast(
        x, contrast=_u(.5, 1.5, 2), contrast_center=_u(50, 200, 3), dtype=types.FLOAT),
    "hsv": lambda x: fn.hsv(x, hue=_u(-40, 40), saturation=_u(.3, 1.7, 2), value=0.9),
    "color_twist": lambda x: fn.color_twist(x, hue=_u(-40, 40), saturation=_u(.3, 1.7, 2), brightness=_u(.5, 1.5, 3),
                                            contrast=1.3),
    "brightness": lambda x: fn.brightness(x, brightness=_u(.5, 1.5), brightness_shift=_u(-.1, .1, 5)),
    "contrast": lambda x: fn.contrast(x, contrast=_u(.5, 1.5)),
    "hue": lambda x: fn.hue(x, hue=_u(-40, 40)),
    "saturation": lambda x: fn.saturation(x, saturation=_u(0, 2)),
    "csc_ycbcr": lambda x: fn.color_space_conversion(x, image_type=types.RGB, output_type=types.YCbCr),
    "csc_bgr_gray": lambda x: fn.color_space_conversion(x, image_type=types.BGR, output_type=types.GRAY),
    "rotate_keep_size": lambda x: fn.rotate(x, angle=_u(-40, 40), keep_size=True, fill_value=7),
    "rotate_fit": lambda x: fn.rotate(x, angle=_u(-40, 40)),
    "rotate_nn_float_size": lambda x: fn.rotate(fn.cast(x, dtype=types.FLOAT), angle=_u(-40, 40),
                                                interp_type=types.INTERP_NN, size=(20, 17)),
    "warp_affine_rotation": lambda x: fn.warp_affine(
        x, matrix=fn.transforms.rotation(angle=_u(-30, 30), center=(10, 12)), fill_value=0, inverse_map=False),
    "warp_affine_fixed": lambda x: fn.warp_affine(x, matrix=[1.1, 0.2, -3, -0.1, 0.9, 2]),
    "warp_affine_float_fill": lambda x: fn.warp_affine(x, matrix=[1.1, 0.2, -3, -0.1, 0.9, 2], dtype=types.FLOAT,
                                                       fill_value=300),
    "warp_perspective_constant": lambda x: fn.experimental.warp_perspective(x, matrix=M3, fill_value=[5.0]),
    "warp_perspective_reflect_cubic": lambda x: fn.experimental.warp_perspective(
        x, matrix=M3, border_mode="reflect", interp_type=types.INTERP_CUBIC),
    "warp_perspective_101_center_size": lambda x: fn.experimental.warp_perspective(
        x, matrix=M3B, border_mode="reflect_101", pixel_origin="center", size=(15, 21)),
    "warp_perspective_wrap_nn_int16": lambda x: fn.experimental.warp_perspective(
        fn.cast(x, dtype=types.INT16), matrix=M3B, border_mode="wrap", interp_type=types.INTERP_NN),
    "warp_perspective_int16_linear": lambda x: fn.experimental.warp_perspective(
        fn.cast(x, dtype=types.INT16), matrix=M3B, border_mode="replicate"),
    "gaussian_blur_sigma": lambda x: fn.gaussian_blur(x, sigma=1.5),
    "gaussian_blur_window": lambda x: fn.gaussian_blur(x, window_size=5),
    "gaussian_blur_axes_float": lambda x: fn.gaussian_blur(x, sigma=(0.7, 2.5), dtype=types.FLOAT),
    "gaussian_blur_per_sample": lambda x: fn.gaussian_blur(
        x, sigma=fn.cast(fn.random.uniform(range=(1, 3)), dtype=types.INT32) * 0.5),
    "gaussian_blur_wide": lambda x: fn.gaussian_blur(x, sigma=6.0),
    "laplacian": lambda x: fn.laplacian(x, window_size=3),
    "laplacian_mixed_float": lambda x: fn.laplacian(x, window_size=(5, 3), smoothing_size=(1, 7), dtype=types.FLOAT),
    "laplacian_normalized": lambda x: fn.laplacian(fn.cast(x, dtype=types.FLOAT), window_size=7,
                                                   normalized_kernel=True),
    "laplacian_scale": lambda x: fn.laplacian(x, window_size=5, scale=(0.5, 2.0)),
    "noise_gaussian": lambda x: fn.noise.gaussian(x, stddev=_u(1, 20), mean=2.0),
    "noise_gaussian_float": lambda x: fn.noise.gaussian(fn.cast(x, dtype=types.FLOAT), stddev=3.0),
    "salt_and_pepper": lambda x: fn.noise.salt_and_pepper(x, prob=_u(0.05, 0.5)),
    "salt_and_pepper_per_channel": lambda x: fn.noise.salt_and_pepper(x, prob=0.3, per_channel=True, salt_val=200,
                                                                      pepper_val=_u(0, 50)),
    "water": lambda x: fn.water(x),
    "water_linear_mask": lambda x: fn.water(x, interp_type=types.INTERP_LINEAR, ampl_x=3.5, freq_y=0.3, fill_value=9,
                                            mask=fn.random.coin_flip(seed=4)),
    "water_float": lambda x: fn.water(fn.cast(x, dtype=types.FLOAT), interp_type=types.INTERP_LINEAR),
    "jitter": lambda x: fn.jitter(x, nDegree=3),
    "jitter_mask0": lambda x: fn.jitter(x, mask=0),
    "median_blur": lambda x: fn.experimental.median_blur(x),
    "median_blur_5x3_float": lambda x: fn.experimental.median_blur(fn.cast(x, dtype=types.FLOAT), window_size=(5, 3)),
    "dilate": lambda x: fn.experimental.dilate(x),
    "dilate_iterations_reflect": lambda x: fn.experimental.dilate(x, mask_size=(4, 2), anchor=(0, 1), iterations=3,
                                                                  border_mode="reflect"),
    "erode_wrap": lambda x: fn.experimental.erode(x, mask_size=(5, 3), border_mode="wrap", iterations=2),
    "erode_101_int16": lambda x: fn.experimental.erode(fn.cast(x, dtype=types.INT16), mask_size=(3, 5),
                                                       border_mode="reflect_101"),
    "dilate_replicate": lambda x: fn.experimental.dilate(x, mask_size=(1, 5), border_mode="replicate"),
    "flip": lambda x: fn.flip(x),
    "flip_per_sample": lambda x: fn.flip(x, horizontal=fn.random.coin_flip(seed=3),
                                         vertical=fn.random.coin_flip(seed=5)),
    "crop_mirror_normalize": lambda x: fn.crop_mirror_normalize(
        x, crop=(5, 7), mirror=fn.random.coin_flip(seed=3), mean=[10, 20, 30], std=[50, 60, 70],
        crop_pos_x=_u(0, 1, 4), crop_pos_y=_u(0, 1, 5)),
    "crop_mirror_normalize_hwc_uint8": lambda x: fn.crop_mirror_normalize(
        x, crop=(5, 7), output_layout="HWC", dtype=types.UINT8, mean=[10], std=[0.5], scale=0.7, shift=3),
    "crop_mirror_normalize_pad_half": lambda x: fn.crop_mirror_normalize(x, crop=(5, 7), mean=[10], std=[50],
                                                                         pad_output=True, dtype=types.FLOAT16),
    "erase": lambda x: fn.erase(x, anchor=(0.25, 0.25), shape=(0.5, 0.5), normalized=True, axis_names="HW",
                                fill_value=0),
    "erase_regions": lambda x: fn.erase(x, anchor=(2, 3, 10, 1), shape=(4, 5, 30, 2), axis_names="HW",
                                        fill_value=(10, 20, 30)),
    "erase_centered_w": lambda x: fn.erase(x, anchor=(0.3,), shape=(0.2,), normalized=True, axis_names="W",
                                           centered_anchor=True, fill_value=99),
    "jpeg_compression_distortion": lambda x: fn.jpeg_compression_distortion(
        x, quality=fn.cast(_u(5, 95), dtype=types.INT32)),
}
# single-channel (HW) images: the filters and window ops take them too
HW_CASES: dict[str, Build] = {
    "gaussian_blur_hw": lambda x: fn.gaussian_blur(x, sigma=1.2),
    "laplacian_hw": lambda x: fn.laplacian(x, window_size=5),
    "median_blur_hw": lambda x: fn.experimental.median_blur(x, window_size=(3, 5)),
    "erode_hw": lambda x: fn.experimental.erode(x, mask_size=(3, 2)),
    "erase_hw": lambda x: fn.erase(x, anchor=(1, 2), shape=(3, 40), axis_names="HW", fill_value=5),
}


def run(build: Build, data: list[np.ndarray], batched: bool, monkeypatch: pytest.MonkeyPatch,
        device: str = "cpu", layout: str = "HWC") -> list[list[np.ndarray]]:
    """The pipeline `build` over `data` (one batch), with the batched path of variable-size
    batches forced on or off (`ops.batching.batched`; per-sample ops run per batch then)."""
    with monkeypatch.context() as m:
        m.setattr(batching, "batched", (lambda op, tl: batching.batchable(tl)) if batched else (lambda op, tl: False))
        if batched:  # per-sample ops chained on CPU threads would never see the batch
            m.setattr(color._ColorOp, "sample_wise", False, raising=False)
            m.setattr(geometry.ImageOp, "sample_wise", False, raising=False)

        @pipeline_def(batch_size=len(data), num_threads=1, device_id=0 if device == "gpu" else None, seed=3,
                      prefetch_queue_depth=1)
        def pipe():
            x = fn.external_source(source=lambda: data, batch=True, layout=layout)
            return build(x.gpu() if device == "gpu" else x)

        p = pipe()
        p.build()
        outs = p.run()
        return [[np.asarray(o.as_cpu().at(i)) for i in range(len(o))] for o in outs]
