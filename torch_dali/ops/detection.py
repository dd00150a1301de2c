"""Bounding-box ops: bb_flip, bbox_paste, box_encoder (DALI 2.4's names, arguments and results).

Boxes are float32 tensors of 4 coordinates per box in [0, 1] image units (`ltrb` or `xywh`), on the
CPU or, for bb_flip and box_encoder (as in DALI), the GPU. A batch is worked in one call: bb_flip
flattens every sample's boxes, box_encoder pads them (kernels in torch_dali.functional.detection).
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import detection as K
from ..tensor_list import TensorList
from ._dispatch import call
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, length, positive, unit_interval


def check_boxes(op: str, t: torch.Tensor, what: str = "boxes", coords: int = 4) -> None:
    """Boxes must be floating point with a multiple of `coords` values (DALI: (N, 4))."""
    if not t.is_floating_point():
        raise ArgumentTypeError(f"{op}: {what} must be floating point (float32), got {t.dtype}")
    if t.numel() % coords:
        raise ArgumentError(f"{op}: {what} must hold {coords} coordinates per box, got shape {tuple(t.shape)}")


def _per_sample(op: Operator, args: dict[str, list[Any]], name: str, n: int) -> list[Any]:
    return list(args[name]) if name in args else [op.args[name]] * n


class BbFlip(Operator):
    """Mirrors boxes horizontally and/or vertically, per sample."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        samples = list(tl)
        n = len(samples)
        for t in samples:
            if not t.is_floating_point() or t.numel() % 4:  # (the call only where it raises)
                check_boxes(self.name, t)
        if not n:
            return [TensorList([], tl.layout())]
        h = _per_sample(self, args, "horizontal", n)
        v = _per_sample(self, args, "vertical", n)
        # by its registered stand-in where one takes the call (ops/fast/cpu_box_moves.py)
        return [TensorList(call(K.bb_flip_batch, samples, self.args["ltrb"], h, v), tl.layout())]


