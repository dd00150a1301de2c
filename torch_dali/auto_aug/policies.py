"""The sub-policies AutoAugment found (https://arxiv.org/abs/1805.09501, appendix), as
(augmentation name, probability, magnitude bin of 11) per stage, and the augmentation set-up
each policy uses (magnitude ranges as in DALI 2.4: enhance factors in [0.1, 1.9], not negated)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from . import augmentations as a
from .core import Augmentation

Row = Sequence[tuple[str, float, Optional[int]]]

IMAGE_NET: list[Row] = [
    [("equalize", 0.8, None), ("shear_y", 0.8, 4)], [("color", 0.4, 9), ("equalize", 0.6, None)],
    [("color", 0.4, 1), ("rotate", 0.6, 8)], [("solarize", 0.8, 3), ("equalize", 0.4, None)],
    [("solarize", 0.4, 2), ("solarize", 0.6, 2)], [("color", 0.2, 0), ("equalize", 0.8, None)],
    [("equalize", 0.4, None), ("solarize_add", 0.8, 3)], [("shear_x", 0.2, 9), ("rotate", 0.6, 8)],
    [("color", 0.6, 1), ("equalize", 1.0, None)], [("invert", 0.4, None), ("rotate", 0.6, 0)],
    [("equalize", 1.0, None), ("shear_y", 0.6, 3)], [("color", 0.4, 7), ("equalize", 0.6, None)],
    [("posterize", 0.4, 6), ("auto_contrast", 0.4, None)], [("solarize", 0.6, 8), ("color", 0.6, 9)],
    [("solarize", 0.2, 4), ("rotate", 0.8, 9)], [("rotate", 1.0, 7), ("translate_y", 0.8, 9)],
    [("solarize", 0.8, 4)], [("shear_y", 0.8, 0), ("color", 0.6, 4)],
    [("color", 1.0, 0), ("rotate", 0.6, 2)], [("equalize", 0.8, None)],
    [("equalize", 1.0, None), ("auto_contrast", 0.6, None)], [("shear_y", 0.4, 7), ("solarize_add", 0.6, 7)],
    [("posterize", 0.8, 2), ("solarize", 0.6, 10)], [("solarize", 0.6, 8), ("equalize", 0.6, None)],
    [("color", 0.8, 6), ("rotate", 0.4, 5)],
]

REDUCED_CIFAR10: list[Row] = [
    [("invert", 0.1, None), ("contrast", 0.2, 6)], [("rotate", 0.7, 2), ("translate_x", 0.3, 9)],
    [("sharpness", 0.8, 1), ("sharpness", 0.9, 3)], [("shear_y", 0.5, 8), ("translate_y", 0.7, 9)],
    [("auto_contrast", 0.5, None), ("equalize", 0.9, None)], [("shear_y", 0.2, 7), ("posterize", 0.3, 7)],
    [("color", 0.4, 3), ("brightness", 0.6, 7)], [("sharpness", 0.3, 9), ("brightness", 0.7, 9)],
    [("equalize", 0.6, None), ("equalize", 0.5, None)], [("contrast", 0.6, 7), ("sharpness", 0.6, 5)],
    [("color", 0.7, 7), ("translate_x", 0.5, 8)], [("equalize", 0.3, None), ("auto_contrast", 0.4, None)],
    [("translate_y", 0.4, 3), ("sharpness", 0.2, 6)], [("brightness", 0.9, 6), ("color", 0.2, 8)],
    [("solarize", 0.5, 2)], [("equalize", 0.2, None), ("auto_contrast", 0.6, None)],
    [("equalize", 0.2, None), ("equalize", 0.6, None)], [("color", 0.9, 9), ("equalize", 0.6, None)],
    [("auto_contrast", 0.8, None), ("solarize", 0.2, 8)], [("brightness", 0.1, 3), ("color", 0.7, 0)],
    [("solarize", 0.4, 5), ("auto_contrast", 0.9, None)], [("translate_y", 0.9, 9), ("translate_y", 0.7, 9)],
    [("auto_contrast", 0.9, None), ("solarize", 0.8, 3)], [("equalize", 0.8, None), ("invert", 0.1, None)],
    [("translate_y", 0.7, 9), ("auto_contrast", 0.9, None)],
]

SVHN: list[Row] = [
    [("shear_x", 0.9, 4), ("invert", 0.2, None)], [("shear_y", 0.9, 8), ("invert", 0.7, None)],
    [("equalize", 0.6, None), ("solarize", 0.6, 6)], [("invert", 0.9, None), ("equalize", 0.6, None)],
    [("equalize", 0.6, None), ("rotate", 0.9, 3)], [("shear_x", 0.9, 4), ("auto_contrast", 0.8, None)],
    [("shear_y", 0.9, 8), ("invert", 0.4, None)], [("shear_y", 0.9, 5), ("solarize", 0.2, 6)],
    [("invert", 0.9, None), ("auto_contrast", 0.8, None)], [("equalize", 0.6, None), ("rotate", 0.9, 3)],
    [("shear_x", 0.9, 4), ("solarize", 0.3, 3)], [("shear_y", 0.8, 8), ("invert", 0.7, None)],
    [("equalize", 0.9, None), ("translate_y", 0.6, 6)], [("invert", 0.9, None), ("equalize", 0.6, None)],
    [("contrast", 0.3, 3), ("rotate", 0.8, 4)], [("invert", 0.8, None)],
    [("shear_y", 0.7, 6), ("solarize", 0.4, 8)], [("invert", 0.6, None), ("rotate", 0.8, 4)],
    [("shear_y", 0.3, 7), ("translate_x", 0.9, 3)], [("shear_x", 0.1, 6), ("invert", 0.6, None)],
    [("solarize", 0.7, 2), ("translate_y", 0.6, 7)], [("shear_y", 0.8, 4), ("invert", 0.8, None)],
    [("shear_x", 0.7, 9), ("translate_y", 0.8, 3)], [("shear_y", 0.8, 5), ("auto_contrast", 0.7, None)],
    [("shear_x", 0.7, 2), ("invert", 0.1, None)],
]

REDUCED_IMAGE_NET: list[Row] = [
    [("posterize", 0.4, 8), ("rotate", 0.6, 9)], [("solarize", 0.6, 5), ("auto_contrast", 0.6, None)],
    [("equalize", 0.8, None), ("equalize", 0.6, None)], [("posterize", 0.6, 7), ("posterize", 0.6, 6)],
    [("equalize", 0.4, None), ("solarize", 0.2, 4)], [("equalize", 0.4, None), ("rotate", 0.8, 8)],
    [("solarize", 0.6, 3), ("equalize", 0.6, None)], [("posterize", 0.8, 5), ("equalize", 1.0, None)],
    [("rotate", 0.2, 3), ("solarize", 0.6, 8)], [("equalize", 0.6, None), ("posterize", 0.4, 6)],
    [("rotate", 0.8, 8), ("color", 0.4, 0)], [("rotate", 0.4, 9), ("equalize", 0.6, None)],
    [("equalize", 0.8, None)], [("invert", 0.6, None), ("equalize", 1.0, None)],
    [("color", 0.6, 4), ("contrast", 1.0, 8)], [("rotate", 0.8, 8), ("color", 1.0, 2)],
    [("color", 0.8, 8), ("solarize", 0.8, 7)], [("sharpness", 0.4, 7), ("invert", 0.6, None)],
    [("shear_x", 0.6, 5), ("equalize", 1.0, None)], [("color", 0.4, 0), ("equalize", 0.6, None)],
    [("equalize", 0.4, None), ("solarize", 0.2, 4)], [("solarize", 0.6, 5), ("auto_contrast", 0.6, None)],
    [("invert", 0.6, None), ("equalize", 1.0, None)], [("color", 0.6, 4), ("contrast", 1.0, 8)],
    [("equalize", 0.8, None), ("equalize", 0.6, None)],
]


def policy_augmentations() -> dict[str, Augmentation]:
    """The augmentations the paper's policies use, set up as they use them (fresh objects per
    call, so that each policy has its own)."""
    enhance = ((0.1, 1.9), False, None)  # the factor itself, not 1 +/- a magnitude
    return {
        "shear_x": a.shear_x.augmentation((0, 0.3), True),
        "shear_y": a.shear_y.augmentation((0, 0.3), True),
        "rotate": a.rotate.augmentation((0, 30), True),
        "brightness": a.brightness.augmentation(*enhance),
        "contrast": a.contrast.augmentation(*enhance),
        "color": a.color.augmentation(*enhance),
        "sharpness": a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        "posterize": a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        "solarize": a.solarize.augmentation((0, 256), False),
        "solarize_add": a.solarize_add.augmentation((0, 110), False),
        "invert": a.invert, "equalize": a.equalize, "auto_contrast": a.auto_contrast,
    }


def _build(rows: list[Row], translations: Sequence[Augmentation]) -> list[list[tuple[Augmentation, float, Any]]]:
    augs = policy_augmentations()
    if translations:
        augs["translate_x"], augs["translate_y"] = translations
    return [[(augs[name], p, mag) for name, p, mag in row] for row in rows]


def image_net_sub_policies(*translations: Augmentation) -> list[list[tuple[Augmentation, float, Any]]]:
    return _build(IMAGE_NET, translations)


def reduced_cifar10_sub_policies(*translations: Augmentation) -> list[list[tuple[Augmentation, float, Any]]]:
    return _build(REDUCED_CIFAR10, translations)


def svhn_sub_policies(*translations: Augmentation) -> list[list[tuple[Augmentation, float, Any]]]:
    return _build(SVHN, translations)


def reduced_image_net_sub_policies() -> list[list[tuple[Augmentation, float, Any]]]:
    return _build(REDUCED_IMAGE_NET, ())
