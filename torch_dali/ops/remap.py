"""experimental.remap: output(x, y) = input(mapx(x, y), mapy(x, y)) for HWC images and FHWC
sequences, nearest or linear, outside the image 0 (DALI's only border).

DALI 2.4 offers it on the GPU only (NPP's remap); here it also runs on the CPU, with the same
pure-torch kernel as the other warps (`functional.warp.sample`): "corner" puts (0, 0) at the first
pixel's corner (pixel i spans [i, i + 1)), "center" at its centre (OpenCV's convention).
"""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import warp as W
from ..tensor_list import TensorList
from . import _dispatch
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema

_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.float32)


class Remap(Operator):
    sample_wise = False

    def setup(self) -> None:
        interp = self.args["interp"]
        self.interp = interp.key if isinstance(interp, types.DALIInterpType) else str(interp)
        if self.interp not in ("nn", "linear"):
            raise ArgumentError(f"{self.name}: `interp` must be INTERP_NN or INTERP_LINEAR, got {interp!r}")
        if self.args["pixel_origin"] not in ("corner", "center"):
            raise ArgumentError(f"{self.name}: `pixel_origin` must be 'corner' or 'center', got "
                                f"{self.args['pixel_origin']!r}")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        imgs, mx, my = inputs
        layout = imgs.layout() or "HWC"
        if layout not in ("HWC", "FHWC"):
            raise ArgumentError(f"{self.name}: input layout must be HWC or FHWC, got {imgs.layout()!r}")
        frames = layout == "FHWC"
        centred = self.args["pixel_origin"] == "center"
        out = []
        for i, x in enumerate(imgs):
            if x.dtype not in _TYPES:
                raise ArgumentTypeError(f"{self.name}: input type must be uint8, int16, uint16 or float32, got {x.dtype}")
            if x.dim() != len(layout) or int(x.shape[-1]) not in (1, 3):
                raise ArgumentError(f"{self.name}: expected {layout} images with 1 or 3 channels, got shape "
                                    f"{tuple(x.shape)}")
            maps = []
            for name, m in (("mapx", mx[i]), ("mapy", my[i])):
                if m.dtype != torch.float32:
                    raise ArgumentTypeError(f"{self.name}: `{name}` must be float32, got {m.dtype}")
                spatial = m.dim() - (1 if frames else 0)
                if spatial == 3 and m.shape[-1] == 1:
                    m = m[..., 0]
                elif spatial != 2:
                    raise ArgumentError(f"{self.name}: `{name}` must be (H, W) or (H, W, 1) per "
                                        f"{'frame' if frames else 'sample'}, got shape {tuple(m.shape)}")
                maps.append(m.to(x.device))
            if maps[0].shape != maps[1].shape:
                raise ArgumentError(f"{self.name}: mapx and mapy must have the same shape, got "
                                    f"{tuple(maps[0].shape)} and {tuple(maps[1].shape)}")
            coords = torch.stack(maps, dim=-1)
            batch = x if frames else x.unsqueeze(0)
            coords = coords if frames else coords.unsqueeze(0)
            if frames and coords.shape[0] != batch.shape[0]:
                raise ArgumentError(f"{self.name}: the maps have {coords.shape[0]} frames, the input {batch.shape[0]}")
            fill = torch.zeros(int(x.shape[-1]), dtype=x.dtype, device=x.device)
            y = _dispatch.call(W.sample, batch, coords, self.interp, fill, x.dtype, "constant", centred)
            out.append(y if frames else y[0])
        return [TensorList(out, layout)]


register(OpSchema(
    name="experimental.remap", impl=Remap, min_inputs=3, max_inputs=3, devices=("cpu", "gpu"),
    doc="output(x, y) = input(mapx(x, y), mapy(x, y)) for 1- or 3-channel HWC images (FHWC "
        "sequences: maps per frame); outside the image 0. DALI offers it on the GPU only.",
    args=(
        Arg("interp", "interp_type", types.INTERP_LINEAR, "INTERP_NN or INTERP_LINEAR"),
        Arg("pixel_origin", "str", "corner", "'corner': (0, 0) is the first pixel's corner; 'center': "
            "its centre (OpenCV's)"),
    ),
))
