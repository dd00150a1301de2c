"""Automatic augmentations, as DALI's `nvidia.dali.auto_aug`: AutoAugment (`auto_augment`),
RandAugment (`rand_augment`) and TrivialAugment Wide (`trivial_augment`), their standard
augmentations (`augmentations`) and the pieces to build others (`core`). See
docs/auto_augment.md."""
from . import augmentations, auto_augment, core, rand_augment, trivial_augment

__all__ = ("augmentations", "auto_augment", "core", "rand_augment", "trivial_augment")
