"""Image sizes as torchvision reports them: `get_size` [h, w], `get_image_size` [w, h],
`get_dimensions` [c, h, w] (tensors are [..., C, H, W], or [H, W] with one channel)."""
from __future__ import annotations

from typing import Any

import torch
from PIL import Image

from .... import dynamic as ndd


def _tensor_shape(inpt: Any, what: str) -> tuple:
    if inpt.ndim < 2:
        raise TypeError(f"{what} needs a tensor of at least 2 dimensions, got {inpt.ndim}")
    return tuple(inpt.shape)


def get_size(inpt: Any) -> list[int]:
    if isinstance(inpt, Image.Image):
        return [inpt.size[1], inpt.size[0]]
    if isinstance(inpt, (torch.Tensor, ndd.Tensor)):
        shape = _tensor_shape(inpt, "get_size")
        return [shape[-2], shape[-1]]
    raise TypeError(f"get_size does not take {type(inpt).__name__}")


def get_image_size(inpt: Any) -> list[int]:
    h, w = get_size(inpt)
    return [w, h]


def get_dimensions(inpt: Any) -> list[int]:
    if isinstance(inpt, Image.Image):
        return [len(inpt.getbands()), inpt.size[1], inpt.size[0]]
    if isinstance(inpt, (torch.Tensor, ndd.Tensor)):
        shape = _tensor_shape(inpt, "get_dimensions")
        return [1 if len(shape) == 2 else shape[-3], shape[-2], shape[-1]]
    raise TypeError(f"get_dimensions does not take {type(inpt).__name__}")