class BBoxPaste(Operator):
    """Moves boxes to where they land when their image is pasted on a larger canvas (fn.paste)."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        # one pass over the batch's boxes: per-sample calls cost more than the arithmetic
        tl = inputs[0]
        samples = list(tl)
        n = len(samples)
        ratios = [float(r) for r in _per_sample(self, args, "ratio", n)]
        for t, ratio in zip(samples, ratios):
            check_boxes(self.name, t)
            if not ratio >= 1.0:
                raise ArgumentError(f"{self.name}: `ratio` must be >= 1 (canvas / input size), got {ratio}")
        px = [float(x) for x in _per_sample(self, args, "paste_x", n)]
        py = [float(y) for y in _per_sample(self, args, "paste_y", n)]
        return [TensorList(call(K.bbox_paste_batch, samples, self.args["ltrb"], ratios, px, py), tl.layout())]


class BoxEncoder(Operator):
    """SSD's encoding of ground-truth boxes and labels against the anchors (DALI's BoxEncoder)."""

    sample_wise = False

    def setup(self) -> None:
        anchors = list(self.args["anchors"])
        if not anchors or len(anchors) % 4:
            raise ArgumentError(f"{self.name}: `anchors` must be 4 ltrb values per anchor, got {len(anchors)} values")
        self.anchors = torch.tensor(anchors, dtype=torch.float32).reshape(-1, 4)
        if any(s == 0 for s in self.args["stds"]):
            raise ArgumentError(f"{self.name}: `stds` must not contain 0, got {self.args['stds']}")
        self._dev_anchors: dict[torch.device, torch.Tensor] = {}

    def _anchors(self, dev: torch.device) -> torch.Tensor:
        if dev not in self._dev_anchors:
            self._dev_anchors[dev] = self.anchors.to(dev)
        return self._dev_anchors[dev]

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        boxes, labels = list(inputs[0]), list(inputs[1])
        for i, (b, lab) in enumerate(zip(boxes, labels)):
            check_boxes(self.name, b)
            if lab.is_floating_point():
                raise ArgumentTypeError(f"{self.name}: labels must be integers, got {lab.dtype} (sample {i})")
            if lab.numel() != b.numel() // 4:
                raise ArgumentError(f"{self.name}: sample {i} has {b.numel() // 4} boxes but {lab.numel()} labels")
        dev = boxes[0].device if boxes else self.device
        a = self.args

        def encode(lo: int, hi: int) -> tuple[torch.Tensor, torch.Tensor]:
            b, lab, counts = K.pad_boxes(boxes[lo:hi], labels[lo:hi], dev)
            # by its registered stand-in where one takes the call (ops/fast/cpu_boxes.py)
            return call(K.box_encoder_batch, b, lab, counts, self._anchors(dev), a["criteria"], a["offset"],
                        a["scale"], list(a["means"]), list(a["stds"]))
        n = len(boxes)
        parts = ctx.pool.workers if ctx.pool is not None and dev.type == "cpu" and n >= 2 * ctx.pool.workers else 1
        if parts == 1:
            enc, out_lab = encode(0, n)
        else:  # each sample's encoding is its own (padding never wins an anchor): the pool's threads
            # take a part of the batch each (the C stand-in releases the GIL), this thread the last
            # (one hand-off fewer: ~0.1 ms a batch on a busy 2-core machine)
            cuts = [n * k // parts for k in range(parts + 1)]
            futures = [ctx.pool.submit(encode, cuts[k], cuts[k + 1]) for k in range(parts - 1)]
            last = encode(cuts[-2], cuts[-1])
            done = [f.result() for f in futures] + [last]
            enc, out_lab = torch.cat([d[0] for d in done]), torch.cat([d[1] for d in done])
        return [TensorList(enc, ""), TensorList(out_lab, "")]

    def output_layout(self, index: int) -> str:
        return ""


_LTRB = Arg("ltrb", "bool", False, "True: [left, top, right, bottom]; False: [x, y, width, height]")

register(OpSchema(
    name="bb_flip", impl=BbFlip, devices=("cpu", "gpu"),
    doc="Mirrors bounding boxes in [0, 1] coordinates (ltrb or xywh), horizontally and/or vertically.",
    args=(
        _LTRB,
        Arg("horizontal", "int", 1, "1 flips the boxes left-right", tensor=True),
        Arg("vertical", "int", 0, "1 flips the boxes upside down", tensor=True),
    ),
))
register(OpSchema(
    name="bbox_paste", impl=BBoxPaste, devices=("cpu",), class_name_override="BBoxPaste",
    doc="Moves boxes as their image moves when pasted on a canvas `ratio` times larger: "
        "(x, y) -> (x / ratio + paste_x * (ratio - 1) / ratio, ...), sizes / ratio.",
    args=(
        Arg("ratio", "float", doc="canvas size / input size (at least 1)", tensor=True, check=positive),
        _LTRB,
        Arg("paste_x", "float", 0.5, "horizontal paste position, 0 left .. 1 right", tensor=True,
            check=unit_interval),
        Arg("paste_y", "float", 0.5, "vertical paste position, 0 top .. 1 bottom", tensor=True,
            check=unit_interval),
    ),
))
register(OpSchema(
    name="box_encoder", impl=BoxEncoder, devices=("cpu", "gpu"), min_inputs=2, max_inputs=2, num_outputs=2,
    doc="Matches ltrb boxes (N, 4) and labels (N,) to the anchors (SSD): each anchor gets the box with "
        "the highest IoU above `criteria` (and each box its best anchor); outputs (M, 4) boxes as "
        "[center x, center y, width, height] (unmatched: the anchor) or, with `offset`, normalized "
        "offsets (unmatched: 0), and (M,) labels (unmatched: 0).",
    args=(
        Arg("anchors", "float_list", doc="anchors as a flat list of ltrb values"),
        Arg("criteria", "float", 0.5, "IoU a match must exceed", check=unit_interval),
        Arg("offset", "bool", False, "output ((box * scale - anchor * scale) - means) / stds offsets"),
        Arg("scale", "float", 1.0, "rescales boxes and anchors before the offsets are computed"),
        Arg("means", "float_list", (0.0, 0.0, 0.0, 0.0), "[x, y, w, h] means of the offsets", check=length(4)),
        Arg("stds", "float_list", (1.0, 1.0, 1.0, 1.0), "[x, y, w, h] standard deviations of the offsets",
            check=length(4)),
    ),
))
