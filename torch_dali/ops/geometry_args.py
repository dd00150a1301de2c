"""Argument groups several geometry ops share: the resampling filter (resize, random_resized_crop,
resize_crop_mirror) and the crop window (crop, crop_mirror_normalize)."""
from __future__ import annotations

from .. import types
from ._schema import Arg, non_negative, one_of, positive, unit_interval


def filter_args() -> tuple[Arg, ...]:
    return (
        Arg("interp_type", "interp_type", types.INTERP_LINEAR, "resampling filter", tensor=True),
        Arg("min_filter", "interp_type", None, "filter for shrinking dimensions (default: interp_type)",
            tensor=True),
        Arg("mag_filter", "interp_type", None, "filter for growing dimensions (default: interp_type)",
            tensor=True),
        Arg("antialias", "bool", True, "widen the filter when downscaling"),
        Arg("dtype", "dtype", None, "output type (default: the input's)"),
        Arg("minibatch_size", "int", 32, "accepted for compatibility; unused", check=positive),
        Arg("temp_buffer_hint", "int", 0, "accepted for compatibility; unused"),
    )


CROP_ARGS = (
    Arg("crop", "floats", None, "window size (height, width), or (depth, height, width)", tensor=True),
    Arg("crop_d", "float", 0.0, "window depth (volumes: layouts with D)", tensor=True, check=non_negative),
    Arg("crop_pos_z", "float", 0.5, "relative depth window position, 0 front .. 1 back", tensor=True,
        check=unit_interval),
    Arg("crop_h", "float", 0.0, "window height (with crop_w)", tensor=True, check=non_negative),
    Arg("crop_w", "float", 0.0, "window width (with crop_h)", tensor=True, check=non_negative),
    Arg("crop_pos_x", "float", 0.5, "relative horizontal window position, 0 left .. 1 right",
        tensor=True, check=unit_interval),
    Arg("crop_pos_y", "float", 0.5, "relative vertical window position, 0 top .. 1 bottom",
        tensor=True, check=unit_interval),
    Arg("out_of_bounds_policy", "oob_policy", "error", "windows leaving the image: error, pad or "
        "trim_to_shape"),
    Arg("fill_values", "floats", (0.0,), "padding value, one or one per channel"),
    Arg("rounding", "str", "round", "how the window anchor becomes an integer",
        check=one_of("round", "truncate")),
    Arg("image_type", "image_type", None, "legacy; accepted and ignored"),
)
