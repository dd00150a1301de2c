"""AutoAugment (https://arxiv.org/abs/1805.09501): the paper's four policies, and
`apply_auto_augment` for any `Policy`.

Per sample: one sub-policy, uniformly at random; then each of its stages in order, applied with
the stage's probability at the stage's magnitude bin (with a random sign for the augmentations
that take one). Stage k of every sub-policy is one `select` among the augmentations used at stage
k (plus `identity`, for samples whose stage does not run or whose sub-policy is shorter).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import fn, types
from ..errors import ArgumentError
from ..graph.node import DataNode
from . import augmentations as a
from ._seeds import derived_seeds
from .core import Augmentation, Policy, signed_bin
from .core._args import forbid_unused_kwargs
from .core._utils import get_translations, pretty_select
from .policies import image_net_sub_policies, reduced_cifar10_sub_policies, reduced_image_net_sub_policies, \
    svhn_sub_policies

_WITHOUT_TRANSLATION = ("reduced_image_net",)


def auto_augment(data: DataNode, policy_name: str = "image_net", shape: Any = None, fill_value: Optional[int] = 128,
                 interp_type: Any = None, max_translate_abs: Any = None, max_translate_rel: Any = None,
                 seed: Optional[int] = None) -> DataNode:
    """One of the paper's policies applied to `data` (uint8 HWC images or FHWC videos).

    `policy_name`: "image_net", "reduced_image_net", "svhn" or "reduced_cifar10". `shape` (the
    height and width, a DataNode or a pair) makes translations relative to the image, up to
    `max_translate_rel` (default 1: the whole image); without it they move up to
    `max_translate_abs` pixels (default 250); either may be (height, width). `fill_value` pads
    what warps uncover (None repeats the border), `interp_type` is their interpolation (linear by
    default). `seed` fixes the random choices."""
    makers = {"image_net": get_image_net_policy, "reduced_image_net": get_reduced_image_net_policy,
              "svhn": get_svhn_policy, "reduced_cifar10": get_reduced_cifar10_policy}
    if not isinstance(policy_name, str) or policy_name not in makers:
        raise ArgumentError(f"auto_augment: `policy_name` must be one of {', '.join(map(repr, makers))}, "
                            f"got {policy_name!r}")
    if policy_name in _WITHOUT_TRANSLATION:
        for value, arg in ((shape, "shape"), (max_translate_abs, "max_translate_abs"),
                           (max_translate_rel, "max_translate_rel")):
            if value is not None:
                raise ArgumentError(f"auto_augment: the policy `{policy_name}` has no augmentation that uses the "
                                    f"image shape; do not give `{arg}`")
        policy = get_reduced_image_net_policy()
    else:
        policy = makers[policy_name](use_shape=shape is not None, max_translate_abs=max_translate_abs,
                                     max_translate_rel=max_translate_rel)
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    return apply_auto_augment(policy, data, seed, **kwargs)


def auto_augment_image_net(data: DataNode, shape: Any = None, fill_value: Optional[int] = 128, interp_type: Any = None,
                           max_translate_abs: Any = None, max_translate_rel: Any = None,
                           seed: Optional[int] = None) -> DataNode:
    """`auto_augment(data, "image_net", ...)`."""
    return auto_augment(data, "image_net", shape, fill_value, interp_type, max_translate_abs, max_translate_rel, seed)


def apply_auto_augment(policy: Policy, data: DataNode, seed: Optional[int] = None, **kwargs: Any) -> DataNode:
    """`policy` applied to `data` as AutoAugment does (see the module's doc). `kwargs` go to each
    augmentation that declares them (`shape`, `fill_value`, `interp_type` for the standard ones);
    one that none declares is an error."""
    subs = policy.sub_policies
    if len(subs) == 0:
        raise ArgumentError(f"apply_auto_augment: the policy has no sub-policies: {policy!r}")
    forbid_unused_kwargs(policy.augmentations.values(), kwargs, "apply_auto_augment")
    stages = max(len(sub) for sub in subs)
    seeds = derived_seeds(seed, 3)
    draw = fn.random.uniform(range=[0, 1], shape=(stages,), dtype=types.FLOAT, seed=seeds[0])
    chosen = fn.random.uniform(values=list(range(len(subs))), dtype=types.INT32, seed=seeds[1])
    probability, bins, ids, per_stage = _tables(policy, stages)
    run = draw < types.Constant(probability)[chosen]
    aug_ids = types.Constant(ids)[chosen]
    mag_bins: Any = types.Constant(bins)[chosen]
    if any(aug.randomly_negate for aug in policy.augmentations.values()):
        mag_bins = signed_bin(mag_bins, seed=seeds[2], shape=(stages,))
    for k in range(stages):
        run_k = run[k]
        identity_id = len(per_stage[k]) - 1
        # a stage that does not run is the stage's identity
        which = aug_ids[k] * run_k + identity_id * (run_k ^ True)
        data = pretty_select(per_stage[k], which, dict(data=data, magnitude_bin=mag_bins[k],
                                                       num_magnitude_bins=policy.num_magnitude_bins, **kwargs),
                             auto_aug_name="apply_auto_augment", ref_suite_name="get_image_net_policy")
    return data


def _tables(policy: Policy, stages: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list[Augmentation]]]:
    """Per sub-policy and stage: the probability (float32), the magnitude bin (int32; 0 where the
    augmentation takes none, so that every entry indexes the parameter tables), and the
    augmentation matrix and per-stage lists of `_sub_policy_to_augmentation_matrix_map`."""
    subs = policy.sub_policies
    ids, per_stage = _sub_policy_to_augmentation_matrix_map(policy)
    probability = np.zeros((len(subs), stages), dtype=np.float32)
    bins = np.zeros((len(subs), stages), dtype=np.int32)
    for s, sub in enumerate(subs):
        for k, (aug, p, mag) in enumerate(sub):
            probability[s, k] = p
            bins[s, k] = 0 if mag is None else mag
    return probability, bins, ids, per_stage


def _sub_policy_to_augmentation_matrix_map(policy: Policy) -> tuple[np.ndarray, list[list[Augmentation]]]:
    """DALI's name. `(matrix, per_stage)`: per stage k, the distinct augmentations used at stage k
    (in order of first use) with `identity` last (what shorter sub-policies do there); and an
    int32 matrix (sub-policies x stages) whose entry [s, k] indexes `per_stage[k]` with the
    augmentation sub-policy s runs at stage k."""
    subs = policy.sub_policies
    stages = max(len(sub) for sub in subs)
    per_stage: list[list[Augmentation]] = []
    for k in range(stages):
        used: list[Augmentation] = []
        for sub in subs:
            if k < len(sub) and sub[k][0] not in used:
                used.append(sub[k][0])
        per_stage.append(used + [a.identity])
    ids = np.array([[len(per_stage[k]) - 1 for k in range(stages)] for _ in subs], dtype=np.int32)
    for s, sub in enumerate(subs):
        for k, (aug, _, _) in enumerate(sub):
            ids[s, k] = per_stage[k].index(aug)
    return ids, per_stage


def _translations(use_shape: bool, max_translate_abs: Any, max_translate_rel: Any) -> list[Augmentation]:
    return get_translations(use_shape, 250, 1.0, max_translate_abs, max_translate_rel)


def _policy(name: str, make: Any, translations: Sequence[Augmentation] = ()) -> Policy:
    return Policy(name=name, num_magnitude_bins=11, sub_policies=make(*translations))


def get_image_net_policy(use_shape: bool = False, max_translate_abs: Any = None,
                         max_translate_rel: Any = None) -> Policy:
    """The policy the paper found on ImageNet (for `apply_auto_augment`). `use_shape`: translations
    relative to the image (up to `max_translate_rel`, default 1) rather than up to
    `max_translate_abs` pixels (default 250)."""
    return _policy("ImageNetPolicy", image_net_sub_policies,
                   _translations(use_shape, max_translate_abs, max_translate_rel))


def get_reduced_cifar10_policy(use_shape: bool = False, max_translate_abs: Any = None,
                               max_translate_rel: Any = None) -> Policy:
    """The policy the paper found on reduced CIFAR-10 (translation arguments as for ImageNet's)."""
    return _policy("ReducedCifar10Policy", reduced_cifar10_sub_policies,
                   _translations(use_shape, max_translate_abs, max_translate_rel))


def get_svhn_policy(use_shape: bool = False, max_translate_abs: Any = None, max_translate_rel: Any = None) -> Policy:
    """The policy the paper found on SVHN (translation arguments as for ImageNet's)."""
    return _policy("SvhnPolicy", svhn_sub_policies, _translations(use_shape, max_translate_abs, max_translate_rel))


def get_reduced_image_net_policy() -> Policy:
    """The policy the paper found on reduced ImageNet (it has no translations)."""
    return _policy("ReducedImageNetPolicy", reduced_image_net_sub_policies)
