"""RandAugment (https://arxiv.org/abs/1909.13719): per sample, `n` augmentations drawn uniformly
(with repetition) from a suite, applied one after another, each at magnitude bin `m` (with a
random sign for those that take one)."""
from __future__ import annotations

import warnings
from typing import Any, List, Optional

from .. import fn, types
from ..errors import ArgumentError
from ..graph.node import DataNode
from . import augmentations as a
from ._seeds import derived_seeds
from .core import Augmentation, signed_bin
from .core._args import forbid_unused_kwargs
from .core._utils import checked_names, get_translations, pretty_select

_DEFAULT_ABS, _DEFAULT_REL = 100, 100 / 224  # 100 pixels of a 224-pixel image


def rand_augment(data: DataNode, n: int, m: int, num_magnitude_bins: int = 31, shape: Any = None,
                 fill_value: Optional[int] = 128, interp_type: Any = None, max_translate_abs: Any = None,
                 max_translate_rel: Any = None, seed: Optional[int] = None, monotonic_mag: bool = True,
                 excluded: Optional[List[str]] = None) -> DataNode:
    """RandAugment on `data` (uint8 HWC images or FHWC videos): `n` augmentations per sample at
    magnitude bin `m` of `num_magnitude_bins`.

    `shape`, `fill_value`, `interp_type`, `max_translate_abs` (default 100 pixels) and
    `max_translate_rel` (default 100/224) are as for `auto_augment`. `monotonic_mag=False` uses
    the suite whose color ops get weaker toward the middle bins and posterize/solarize weaker with
    higher bins (`get_rand_augment_non_monotonic_suite`). `excluded` names augmentations of the
    suite to leave out. `seed` fixes the random choices."""
    use_shape = shape is not None
    make = get_rand_augment_suite if monotonic_mag else get_rand_augment_non_monotonic_suite
    suite = checked_names(make(use_shape, max_translate_abs, max_translate_rel), excluded, "RandAugment")
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if use_shape:
        kwargs["shape"] = shape
    return apply_rand_augment(suite, data, n, m, num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs)


def apply_rand_augment(augmentations: List[Augmentation], data: DataNode, n: int, m: int,
                       num_magnitude_bins: int = 31, seed: Optional[int] = None, **kwargs: Any) -> DataNode:
    """`augmentations` applied as RandAugment does (see the module's doc). `kwargs` go to each
    augmentation that declares them; one that none declares is an error."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ArgumentError(f"apply_rand_augment: `n` (augmentations per sample) must be a non-negative integer, "
                            f"got {n!r}")
    if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise ArgumentError(f"apply_rand_augment: `num_magnitude_bins` must be a positive integer, "
                            f"got {num_magnitude_bins!r}")
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < num_magnitude_bins:
        raise ArgumentError(f"apply_rand_augment: the magnitude bin `m` must be an integer in "
                            f"[0, {num_magnitude_bins - 1}], got {m!r}")
    if n == 0:
        warnings.warn("apply_rand_augment: n=0, so no augmentation is applied", Warning, stacklevel=2)
        return data
    if len(augmentations) == 0:
        raise ArgumentError("apply_rand_augment: the list of augmentations is empty (allowed only with n=0)")
    forbid_unused_kwargs(augmentations, kwargs, "apply_rand_augment")
    shape = () if n == 1 else (n,)  # one draw per step, all in one op
    seeds = derived_seeds(seed, 2)
    ops = fn.random.uniform(values=list(range(len(augmentations))), shape=shape, dtype=types.INT32, seed=seeds[0])
    signed = any(aug.randomly_negate for aug in augmentations)
    mag_bin: Any = signed_bin(m, seed=seeds[1], shape=shape) if signed else m
    for step in range(n):
        step_bin = mag_bin[step] if signed and n > 1 else mag_bin
        step_op = ops[step] if n > 1 else ops
        data = pretty_select(augmentations, step_op, dict(data=data, magnitude_bin=step_bin,
                                                          num_magnitude_bins=num_magnitude_bins, **kwargs),
                             auto_aug_name="apply_rand_augment", ref_suite_name="get_rand_augment_suite")
    return data


def get_rand_augment_suite(use_shape: bool = False, max_translate_abs: Any = None,
                           max_translate_rel: Any = None) -> List[Augmentation]:
    """RandAugment's 14 augmentations, each stronger with a higher bin. `use_shape`: translations
    relative to the image (up to `max_translate_rel`, default 100/224) rather than up to
    `max_translate_abs` pixels (default 100)."""
    translations = get_translations(use_shape, _DEFAULT_ABS, _DEFAULT_REL, max_translate_abs, max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.contrast.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.color.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.sharpness.augmentation((0, 0.9), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 4), False, a.poster_mask_uint8),  # fewer bits kept at higher bins
        a.solarize.augmentation((256, 0)),  # a lower threshold inverts more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]


def get_rand_augment_non_monotonic_suite(use_shape: bool = False, max_translate_abs: Any = None,
                                         max_translate_rel: Any = None) -> List[Augmentation]:
    """RandAugment's suite with AutoAugment's color ranges: enhance factors in [0.1, 1.9] (neutral
    in the middle bins), posterize bits in [0, 4] and solarize thresholds in [0, 256], so those
    do not get stronger with the bin."""
    translations = get_translations(use_shape, _DEFAULT_ABS, _DEFAULT_REL, max_translate_abs, max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0.1, 1.9), False, None),
        a.contrast.augmentation((0.1, 1.9), False, None),
        a.color.augmentation((0.1, 1.9), False, None),
        a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((0, 256), False, None),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
