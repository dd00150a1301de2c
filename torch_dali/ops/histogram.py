"""equalize (and its legacy name experimental.equalize): per-channel histogram equalization of
uint8 images and sequences (HW, HWC, CHW, FHW, FHWC, FCHW); clahe: contrast limited adaptive
equalization of uint8 HWC images (1 or 3 channels). A dense batch runs as one set of torch
calls (one bincount for every plane, or tile, of the batch)."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import clahe as CL
from ..functional import histogram as K
from . import _dispatch
from ._registry import register
from ._schema import Arg, OpSchema, positive
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
        return _dispatch.call(K.equalize, x, layout.index("H") + 1, layout.index("W") + 1)


for _name in ("equalize", "experimental.equalize"):
    register(OpSchema(name=_name, impl=Equalize,
                      doc="Histogram equalization of uint8 images, each channel (and frame) apart (OpenCV's "
                          "equalizeHist)."))


class Clahe(LayoutOp):
    """Gray and per-channel: OpenCV's CLAHE, bit for bit. RGB with luma_only: CLAHE of the 8-bit
    Lab lightness, as DALI's CPU backend (OpenCV) does it; the conversion to Lab is OpenCV's
    fixed-point one bit for bit, the way back float32 (values within 1 or 2 of DALI's)."""

    layouts = ("HWC",)

    def setup(self) -> None:
        self.tiles = (int(self.args["tiles_x"]), int(self.args["tiles_y"]))
        self.clip = float(self.args["clip_limit"])
        # DALI 2.4 reads `bins` but equalizes over 256 bins whatever it says (OpenCV's CLAHE on the
        # CPU, fixed 256-bin kernels on the GPU; measured: any value gives the same output)
        self.bins = 256
        if min(self.tiles) < 1:
            raise ArgumentError(f"{self.name}: `tiles_x` and `tiles_y` must be positive, got {self.tiles}")

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.run_dense(x.unsqueeze(0), layout, {}, seed, iteration)[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        if x.dtype != torch.uint8:
            raise ArgumentTypeError(f"{self.name}: the input must be uint8, got {x.dtype}")
        tx, ty = self.tiles
        c = int(x.shape[-1])
        if c not in (1, 3):
            raise ArgumentError(f"{self.name}: images must have 1 or 3 channels, got {c}")
        if c == 3 and self.args["luma_only"]:
            return CL.clahe_rgb_luma(x, tx, ty, self.clip, self.bins)
        n, h, w = (int(s) for s in x.shape[:3])
        planes = x.permute(0, 3, 1, 2).reshape(n * c, h, w)
        out = CL.clahe_planes(planes, tx, ty, self.clip, self.bins)
        return out.reshape(n, c, h, w).permute(0, 2, 3, 1).contiguous()


register(OpSchema(
    name="clahe", impl=Clahe,
    doc="Contrast limited adaptive histogram equalization (OpenCV's algorithm) of uint8 grayscale or RGB "
        "images; RGB either through its luma (luma_only) or per channel.",
    args=(Arg("tiles_x", "int", doc="tiles across the width", check=positive),
          Arg("tiles_y", "int", doc="tiles across the height", check=positive),
          Arg("clip_limit", "float", doc="histogram clip: clip_limit * tile_area / bins"),
          Arg("bins", "int", 256, "accepted; as in DALI 2.4 the histograms always have 256 bins"),
          Arg("luma_only", "bool", True, "RGB: equalize the Lab lightness only (else each channel)")),
))
