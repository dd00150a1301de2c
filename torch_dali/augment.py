"""torchvision v2 augmentations as module-level functions, for `torch_python_function` ops.

Each takes one HWC uint8 image (a torch tensor, CPU or CUDA) and returns an image of the same shape,
dtype and device. Being module-level, they serialize to YAML as `torch_dali.augment:<name>` and load
back without `allow_modules` (torch_dali is trusted). Their random draws come from torch's global RNG,
which the python-function op seeds per sample, so a pipeline seed fixes them.
"""
from __future__ import annotations

import torch
from torchvision.transforms import v2

_COLOR_JITTER = v2.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1)
_TRIVIAL = v2.TrivialAugmentWide()
_GRAYSCALE = v2.RandomGrayscale(p=0.2)


def _hwc(transform: v2.Transform, image: torch.Tensor) -> torch.Tensor:
    """Applies a CHW torchvision transform to an HWC image, returning HWC (contiguous)."""
    if image.dim() != 3 or image.shape[-1] not in (1, 3):
        raise ValueError(f"expected an HWC image with 1 or 3 channels, got shape {tuple(image.shape)}")
    return transform(image.permute(2, 0, 1)).permute(1, 2, 0).contiguous()


def color_jitter(image: torch.Tensor) -> torch.Tensor:
    """Random brightness, contrast, saturation (0.4) and hue (0.1), as in common ImageNet recipes."""
    return _hwc(_COLOR_JITTER, image)


def trivial_augment(image: torch.Tensor) -> torch.Tensor:
    """TrivialAugmentWide: one random op of random strength per image."""
    return _hwc(_TRIVIAL, image)


def random_grayscale(image: torch.Tensor) -> torch.Tensor:
    """Grayscale (kept as 3 channels) with probability 0.2."""
    return _hwc(_GRAYSCALE, image)
