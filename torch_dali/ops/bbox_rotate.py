"""bbox_rotate: moves bounding boxes where fn.rotate takes their image (DALI 2.4's BBoxRotate).

Each box's four corners turn about the image centre by `angle` degrees (counter-clockwise on
screen, as fn.rotate turns the image) onto the output canvas (the rotated image's bounding canvas
with fn.rotate's parity rule, the input's size with `keep_size`, or `size`); the box out is the
corners' bounding box, shrunk back toward its original size for mode "fixed" (fully) or
"halfway" (half); it is clipped to the canvas and dropped, with its label, when less than
`remove_threshold` of its area is left. The whole batch is one set of float32 torch calls on the
boxes' device (DALI offers the op on the CPU only).
"""
from __future__ import annotations

import math
from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import affine as A
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema

_MODES = ("expand", "halfway", "fixed")


def rotate_boxes(boxes: torch.Tensor, ltrb: bool, normalized: bool, rad: torch.Tensor, in_wh: torch.Tensor,
                 out_wh: torch.Tensor, mode: str, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(M, 4) float32 boxes, each with its angle (M,) in radians and its image and canvas (M, 2)
    (w, h) sizes -> (the boxes on the canvas, in the input's format, and which to keep)."""
    b = boxes.to(torch.float32)
    x1, y1, p, q = b.unbind(1)
    x2, y2 = (p, q) if ltrb else (x1 + p, y1 + q)
    xs = torch.stack([x1, x2, x1, x2], 1)
    ys = torch.stack([y1, y1, y2, y2], 1)
    iw, ih = in_wh[:, :1], in_wh[:, 1:]
    if normalized:
        xs, ys = (xs - 0.5) * iw, (ys - 0.5) * ih
    else:
        xs, ys = xs - iw / 2, ys - ih / 2
    old_w, old_h = xs[:, 1] - xs[:, 0], ys[:, 2] - ys[:, 0]
    c, s = torch.cos(rad)[:, None], torch.sin(rad)[:, None]
    # y points down: this turns the box counter-clockwise on screen for a positive angle
    xs, ys = xs * c + ys * s, -xs * s + ys * c
    ow, oh = out_wh[:, :1], out_wh[:, 1:]
    xs, ys = xs + ow / 2, ys + oh / 2
    l, r = xs.amin(1), xs.amax(1)
    t, btm = ys.amin(1), ys.amax(1)
    if mode != "expand":
        new_w, new_h = r - l, btm - t
        swapped = (old_w < old_h) ^ (new_w < new_h)  # the box turned by more than 45 degrees
        dw = torch.where(swapped, new_w - old_h, new_w - old_w) * 0.5
        dh = torch.where(swapped, new_h - old_w, new_h - old_h) * 0.5
        if mode == "halfway":
            dw, dh = dw * 0.5, dh * 0.5
        l, r, t, btm = l + dw, r - dw, t + dh, btm - dh
    area = (r - l) * (btm - t)
    zero = torch.zeros((), dtype=torch.float32, device=b.device)
    ow1, oh1 = ow[:, 0], oh[:, 0]
    l, r = torch.minimum(torch.maximum(l, zero), ow1), torch.minimum(torch.maximum(r, zero), ow1)
    t, btm = torch.minimum(torch.maximum(t, zero), oh1), torch.minimum(torch.maximum(btm, zero), oh1)
    keep = (r - l) * (btm - t) / area >= threshold  # a box of no area (0 / 0) is dropped
    if not ltrb:
        r, btm = r - l, btm - t
    out = torch.stack([l, t, r, btm], 1)
    if normalized:
        out = out * torch.cat([1.0 / out_wh, 1.0 / out_wh], 1)
    return out, keep


class BBoxRotate(Operator):
    sample_wise = False

    def setup(self) -> None:
        a = self.args
        if a["mode"] not in _MODES:
            raise ArgumentError(f"{self.name}: `mode` must be one of {', '.join(_MODES)}, got {a['mode']!r}")
        if a["bbox_layout"] not in ("xyXY", "xyWH"):
            raise ArgumentError(f"{self.name}: `bbox_layout` must be 'xyXY' or 'xyWH', got {a['bbox_layout']!r}")
        lay = a["shape_layout"]
        if "W" not in lay or "H" not in lay:
            raise ArgumentError(f"{self.name}: `shape_layout` must name the W and H axes, got {lay!r}")
        self.w_at, self.h_at = lay.index("W"), lay.index("H")
        # DALI 2.4 takes [0, 1) (1.0 itself is refused)
        if not 0.0 <= a["remove_threshold"] < 1.0:
            raise ArgumentError(f"{self.name}: `remove_threshold` must be in [0, 1), got {a['remove_threshold']}")
        self.has_size = "size" in self.node.explicit or "size" in self.node.arg_inputs
        if a["keep_size"] and self.has_size:
            raise ArgumentError(f"{self.name}: `keep_size` and `size` cannot be given together")

    def _sizes(self, i: int, args: dict[str, list[Any]]) -> tuple[float, list[float], list[float]]:
        """Sample i's angle (radians), image (w, h) and canvas (w, h)."""
        deg = args["angle"][i] if "angle" in args else self.args["angle"]
        if isinstance(deg, list):
            if len(deg) != 1:
                raise ArgumentError(f"{self.name}: `angle` must be one number per sample, got {deg!r}")
            deg = deg[0]
        rad = float(torch.tensor(float(deg), dtype=torch.float32) * torch.tensor(math.pi / 180, dtype=torch.float32))
        shape = args["input_shape"][i] if "input_shape" in args else self.args["input_shape"]
        shape = shape if isinstance(shape, list) else [shape]
        if any(isinstance(v, float) and not v.is_integer() for v in shape):
            raise ArgumentTypeError(f"{self.name}: `input_shape` must hold integers, got {shape!r}")
        if len(shape) <= max(self.w_at, self.h_at):
            raise ArgumentError(f"{self.name}: `input_shape` {shape} has fewer values than `shape_layout` "
                                f"{self.args['shape_layout']!r} needs")
        w, h = int(shape[self.w_at]), int(shape[self.h_at])
        if self.args["keep_size"]:
            return rad, [w, h], [w, h]
        if self.has_size:
            size = args["size"][i] if "size" in args else self.args["size"]
            size = size if isinstance(size, list) else [size]
            if len(size) != 2:
                raise ArgumentError(f"{self.name}: `size` must be two values (H, W), got {size!r}")
            return rad, [w, h], [math.floor(size[1]), math.floor(size[0])]
        canvas, parity = A.rotated_canvas([w, h], rad)
        return rad, [w, h], A.fix_parity(canvas, [parity])

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        boxes = list(inputs[0])
        labels = list(inputs[1]) if len(inputs) > 1 else None
        for i, b in enumerate(boxes):
            if b.dtype != torch.float32:
                raise ArgumentTypeError(f"{self.name}: boxes must be float32, got {b.dtype} (sample {i})")
            # DALI 2.4 only logs this and reads past the data; refused here
            if b.dim() != 2 or b.shape[1] != 4:
                raise ArgumentError(f"{self.name}: boxes must be (N, 4), got shape {tuple(b.shape)} (sample {i})")
        if labels is not None:
            for i, (lb, b) in enumerate(zip(labels, boxes)):
                if lb.dtype != torch.int32:
                    raise ArgumentTypeError(f"{self.name}: labels must be int32, got {lb.dtype} (sample {i})")
                if not (lb.dim() == 1 or (lb.dim() == 2 and lb.shape[1] == 1)):
                    raise ArgumentError(f"{self.name}: labels must be (N,) or (N, 1), got shape "
                                        f"{tuple(lb.shape)} (sample {i})")
                if lb.shape[0] != b.shape[0]:
                    raise ArgumentError(f"{self.name}: {lb.shape[0]} labels for {b.shape[0]} boxes (sample {i})")
        n = len(boxes)
        if n == 0:
            return [TensorList([], "")] + ([TensorList([], "")] if labels is not None else [])
        dev = boxes[0].device
        sizes = [self._sizes(i, args) for i in range(n)]
        counts = [int(b.shape[0]) for b in boxes]
        reps = torch.tensor(counts, device=dev)
        rad = torch.repeat_interleave(torch.tensor([s[0] for s in sizes], dtype=torch.float32, device=dev), reps)
        in_wh = torch.repeat_interleave(torch.tensor([s[1] for s in sizes], dtype=torch.float32, device=dev), reps, 0)
        out_wh = torch.repeat_interleave(torch.tensor([s[2] for s in sizes], dtype=torch.float32, device=dev), reps, 0)
        flat = torch.cat(boxes) if n > 1 else boxes[0]
        out, keep = rotate_boxes(flat, self.args["bbox_layout"] == "xyXY", bool(self.args["bbox_normalized"]),
                                 rad, in_wh, out_wh, self.args["mode"], float(self.args["remove_threshold"]))
        parts = torch.split(out, counts)
        masks = torch.split(keep, counts)
        outs = [TensorList([p[m] for p, m in zip(parts, masks)], "")]
        if labels is not None:
            outs.append(TensorList([lb[m.to(lb.device)] for lb, m in zip(labels, masks)], ""))
        return outs


register(OpSchema(
    name="bbox_rotate", impl=BBoxRotate, devices=("cpu",), min_inputs=1, max_inputs=2, class_name_override="BBoxRotate",
    num_outputs=lambda args, n_inputs: n_inputs, outputs_use_inputs=True,
    doc="Moves (N, 4) float32 boxes where fn.rotate takes their image (call it with the image's shape "
        "before rotating); with int32 labels (N,) or (N, 1) as a second input, the labels of boxes "
        "dropped (less than `remove_threshold` of their area left on the canvas) are dropped too.",
    args=(
        Arg("angle", "float", doc="rotation angle in degrees (counter-clockwise, as fn.rotate)", tensor=True),
        Arg("input_shape", "ints", doc="the image's shape before rotation, in `shape_layout` order", tensor=True),
        Arg("shape_layout", "layout", "HW", "what the values of `input_shape` are (H and W must be there)"),
        Arg("bbox_layout", "layout", "xyXY", "'xyXY' (corners) or 'xyWH' (corner and size)"),
        Arg("bbox_normalized", "bool", True, "boxes are in [0, 1] image units (else pixels)"),
        Arg("keep_size", "bool", False, "the canvas keeps the image's size (fn.rotate's keep_size)"),
        Arg("size", "floats", [], "the canvas size (H, W) given to fn.rotate", tensor=True),
        Arg("mode", "str", "expand", "'expand': the rotated box's bounding box; 'fixed': its original "
            "size; 'halfway': between the two"),
        Arg("remove_threshold", "float", 0.1, "boxes with less of their area left on the canvas are dropped; "
            "in [0, 1)"),
    ),
))
