"""segmentation.random_object_bbox, segmentation.random_mask_pixel, segmentation.select_masks.

The random choices (foreground or not, the class, the object, the pixel) are drawn with each
sample's keyed generator (pipeline seed, op seed, iteration, sample), so the same seed gives the
same boxes whatever the threads; DALI's generator is not reproduced (the tests compare outcome
frequencies with DALI's). random_object_bbox: with probability `foreground_prob` a class is drawn
(by `class_weights`, among the classes with an object passing `threshold`), then one of its objects
(the `k_largest` by box volume, if given); otherwise, or when no object qualifies, the whole input
(class: the background label). `cache_objects` is accepted: results are the same without a cache.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import segmentation as K
from ..rng import SampleRNG
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, one_of


def _ints(v: Any) -> list[int] | None:
    if v is None:
        return None
    return [int(v)] if isinstance(v, (int, float)) else [int(a) for a in v]


def _floats(v: Any) -> list[float] | None:
    if v is None:
        return None
    return [float(v)] if isinstance(v, (int, float)) else [float(a) for a in v]


def _pick(rng: SampleRNG, weights: list[float]) -> int:
    """An index drawn with probabilities proportional to `weights` (all > 0)."""
    u = rng.uniform(0.0, sum(weights))
    acc = 0.0
    for k, w in enumerate(weights):
        acc += w
        if u < acc:
            return k
    return len(weights) - 1


def _free_label(classes: list[int] | None) -> int:
    """DALI's default background: 0 unless it is a class, else one below the smallest class, going
    down (with int32 wrap-around) past the labels that are classes."""
    if classes is None or 0 not in classes:
        return 0
    taken = set(classes)
    bg = min(classes)
    for _ in range(len(taken) + 1):
        bg = (bg - 1 + 2**31) % 2**32 - 2**31
        if bg not in taken:
            return bg
    raise ArgumentError("random_object_bbox: no int32 label is left for the background")


class RandomObjectBBox(Operator):
    def setup(self) -> None:
        a = self.args
        if a["ignore_class"] and any(a.get(k) is not None or k in self.node.arg_inputs
                                     for k in ("classes", "class_weights")) | a["output_class"]:
            raise ArgumentError(f"{self.name}: `classes`, `class_weights` and `output_class` cannot be used with "
                                "ignore_class=True")
        if a.get("k_largest") is not None and a["k_largest"] < 1:
            raise ArgumentError(f"{self.name}: `k_largest` must be at least 1, got {a['k_largest']}")

    def get(self, args: dict[str, Any], name: str) -> Any:
        return args[name] if name in args else self.args.get(name)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> tuple[torch.Tensor, ...]:
        mask = inputs[0]
        if mask.dtype.is_floating_point or mask.dtype.is_complex:
            raise ArgumentTypeError(f"{self.name}: the mask must hold integer labels, got {mask.dtype}")
        ndim = mask.dim()
        if not 1 <= ndim <= 6:  # DALI 2.4's range (a 0-d label is refused there too)
            raise ArgumentError(f"{self.name}: sample {ctx.index}: the mask must have 1 to 6 dimensions, got {ndim}")
        classes = _ints(self.get(args, "classes"))
        weights = _floats(self.get(args, "class_weights"))
        if weights is not None and classes is not None and len(weights) != len(classes):
            raise ArgumentError(f"{self.name}: `classes` ({len(classes)}) and `class_weights` ({len(weights)}) must "
                                "have the same length")
        bg = self.get(args, "background")
        bg = _free_label(classes) if bg is None else int(bg)
        if classes is not None and bg in classes:
            raise ArgumentError(f"{self.name}: class {bg} is also the background label; a foreground class "
                                "cannot be the background")
        if weights is not None and classes is None:  # DALI: the first labels from 0 up, skipping the background
            classes = [c for c in range(len(weights) + 1) if c != bg][:len(weights)]
        thr = _ints(self.get(args, "threshold"))
        if thr is not None and len(thr) not in (1, ndim):
            raise ArgumentError(f"{self.name}: `threshold` must have 1 or {ndim} values, got {len(thr)}")
        whole = (torch.zeros(ndim, dtype=torch.int64), torch.tensor(mask.shape, dtype=torch.int64), bg)
        rng = ctx.rng
        pick = whole
        if mask.numel() and rng.uniform() < float(self.get(args, "foreground_prob")):
            pick = self.choose(mask.cpu(), rng, classes, weights, bg, thr) or whole
        return self.outputs(*pick)

    def choose(self, mask: torch.Tensor, rng: SampleRNG, classes: list[int] | None, weights: list[float] | None,
               bg: int, thr: list[int] | None) -> tuple[torch.Tensor, torch.Tensor, int] | None:
        labels, lo, hi = K.boxes(mask, K.components(mask))
        labels = labels.to(torch.int64)  # torch.isin has no unsigned kernels; int64 holds every label
        keep = labels != bg if classes is None else torch.isin(labels, torch.tensor(classes, dtype=labels.dtype))
        if thr is not None:
            keep &= ((hi - lo) >= torch.tensor(thr, dtype=torch.int64)).all(dim=1)
        labels, lo, hi = labels[keep], lo[keep], hi[keep]
        if not labels.numel():
            return None
        k = self.args.get("k_largest")
        if self.args["ignore_class"]:
            cand = self.largest(torch.arange(labels.numel()), lo, hi, k)
        else:
            present = sorted(set(labels.tolist()))
            if classes is not None:
                order = {c: j for j, c in enumerate(classes)}
                present.sort(key=lambda c: order[c])
            w = [1.0] * len(present) if weights is None else [weights[classes.index(c)] for c in present]  # type: ignore[union-attr]
            pairs = [(c, x) for c, x in zip(present, w) if x > 0]
            if not pairs:
                return None
            cls = pairs[_pick(rng, [x for _, x in pairs])][0]
            cand = self.largest(torch.nonzero(labels == cls).reshape(-1), lo, hi, k)
        j = int(cand[rng.randint(0, int(cand.numel()) - 1)])
        return lo[j], hi[j], int(labels[j])

    @staticmethod
    def largest(idx: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, k: int | None) -> torch.Tensor:
        """The `k` boxes of `idx` with the largest volume (all, in raster order, without k)."""
        if k is None or k >= idx.numel():
            return idx
        vol = (hi[idx] - lo[idx]).prod(dim=1)
        order = sorted(range(int(idx.numel())), key=lambda j: (-int(vol[j]), j))
        return idx[torch.tensor(order[:k], dtype=torch.int64)]

    def outputs(self, lo: torch.Tensor, hi: torch.Tensor, cls: int) -> tuple[torch.Tensor, ...]:
        fmt = self.args["format"]
        lo32, hi32 = lo.to(torch.int32).to(self.device), hi.to(torch.int32).to(self.device)
        out: tuple[torch.Tensor, ...] = (
            (lo32, hi32 - lo32) if fmt == "anchor_shape" else (lo32, hi32) if fmt == "start_end"
            else (torch.cat([lo32, hi32]),))
        if self.args["output_class"]:
            out += (torch.tensor(cls, dtype=torch.int32, device=self.device),)
        return out

    def output_layout(self, index: int) -> str:
        return ""


class RandomMaskPixel(Operator):
    def setup(self) -> None:
        if self.args.get("value") is not None or "value" in self.node.arg_inputs:
            if "threshold" in self.node.explicit or "threshold" in self.node.arg_inputs:
                raise ArgumentError(f"{self.name}: `value` and `threshold` cannot be given together")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        mask = inputs[0]
        get = lambda k: args[k] if k in args else self.args.get(k)  # noqa: E731
        if not mask.numel():
            return torch.zeros(mask.dim(), dtype=torch.int64, device=self.device)
        flags = torch.ones_like(mask, dtype=torch.bool)
        if int(get("foreground")):
            value = get("value")
            flags = mask == value if value is not None else mask.to(torch.float64) > float(get("threshold"))
        count = int(flags.sum())
        if count == 0:  # no foreground: any pixel
            flags, count = torch.ones_like(mask, dtype=torch.bool), int(mask.numel())
        return K.kth_true(flags, ctx.rng.randint(0, count - 1)).to(self.device)

    def output_layout(self, index: int) -> str:
        return ""


class SelectMasks(Operator):
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        ids, polys, verts = inputs
        if not (len(ids) == len(polys) == len(verts)):
            raise ArgumentError(f"{self.name}: the three inputs have different batch sizes")
        for t in ids.samples[:1]:
            if t.dtype.is_floating_point or t.dtype == torch.bool:
                raise ArgumentTypeError(f"{self.name}: `mask_ids` must be integers, got {t.dtype}")
        for i in range(len(ids)):  # DALI 2.4 refuses other ranks (a 0-d or 2-D list of ids, 1-D vertices)
            if ids[i].dim() != 1 or verts[i].dim() != 2:
                raise ArgumentError(f"{self.name}: sample {i}: `mask_ids` must be 1-D and `vertices` 2-D, got "
                                    f"{ids[i].dim()}-D and {verts[i].dim()}-D")
        reindex = bool(self.args["reindex_masks"])
        outs = ctx.map(lambda i: K.select_polygons(self.name, ids[i].tolist(), polys[i].cpu(),
                                                   verts[i], reindex), len(ids))
        return [TensorList([o[0].to(self.device) for o in outs], ""), TensorList([o[1] for o in outs], "")]

    def output_layout(self, index: int) -> str:
        return ""


def _bbox_outputs(a: dict[str, Any]) -> int:
    return (1 if a.get("format") == "box" else 2) + (1 if a.get("output_class") else 0)


register(OpSchema(
    name="segmentation.random_object_bbox", impl=RandomObjectBBox, devices=("cpu",), random=True,
    num_outputs=_bbox_outputs, class_name_override="RandomObjectBBox",
    doc="The bounding box of a randomly chosen object (a connected blob of one label) of a label map; "
        "outputs per `format` (anchor and shape, start and end, or one box), and the class with output_class.",
    args=(Arg("background", "int", None, "the background label (default: 0, or a value not in classes)", tensor=True),
          Arg("classes", "int_list", None, "the foreground labels (default: every label but the background)",
              tensor=True),
          Arg("class_weights", "float_list", None, "relative probabilities of the classes", tensor=True),
          # DALI 2.4 takes any value: from 1 up always an object, from 0 down never
          Arg("foreground_prob", "float", 1.0, "chance of picking an object (else the whole input)", tensor=True),
          Arg("format", "str", "anchor_shape", "the box outputs", check=one_of("anchor_shape", "start_end", "box")),
          Arg("ignore_class", "bool", False, "pick among all objects alike (not a class first)"),
          Arg("k_largest", "int", None, "only the k largest boxes (by volume) are candidates"),
          Arg("threshold", "int_list", None, "minimum box extent per axis (one value: every axis)", tensor=True),
          Arg("output_class", "bool", False, "also output the chosen box's label"),
          Arg("cache_objects", "bool", False, "accepted; the boxes are found again for every input")),
))
register(OpSchema(
    name="segmentation.random_mask_pixel", impl=RandomMaskPixel, devices=("cpu",), random=True,
    class_name_override="RandomMaskPixel",
    doc="The coordinates (int64) of a random pixel of a mask: any pixel, or (foreground=1) one whose value "
        "exceeds `threshold` or equals `value` (any pixel when there is none).",
    args=(Arg("foreground", "int", 0, "1: draw among the foreground pixels", tensor=True),
          Arg("threshold", "float", 0.0, "foreground: values above it", tensor=True),
          Arg("value", "int", None, "foreground: values equal to it (exclusive with threshold)", tensor=True)),
))
register(OpSchema(
    name="segmentation.select_masks", impl=SelectMasks, devices=("cpu",), min_inputs=3, max_inputs=3,
    num_outputs=2, class_name_override="SelectMasks",
    doc="The polygons (and their vertices) of the selected mask ids, in the order of mask_ids; the vertex "
        "indices are renumbered, the mask ids optionally too.",
    args=(Arg("reindex_masks", "bool", False, "replace each mask id by its position in mask_ids"),),
))
