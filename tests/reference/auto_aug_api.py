"""The public surface of an `auto_aug` package as plain data, for comparing torch_dali's with
DALI 2.4's: the signatures of the public functions, every standard augmentation's set-up (with
the parameters its magnitude bins give), each suite and each AutoAugment policy.

    /work/dali-venv/bin/python -m tests.reference.auto_aug_api      # rewrites auto_aug_api.json

NumPy and the given package only."""
from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np

STORED = Path(__file__).with_name("auto_aug_api.json")
BINS = 11

FUNCTIONS = {
    "auto_augment": ("auto_augment", "auto_augment_image_net", "apply_auto_augment", "get_image_net_policy",
                     "get_reduced_cifar10_policy", "get_svhn_policy", "get_reduced_image_net_policy"),
    "rand_augment": ("rand_augment", "apply_rand_augment", "get_rand_augment_suite",
                     "get_rand_augment_non_monotonic_suite"),
    "trivial_augment": ("trivial_augment_wide", "apply_trivial_augment", "get_trivial_augment_wide_suite"),
    "core": ("augmentation", "select", "signed_bin"),
    "augmentations": ("warp_x_param", "warp_y_param", "shift_enhance_range", "sharpness_kernel",
                      "sharpness_kernel_shifted", "poster_mask_uint8", "solarize_add_shift"),
}
AUGMENTATIONS = ("shear_x", "shear_y", "translate_x", "translate_x_no_shape", "translate_y", "translate_y_no_shape",
                 "rotate", "brightness", "contrast", "color", "sharpness", "posterize", "solarize", "solarize_add",
                 "invert", "equalize", "auto_contrast", "identity")
SUITES = {"rand": ("rand_augment", "get_rand_augment_suite"),
          "rand_non_monotonic": ("rand_augment", "get_rand_augment_non_monotonic_suite"),
          "trivial": ("trivial_augment", "get_trivial_augment_wide_suite")}
POLICIES = ("get_image_net_policy", "get_reduced_cifar10_policy", "get_svhn_policy", "get_reduced_image_net_policy")


def _default(p: inspect.Parameter) -> Any:
    if p.default is inspect.Parameter.empty:
        return "<required>"
    # anything else is a "not given" marker (each package has its own): only its presence counts
    return p.default if isinstance(p.default, (int, float, str, bool, type(None))) else "<marker>"


def signature(f: Any) -> list[list[Any]]:
    return [[p.name, _default(p), p.kind.name] for p in inspect.signature(f).parameters.values()]


def params(aug: Any) -> Any:
    """The parameter of every magnitude bin (signed ones as +m, -m) as nested lists, with dtype."""
    if aug.mag_range is None:
        return None
    mags = np.linspace(aug.mag_range[0], aug.mag_range[1], BINS, dtype=np.float32)
    mags = [s * m for m in mags for s in ((1, -1) if aug.randomly_negate else (1,))]
    out = [np.array(aug.mag_to_param(m)) for m in mags]
    return {"dtype": str(out[0].dtype), "values": [np.round(o.astype(np.float64), 6).tolist() for o in out]}


def tables(aug: Any) -> Any:
    """The magnitudes of `BINS` bins and their parameters as the augmentation's own helpers give
    them (`_get_magnitudes`, `_map_mags_to_params`: DALI's names, which DALI's tests call)."""
    mags = aug._get_magnitudes(BINS)
    if mags is None:
        return None
    out = aug._map_mags_to_params(mags)
    return {"magnitudes": [str(mags.dtype), np.round(mags.astype(np.float64), 6).tolist()],
            "params": [str(out.dtype), np.round(out.astype(np.float64), 6).tolist()]}


def augmentation(aug: Any) -> dict[str, Any]:
    op_params = list(inspect.signature(aug.op).parameters)
    return {"name": aug.name, "mag_range": None if aug.mag_range is None else [float(x) for x in aug.mag_range],
            "randomly_negate": aug.randomly_negate, "param_device": aug.param_device,
            "op_args": op_params[2:], "params": params(aug), "tables": tables(aug)}


def stage_matrix(auto_augment: Any, policy: Any) -> dict[str, Any]:
    """`_sub_policy_to_augmentation_matrix_map(policy)` (DALI's name): the index of each
    sub-policy's augmentation among its stage's distinct ones, and those per stage (by name)."""
    matrix, per_stage = auto_augment._sub_policy_to_augmentation_matrix_map(policy)
    return {"dtype": str(matrix.dtype), "matrix": matrix.tolist(),
            "stages": [[a.name for a in stage] for stage in per_stage]}


def describe(auto_aug: Any) -> dict[str, Any]:
    """`auto_aug` (DALI's or torch_dali's package) as data."""
    base = auto_aug.__name__
    mod = {m: importlib.import_module(f"{base}.{m}") for m in FUNCTIONS}
    out: dict[str, Any] = {"signatures": {f"{m}.{f}": signature(getattr(mod[m], f)) for m, fs in FUNCTIONS.items()
                                          for f in fs}}
    out["signatures"]["Policy"] = signature(mod["core"].Policy.__init__)
    aug_cls = type(mod["augmentations"].identity)
    out["signatures"]["Augmentation.__call__"] = signature(aug_cls.__call__)
    out["signatures"]["Augmentation.augmentation"] = signature(aug_cls.augmentation)
    out["augmentations"] = {n: augmentation(getattr(mod["augmentations"], n)) for n in AUGMENTATIONS}
    out["suites"] = {}
    for name, (m, f) in SUITES.items():
        for use_shape in (False, True):
            out["suites"][f"{name}/{use_shape}"] = [augmentation(a) for a in getattr(mod[m], f)(use_shape=use_shape)]
    out["policies"] = {}
    for f in POLICIES:
        policy = getattr(mod["auto_augment"], f)()
        out["policies"][f] = {
            "name": policy.name, "num_magnitude_bins": policy.num_magnitude_bins,
            "sub_policies": [[[a.name, p, m] for a, p, m in sub] for sub in policy.sub_policies],
            "augmentations": {n: augmentation(a) for n, a in policy.augmentations.items()},
            "stage_matrix": stage_matrix(mod["auto_augment"], policy)}
    return out


def main() -> None:
    import nvidia.dali.auto_aug as dali_auto_aug
    STORED.write_text(json.dumps(describe(dali_auto_aug), indent=0, sort_keys=True) + "\n")
    print(f"wrote {STORED} ({STORED.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
