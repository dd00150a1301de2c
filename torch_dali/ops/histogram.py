"""equalize (and its legacy name experimental.equalize): per-channel histogram equalization of
uint8 images and sequences (HW, HWC, CHW, FHW, FHWC, FCHW); a dense batch is equalized in one set
of torch calls (one bincount for every plane of the batch)."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentTypeError
from ..functional import histogram as K
from ._registry import register
from ._schema import OpSchema
from .layout_op import Args, LayoutOp

EQUALIZE_LAYOUTS = ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")


class Equalize(LayoutOp):
    layouts = EQUALIZE_LAYOUTS

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.run_dense(x.unsqueeze(0), layout, {}, seed, iteration)[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        if x.dtype != torch.uint8:
            raise ArgumentTypeError(f"{self.name}: the input must be uint8, got {x.dtype}")
        return K.equalize(x, layout.index("H") + 1, layout.index("W") + 1)


for _name in ("equalize", "experimental.equalize"):
    register(OpSchema(name=_name, impl=Equalize,
                      doc="Histogram equalization of uint8 images, each channel (and frame) apart (OpenCV's "
                          "equalizeHist)."))
