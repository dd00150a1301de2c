"""Cases for the automatic augmentations, shared by DALI's side (auto_aug_dali.py) and ours
(tests/test_auto_aug_ops.py): every augmentation of each standard suite, alone, at fixed
magnitude bins and signs, on the same images. Written against DALI's API, run with either
package's `fn`, `types` and `auto_aug` passed in; NumPy only here."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

TABLES = "auto_aug_tables.npz"
NUM_BINS = 11


def images() -> list[np.ndarray]:
    """Two HWC uint8 images of different sizes (a ragged batch): smooth ramps, a bright and a dark
    block (for solarize, auto contrast, equalize) and some noise."""
    rng = np.random.default_rng(20240601)
    out = []
    for h, w in ((13, 17), (16, 12)):
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        img = np.stack([40 + 150 * x / w, 30 + 180 * y / h, 200 - 120 * (x + y) / (h + w)], axis=-1)
        img[2:5, 3:8] = [250, 245, 235]
        img[h - 5:h - 2, w - 7:w - 3] = [10, 25, 5]
        img += rng.normal(0, 6, img.shape)
        out.append(np.clip(np.round(img), 0, 255).astype(np.uint8))
    return out


def videos() -> list[np.ndarray]:
    """Two FHWC uint8 videos of two frames: the images, shifted in brightness."""
    return [np.stack([np.clip(base.astype(np.int32) + d, 0, 255).astype(np.uint8) for d in (-40, 35)])
            for base in images()]


# the suites, as each side builds them: (module, function, keyword arguments)
SUITES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "rand": ("rand_augment", "get_rand_augment_suite", {}),
    "rand_non_monotonic": ("rand_augment", "get_rand_augment_non_monotonic_suite", {}),
    "trivial": ("trivial_augment", "get_trivial_augment_wide_suite", {"max_translate_abs": (6, 9)}),
    "image_net": ("auto_augment", "get_image_net_policy", {}),
    "reduced_cifar10": ("auto_augment", "get_reduced_cifar10_policy", {"use_shape": True,
                                                                       "max_translate_rel": 0.3}),
}

VIDEO_SUITES = ("rand", "image_net")  # where each augmentation also runs once on videos


def suite(auto_aug: Any, name: str) -> list[Any]:
    """The suite's augmentations (a policy's, sorted by name)."""
    module, function, kwargs = SUITES[name]
    made = getattr(getattr(auto_aug, module), function)(**kwargs)
    return list(made.augmentations.values()) if hasattr(made, "augmentations") else list(made)


def cases(auto_aug: Any, name: str) -> list[tuple[str, int | None, int]]:
    """(augmentation, magnitude bin or None, sign) for every case of suite `name`: bins 3 and the
    last, both signs where the magnitude is negated at random."""
    out = []
    for aug in suite(auto_aug, name):
        if aug.mag_range is None:
            out.append((aug.name, None, 0))
            continue
        for b in (3, NUM_BINS - 1):
            for s in ((0, 1) if aug.randomly_negate else (0,)):
                out.append((aug.name, b, s))
    return out


def takes_shape(aug: Any) -> bool:
    return "shape" in inspect.signature(aug.op).parameters


def plan(auto_aug: Any, name: str) -> list[tuple[str, str, int | None, int, str]]:
    """The outputs of `graph`, in order: (key, augmentation, bin, sign, "image" or "video"). Each
    augmentation that does not need the image shape also runs once on the videos."""
    augs = {aug.name: aug for aug in suite(auto_aug, name)}
    out = []
    seen: set[str] = set()
    for aug_name, b, s in cases(auto_aug, name):
        out.append((f"{name}/{aug_name}/{b}/{s}", aug_name, b, s, "image"))
        if name in VIDEO_SUITES and aug_name not in seen and not takes_shape(augs[aug_name]):
            seen.add(aug_name)
            out.append((f"{name}/{aug_name}/{b}/{s}/video", aug_name, b, s, "video"))
    return out


def graph(fn: Any, types: Any, auto_aug: Any, name: str, images: Any, videos: Any, shapes: Any = None) -> list[Any]:
    """The outputs listed by `plan`, for the DataNodes `images` (HWC) and `videos` (FHWC);
    `shapes`: the images' shapes (default `images.shape()`), for the translations that need them."""
    augs = {aug.name: aug for aug in suite(auto_aug, name)}
    outs = []
    for _, aug_name, b, s, kind in plan(auto_aug, name):
        aug = augs[aug_name]
        data = images if kind == "image" else videos
        if b is None:
            mbin: Any = None
        elif aug.randomly_negate:
            mbin = auto_aug.core.signed_bin(b, random_sign=types.Constant(np.int32(s), device="cpu"))
        else:
            mbin = b
        kwargs = {"shape": data.shape() if shapes is None else shapes} if takes_shape(aug) else {}
        outs.append(aug(data, magnitude_bin=mbin, num_magnitude_bins=NUM_BINS, **kwargs))
    return outs
