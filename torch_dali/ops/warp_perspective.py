"""experimental.warp_perspective: a homography per sample, OpenCV's border modes, nn / linear /
cubic, for HW, HWC, CHW and their sequences (CPU or CUDA tensors).

Resampling is `functional.warp` (uint8 bit-exact against DALI 2.4's CPU backend with the default
corner origin). On CUDA a dense HWC batch with one output size is warped in one call, and so
is a batch of HWC images of different sizes (the flat form of `functional.ragged`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import ragged as R
from ..functional import warp as W
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import _dispatch, batching
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema
from .layouts import require_frames
from .warp import dtype_names, flat_geometry, interp_of

_WP_LAYOUTS = ("HW", "HWC", "FHWC", "CHW", "FCHW")
_WP_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.float32)
_BORDERS = ("constant", "replicate", "reflect", "reflect_101", "wrap")


class WarpPerspective(Operator):
    """Output pixel p takes the input at the homography `matrix` applied to p (destination to
    source unless `inverse_map=False`), with OpenCV's border modes; nn, linear or cubic."""

    sample_wise = False
    per_frame_ok = True  # `matrix=fn.per_frame(m)`: frames are warped independently (run unfolded)

    def per_frame_layout(self, layout: str, ndim: int) -> str:
        """Per-frame matrices need sequences (DALI 2.4): FHWC, FCHW, or a layout-less 4-D sample
        read as FHWC; anything else is refused when it runs."""
        return require_frames(self.name, layout or ("FHWC" if ndim == 4 else ""))

    def setup(self) -> None:
        self.interp = interp_of(self.args["interp_type"])
        if self.interp not in ("nn", "linear", "cubic"):
            raise ArgumentError(f"{self.name}: `interp_type` must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, "
                                f"got {self.args['interp_type']!r}")
        if self.args["border_mode"] not in _BORDERS:
            raise ArgumentError(f"{self.name}: `border_mode` must be one of {', '.join(_BORDERS)}, got "
                                f"{self.args['border_mode']!r}")
        if self.args["pixel_origin"] not in ("corner", "center"):
            raise ArgumentError(f"{self.name}: `pixel_origin` must be 'corner' or 'center', got "
                                f"{self.args['pixel_origin']!r}")
        has_arg = "matrix" in self.node.arg_inputs or bool(self.args.get("matrix"))
        if len(self.node.inputs) < 2 and not has_arg:
            raise ArgumentError(f"{self.name}: give `matrix` (3x3) or the matrices as a second input")
        if len(self.node.inputs) >= 2 and has_arg:
            raise ArgumentError(f"{self.name}: the matrices come either as the second input or as `matrix`, "
                                "not both")

    def _given_matrix(self, v: Any, where: str) -> torch.Tensor:
        """A matrix from a tensor (the second input or a per-sample `matrix`): float32, shaped 3x3."""
        if isinstance(v, torch.Tensor):
            if v.dtype != torch.float32:
                raise ArgumentTypeError(f"{self.name}: {where} must hold float32 values, got {v.dtype}")
            if tuple(v.shape) != (3, 3):
                raise ArgumentError(f"{self.name}: {where} must be a 3x3 matrix per sample, got shape "
                                    f"{tuple(v.shape)}")
        elif np.shape(v) != (3, 3):  # an argument input's sample, as nested lists: DALI 2.4 takes 3x3 only
            raise ArgumentError(f"{self.name}: {where} must be a 3x3 matrix per sample (per frame with "
                                f"fn.per_frame), got shape {np.shape(v)}; reshape flat matrices to (..., 3, 3)")
        return self._matrix(v)

    def _matrix(self, v: Any) -> torch.Tensor:
        t = v.to(torch.float32) if isinstance(v, torch.Tensor) else torch.as_tensor(v, dtype=torch.float32)
        if t.numel() != 9:
            raise ArgumentError(f"{self.name}: the perspective matrix must be 3x3, got {t.numel()} values")
        t = t.reshape(3, 3)
        if not self.args["inverse_map"]:
            if abs(float(torch.linalg.det(t.double()))) < 1e-30:
                if self.args["border_mode"] == "constant":
                    # DALI 2.4: every output pixel is the fill value (no source point maps to it)
                    return torch.tensor([[0, 0, -1e30], [0, 0, -1e30], [0, 0, 1]], dtype=torch.float32)
                raise ArgumentError(f"{self.name}: the matrix is singular; inverse_map=False needs an invertible "
                                    "one (with border_mode='constant' the output is the fill value)")
            t = torch.linalg.inv(t.double()).to(torch.float32)
        return t

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout = tl.layout() or ("HWC" if len(tl) and tl[0].dim() == 3 else "HW" if len(tl) else "")
        if layout not in _WP_LAYOUTS:
            raise ArgumentError(f"{self.name}: input layout must be one of {', '.join(_WP_LAYOUTS)}, got {layout!r}")
        centred = self.args["pixel_origin"] == "center"
        fill = self.args.get("fill_value") or [0.0]
        plans = []
        for i, x in enumerate(tl):
            if x.dtype not in _WP_TYPES:
                raise ArgumentTypeError(f"{self.name}: input type must be one of {dtype_names(_WP_TYPES)}, got {x.dtype}")
            if x.dim() != len(layout):
                raise ArgumentError(f"{self.name}: a {layout} sample must have {len(layout)} dimensions, got "
                                    f"shape {tuple(x.shape)}")
            # to frames of HWC images
            img = x.unsqueeze(-1) if "C" not in layout else x
            if "CHW" in layout:
                img = img.movedim(-3, -1)
            frames = img if layout.startswith("F") else img.unsqueeze(0)
            c = int(frames.shape[-1])
            if c > 4:
                raise ArgumentError(f"{self.name}: images with more than 4 channels are not supported, got {c}")
            if len(fill) not in (1, c):
                raise ArgumentError(f"{self.name}: `fill_value` must have 1 or {c} values (one per channel), got "
                                    f"{len(fill)}")
            if len(inputs) > 1:
                m = self._given_matrix(inputs[1][i], "the matrix input")
            elif "matrix" in args:
                m = self._given_matrix(args["matrix"][i], "`matrix`")
            else:
                m = self._matrix(self.args["matrix"])
            size = args["size"][i] if "size" in args else self.args.get("size")
            if size is None or size == []:
                out_hw = [int(frames.shape[1]), int(frames.shape[2])]
            else:
                size = [size] if isinstance(size, (int, float)) else list(size)
                if len(size) == 1:  # DALI 2.4: one value is both extents
                    size = size * 2
                if len(size) != 2:
                    raise ArgumentError(f"{self.name}: `size` must be (H, W) or one value for both, got {size!r}")
                # an extent rounding to 0 gives 1 (DALI 2.4: size=[0, 0] -> 1x1)
                out_hw = [max(1, int(math.floor(abs(float(s)) + 0.5))) for s in size]
            plans.append((frames, m, out_hw))
        # DALI 2.4 blends int16 with weights in 1/32 steps (OpenCV's fixed-point tables; measured)
        bits = 5 if len(tl) and tl[0].dtype == torch.int16 else None
        border = self.args["border_mode"]
        if (self.device.type == "cuda" and len(plans) > 1 and layout == "HWC" and tl.is_dense_tensor()
                and all(p[2] == plans[0][2] for p in plans)):  # the whole batch in one call
            x = tl.as_tensor()
            mats = torch.stack([p[1] for p in plans]).to(x.device)
            coords = W.perspective_coords(mats, plans[0][2], centre_origin=centred)
            y = _dispatch.call(W.warp, x, coords, self.interp, fill, x.dtype, border, centred, bits)
            return [TensorList(y, layout)]
        if (batching.batched(self, tl) and layout == "HWC" and len({x.dtype for x in tl.samples}) == 1
                and len({int(x.shape[-1]) for x in tl.samples}) == 1
                and all(x.numel() and p[2][0] * p[2][1] for x, p in zip(tl.samples, plans))):
            # images of different sizes in one call (`functional.ragged`), each value as below
            flat = Flat(tl.samples, inner=1)
            out_hw = [(int(p[2][0]), int(p[2][1])) for p in plans]
            ids, yy, xx = R.positions(out_hw, flat.device)
            coords = W.perspective_coords_flat(torch.stack([p[1] for p in plans]), ids, yy, xx, centre_origin=centred)
            sizes, base = flat_geometry(flat, ids)
            y = W.warp_flat(flat.items(), coords, sizes, base, self.interp, fill, flat.dtype, border, centred, bits)
            return [TensorList(R.split(y, [(h, w, flat.shapes[0][-1]) for h, w in out_hw]), layout)]

        def one(i: int) -> torch.Tensor:
            x, (frames, m, out_hw) = tl[i], plans[i]
            y = _dispatch.call(W.warp_matrix, frames, m.to(x.device)[None], out_hw, self.interp, fill, x.dtype,
                               border, centred, bits)
            y = y if layout.startswith("F") else y[0]
            if "CHW" in layout:
                y = y.movedim(-1, -3)
            return y if "C" in layout else y[..., 0]

        n = len(tl)
        return [TensorList(ctx.map(one, n) if self.device.type == "cpu" else [one(i) for i in range(n)], layout)]


register(OpSchema(
    name="experimental.warp_perspective", impl=WarpPerspective, max_inputs=2,
    doc="Applies a perspective transform (HW, HWC, CHW, FHWC, FCHW): output pixel p takes the input at "
        "H @ (p, 1) divided by its last component; OpenCV's border modes.",
    args=(
        Arg("matrix", "float_list", None, "3x3 homography, row-major; destination to source unless "
            "inverse_map=False", tensor=True),
        Arg("size", "floats", None, "output (H, W), rounded to the nearest integer", tensor=True),
        Arg("border_mode", "str", "constant", "constant, replicate, reflect, reflect_101 or wrap"),
        Arg("fill_value", "float_list", None, "for the constant border: one value or one per channel "
            "(default 0)"),
        Arg("interp_type", "interp_type", types.INTERP_LINEAR, "INTERP_NN, INTERP_LINEAR or INTERP_CUBIC"),
        Arg("inverse_map", "bool", True, "False: `matrix` maps source to destination"),
        Arg("pixel_origin", "str", "corner", "'corner': (0, 0) is the first pixel's corner; 'center': its "
            "centre (OpenCV's)"),
    ),
))
