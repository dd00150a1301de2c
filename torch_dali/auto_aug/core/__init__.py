"""The building blocks of automatic augmentations: `@augmentation`, `signed_bin`, `select` and
`Policy` (DALI's `nvidia.dali.auto_aug.core`)."""
from ._augmentation import Augmentation, signed_bin
from ._augmentation import Augmentation as _Augmentation  # DALI's name for it in this module
from ._select import select
from .decorator import augmentation
from .policy import Policy

__all__ = ("signed_bin", "augmentation", "select", "Policy", "_Augmentation", "Augmentation")
