"""TrivialAugment Wide (https://arxiv.org/abs/2103.10158): per sample, one augmentation drawn
uniformly from a suite, at a magnitude bin drawn uniformly (with a random sign for the
augmentations that take one)."""
from __future__ import annotations

from typing import Any, List, Optional

from .. import fn, types
from ..errors import ArgumentError
from ..graph.node import DataNode
from . import augmentations as a
from ._seeds import derived_seeds
from .core import Augmentation, signed_bin
from .core._args import forbid_unused_kwargs
from .core._utils import checked_names, get_translations, pretty_select


def trivial_augment_wide(data: DataNode, num_magnitude_bins: int = 31, shape: Any = None,
                         fill_value: Optional[int] = 128, interp_type: Any = None, max_translate_abs: Any = None,
                         max_translate_rel: Any = None, seed: Optional[int] = None,
                         excluded: Optional[List[str]] = None) -> DataNode:
    """TrivialAugment Wide on `data` (uint8 HWC images or FHWC videos).

    `shape`, `fill_value`, `interp_type`, `max_translate_abs` (default 32 pixels) and
    `max_translate_rel` (default 1) are as for `auto_augment`; `excluded` names augmentations of
    the wide suite to leave out; `seed` fixes the random choices."""
    use_shape = shape is not None
    suite = checked_names(get_trivial_augment_wide_suite(use_shape, max_translate_abs, max_translate_rel),
                          excluded, "TrivialAugmentWide")
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if use_shape:
        kwargs["shape"] = shape
    return apply_trivial_augment(suite, data, num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs)


def apply_trivial_augment(augmentations: List[Augmentation], data: DataNode, num_magnitude_bins: int = 31,
                          seed: Optional[int] = None, **kwargs: Any) -> DataNode:
    """`augmentations` applied as TrivialAugment does (see the module's doc). `kwargs` go to each
    augmentation that declares them; one that none declares is an error."""
    if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise ArgumentError(f"apply_trivial_augment: `num_magnitude_bins` must be a positive integer, "
                            f"got {num_magnitude_bins!r}")
    if len(augmentations) == 0:
        raise ArgumentError("apply_trivial_augment: the list of augmentations is empty")
    forbid_unused_kwargs(augmentations, kwargs, "apply_trivial_augment")
    seeds = derived_seeds(seed, 3)
    magnitude_bin: Any = fn.random.uniform(values=list(range(num_magnitude_bins)), dtype=types.INT32, seed=seeds[0])
    if any(aug.randomly_negate for aug in augmentations):
        magnitude_bin = signed_bin(magnitude_bin, seed=seeds[1])
    op = fn.random.uniform(values=list(range(len(augmentations))), dtype=types.INT32, seed=seeds[2])
    return pretty_select(augmentations, op, dict(data=data, magnitude_bin=magnitude_bin,
                                                 num_magnitude_bins=num_magnitude_bins, **kwargs),
                         auto_aug_name="apply_trivial_augment", ref_suite_name="get_trivial_augment_wide_suite")


def get_trivial_augment_wide_suite(use_shape: bool = False, max_translate_abs: Any = None,
                                   max_translate_rel: Any = None) -> List[Augmentation]:
    """The 14 augmentations of TrivialAugment's wide space. `use_shape`: translations relative to
    the image (up to `max_translate_rel`, default 1) rather than up to `max_translate_abs` pixels
    (default 32)."""
    translations = get_translations(use_shape, 32, 1.0, max_translate_abs, max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.99), True),
        a.shear_y.augmentation((0, 0.99), True),
        a.rotate.augmentation((0, 135), True),
        a.brightness.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.contrast.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.color.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.sharpness.augmentation((0.01, 0.99), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 2), False, a.poster_mask_uint8),  # fewer bits kept at higher bins
        a.solarize.augmentation((256, 0)),  # a lower threshold inverts more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
