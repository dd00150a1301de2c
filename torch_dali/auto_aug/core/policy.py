"""`Policy`: an AutoAugment policy, a list of sub-policies (sequences of augmentations, each with
the probability of applying it and its magnitude bin)."""
from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence, Tuple

from ...errors import ArgumentError, ArgumentTypeError
from ._augmentation import Augmentation

Stage = Tuple[Augmentation, float, Optional[int]]


class Policy:
    """AutoAugment's policy (https://arxiv.org/abs/1805.09501): each sample takes one of
    `sub_policies` at random; the stages of that sub-policy then run in order, each
    `(augmentation, probability, magnitude_bin)` applied with its probability at its magnitude
    bin (None for augmentations without a magnitude range). `num_magnitude_bins` divides every
    augmentation's magnitude range."""

    def __init__(self, name: str, num_magnitude_bins: int, sub_policies: Sequence[Sequence[Stage]]) -> None:
        self.name = name
        self.num_magnitude_bins = num_magnitude_bins
        if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
            raise ArgumentError(f"Policy `{name}`: `num_magnitude_bins` must be a positive integer, "
                                f"got {num_magnitude_bins!r}")
        if not isinstance(sub_policies, (list, tuple)):
            raise ArgumentTypeError(f"Policy `{name}`: `sub_policies` must be a list or tuple of sub-policies, "
                                    f"got {type(sub_policies).__name__}")
        for sub in sub_policies:
            if not isinstance(sub, (list, tuple)):
                raise ArgumentTypeError(f"Policy `{name}`: each sub-policy must be a list or tuple, got {sub!r}")
            for stage in sub:
                self._check_stage(stage)
        self.sub_policies = _with_unique_names(sub_policies)

    def _check_stage(self, stage: Any) -> None:
        name, bins = self.name, self.num_magnitude_bins
        if not isinstance(stage, (list, tuple)) or len(stage) != 3:
            raise ArgumentTypeError(f"Policy `{name}`: each stage of a sub-policy must be a triple "
                                    f"(augmentation, probability, magnitude_bin), got {stage!r}")
        aug, p, mag = stage
        if not isinstance(aug, Augmentation):
            raise ArgumentTypeError(f"Policy `{name}`: {aug!r} is not an Augmentation (decorate the function "
                                    "with @augmentation)")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ArgumentError(f"Policy `{name}`: the probability of `{aug.name}` must be a number in [0, 1], "
                                f"got {p!r}")
        if p == 0:
            warnings.warn(f"Policy `{name}`: `{aug.name}` has probability 0 in a sub-policy (it never runs there)")
        if mag is None:
            if aug.mag_range is not None:
                raise ArgumentError(f"Policy `{name}`: `{aug.name}` has a magnitude range, so its stage needs a "
                                    "magnitude bin, got None")
            return
        if aug.mag_range is None:
            warnings.warn(f"Policy `{name}`: the magnitude bin {mag} of `{aug.name}` is ignored: it has no "
                          "magnitude range (give None to silence this)")
        if isinstance(mag, bool) or not isinstance(mag, int) or not 0 <= mag < bins:
            raise ArgumentError(f"Policy `{name}`: the magnitude bin of `{aug.name}` must be an integer in "
                                f"[0, {bins - 1}], got {mag!r}")

    @property
    def augmentations(self) -> dict[str, Augmentation]:
        """The policy's distinct augmentations by name, sorted by name."""
        augs = {aug for sub in self.sub_policies for aug, _, _ in sub}
        return {a.name: a for a in sorted(augs, key=lambda a: a.name)}

    def __repr__(self) -> str:
        subs = ",\n\t".join(repr([(a.name, p, m) for a, p, m in sub]) for sub in self.sub_policies)
        augs = ",\n\t".join(f"{n!r}: {a!r}" for n, a in self.augmentations.items())
        return (f"Policy(name={self.name!r}, num_magnitude_bins={self.num_magnitude_bins!r}, "
                f"sub_policies=[{chr(10) + chr(9) if subs else ''}{subs}], "
                f"augmentations={{{chr(10) + chr(9) if augs else ''}{augs}}})")


def _with_unique_names(sub_policies: Sequence[Sequence[Stage]]) -> Tuple[Tuple[Stage, ...], ...]:
    """The sub-policies as tuples; when two different augmentations share a name, every
    augmentation is renamed `<k>__<name>` (k numbered in order of first use) so that names
    identify them."""
    order: list[Augmentation] = []
    for sub in sub_policies:
        for aug, _, _ in sub:
            if aug not in order:
                order.append(aug)
    if len({a.name for a in order}) == len(order):
        return tuple(tuple(sub) for sub in sub_policies)
    width = len(str(len(order) - 1))
    renamed = {a: a.augmentation(name=f"{str(k).zfill(width)}__{a.name}") for k, a in enumerate(order)}
    return tuple(tuple((renamed[a], p, m) for a, p, m in sub) for sub in sub_policies)
