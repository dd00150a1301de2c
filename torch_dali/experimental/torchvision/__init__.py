"""`torch_dali.experimental.torchvision`: DALI 2.4's torchvision-v2-like API
(`nvidia.dali.experimental.torchvision`). Transforms are listed in a `Compose`, which runs them
as one torch_dali pipeline on PIL images or torch tensors and returns the same kind;
`v2.functional` applies one transform at a time through the dynamic mode. docs/torchvision.md
says what is here."""
from .v2._enums import InterpolationMode
from .v2.centercrop import CenterCrop
from .v2.color import ColorJitter, Grayscale, RandomGrayscale
from .v2.compose import Compose
from .v2.flips import RandomHorizontalFlip, RandomVerticalFlip
from .v2.gaussian_blur import GaussianBlur
from .v2.normalize import Normalize
from .v2.pad import Pad
from .v2.rand_apply import RandomApply
from .v2.randomcrop import RandomCrop, RandomResizedCrop
from .v2.resize import Resize
from .v2.totensor import PILToTensor, ToPILImage, ToPureTensor

__all__ = ["CenterCrop", "ColorJitter", "Compose", "GaussianBlur", "Grayscale", "InterpolationMode", "Normalize",
           "Pad", "PILToTensor", "RandomApply", "RandomCrop", "RandomGrayscale", "RandomHorizontalFlip",
           "RandomResizedCrop", "RandomVerticalFlip", "Resize", "ToPILImage", "ToPureTensor"]
