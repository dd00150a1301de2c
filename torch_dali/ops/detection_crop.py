"""random_bbox_crop and ssd_random_crop: random crop windows that keep bounding boxes consistent.

The search is DALI 2.4's (torch_dali.functional.bbox_crop): same arguments, same rules for valid
windows, same distribution of windows; the draws come from each sample's keyed RNG, so a seed gives
the same windows whatever the thread count, but not DALI's windows (its mt19937 streams differ).
Boxes are read and written in float32 as DALI does (a window of [0, 1] returns `xyXY` boxes
unchanged and `xyWH` boxes as (x, y, (x + w) - x, (y + h) - y)).
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError, ArgumentTypeError, DataError
from ..functional import bbox_crop as BC
from ..functional.detection import layout_error
from ..tensor_list import TensorList
from ._dispatch import call
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, one_of, positive
from .layout_op import resolve_layout

_log = logging.getLogger("torch_dali")
_START, _END, _EXTENT = "xyz", "XYZ", "WHD"


def _boxes32(op: str, t: torch.Tensor, ncoords: int, source: str) -> np.ndarray:
    if not t.is_floating_point():
        raise ArgumentTypeError(f"{op}: boxes must be floating point (float32), got {t.dtype}")
    if t.dim() != 2 or t.shape[1] != ncoords:
        raise ArgumentError(f"{op}: boxes must be 2-D (boxes, {ncoords} coordinates), got shape "
                            f"{tuple(t.shape)}{source}")
    return t.detach().cpu().to(torch.float32).numpy()


def _plain(layout: str) -> bool:
    """Starts first, then ends or extents, in x, y(, z) order ('xyXY', 'xyWH', 'xyzXYZ'...)."""
    nd = len(layout) // 2
    return layout[:nd] == _START[:nd] and layout[nd:] in (_END[:nd], _EXTENT[:nd])


def _read(b: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) in float32 from boxes in `layout` (hi = lo + extent in float32, as DALI)."""
    ndim = len(layout) // 2
    if _plain(layout):  # column slices (views), no stacking
        lo = b[:, :ndim]
        return lo, (b[:, ndim:] if layout[ndim] in _END else lo + b[:, ndim:])
    col = {c: b[:, k] for k, c in enumerate(layout)}
    lo = np.stack([col[_START[d]] for d in range(ndim)], 1)
    hi = np.stack([col[_END[d]] if _END[d] in col else col[_START[d]] + col[_EXTENT[d]] for d in range(ndim)], 1)
    return lo, hi


def _write(lo: np.ndarray, hi: np.ndarray, layout: str) -> np.ndarray:
    if layout and _plain(layout):
        nd = len(layout) // 2
        return np.concatenate([lo, hi if layout[nd] in _END else hi - lo], 1).astype(np.float32, copy=False)
    out = [lo[:, _START.index(c)] if c in _START else hi[:, _END.index(c)] if c in _END
           else hi[:, _EXTENT.index(c)] - lo[:, _EXTENT.index(c)] for c in layout]
    return np.stack(out, 1).astype(np.float32) if out else np.zeros((lo.shape[0], 0), np.float32)


class RandomBBoxCrop(Operator):
    """Outputs anchor, shape, boxes (, labels) (, bbox indices) per sample."""

    sample_wise = False

    def setup(self) -> None:
        a = self.args
        self.has_crop_shape = a.get("crop_shape") is not None or "crop_shape" in self.node.arg_inputs
        self.has_input_shape = a.get("input_shape") is not None or "input_shape" in self.node.arg_inputs
        if self.has_crop_shape and not self.has_input_shape:
            raise ArgumentError(f"{self.name}: `crop_shape` needs `input_shape` (the image's shape)")
        # given and not the default (None, DALI's "not set", arrives as the default)
        shaped = [n for n in ("scaling", "aspect_ratio") if n in self.node.explicit and list(a[n]) != [1.0, 1.0]]
        if self.has_crop_shape and shaped:
            raise ArgumentError(f"{self.name}: `crop_shape` cannot be combined with `scaling` or `aspect_ratio`")
        scaling = list(a["scaling"])
        if len(scaling) != 2 or not 0.0 <= scaling[0] <= scaling[1]:
            raise ArgumentError(f"{self.name}: `scaling` must be [min, max] with 0 <= min <= max, got {scaling}")
        self.scaling = (float(scaling[0]), float(scaling[1]))
        self.aspect_raw = list(a["aspect_ratio"])
        if len(self.aspect_raw) not in (2, 6) or any(
                not 0 < self.aspect_raw[k] <= self.aspect_raw[k + 1] for k in range(0, len(self.aspect_raw), 2)):
            raise ArgumentError(f"{self.name}: `aspect_ratio` must be [min, max] (or 3 such pairs for 3-D boxes) "
                                f"with 0 < min <= max, got {self.aspect_raw}")
        thr = a["thresholds"]
        self.thresholds = tuple(float(t) for t in ([thr] if isinstance(thr, (int, float)) else thr))
        if not self.thresholds:
            raise ArgumentError(f"{self.name}: `thresholds` must not be empty")
        prune = a["bbox_prune_threshold"]
        if prune is not None and not 0.0 <= prune <= 1.0:
            raise ArgumentError(f"{self.name}: `bbox_prune_threshold` must be in [0, 1], got {prune}")
        self.layout_arg = a["bbox_layout"] or ""
        self._params: dict[int, BC.CropParams] = {}
        self._layouts: dict[int, str] = {}

    def output_layout(self, index: int) -> str:
        return ""

    def _layout(self, ndim: int) -> str:
        if ndim not in self._layouts:  # checked once per box dimensionality
            self._layouts[ndim] = self._check_layout(ndim)
        return self._layouts[ndim]

    def _check_layout(self, ndim: int) -> str:
        if self.layout_arg:
            problem = layout_error(self.layout_arg, ndim)
            if problem:
                raise ArgumentError(f"{self.name}: `bbox_layout` must be {problem}, got {self.layout_arg!r}")
            return self.layout_arg
        ltrb = self.args["ltrb"]
        return ("xyXY" if ltrb else "xyWH") if ndim == 2 else ("xyzXYZ" if ltrb else "xyzWHD")

    def params(self, ndim: int) -> BC.CropParams:
        if ndim not in self._params:
            ar = self.aspect_raw
            if ndim == 2 and len(ar) != 2:
                raise ArgumentError(f"{self.name}: `aspect_ratio` must be one [min, max] range for 2-D boxes, got {ar}")
            a = self.args
            self._params[ndim] = BC.CropParams(
                ndim=ndim, thresholds=self.thresholds, overlap=a["threshold_type"] == "overlap",
                aspect=tuple((ar[k], ar[k + 1]) for k in range(0, len(ar), 2)), scaling=self.scaling,
                allow_no_crop=a["allow_no_crop"], num_attempts=a["num_attempts"],
                total_num_attempts=a["total_num_attempts"], all_boxes=a["all_boxes_above_threshold"],
                prune=a["bbox_prune_threshold"])
        return self._params[ndim]

    def _shape_arg(self, args: dict[str, list[Any]], name: str, i: int, ndim: int, src: str) -> np.ndarray:
        v = args[name][i] if name in args else self.args.get(name)
        vals = [v] if isinstance(v, (int, float)) else list(v)
        if len(vals) != ndim:
            raise ArgumentError(f"{self.name}: `{name}` must have {ndim} values, got {vals}{src}")
        order = self.args["shape_layout"] or ("WH" if ndim == 2 else "WHD")
        internal = "WH" if ndim == 2 else "WHD"
        if sorted(order) != sorted(internal):
            raise ArgumentError(f"{self.name}: `shape_layout` must be a permutation of {internal!r}, got {order!r}")
        return np.array([float(vals[order.index(c)]) for c in internal])

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        boxes = inputs[0]
        labels = inputs[1] if len(inputs) > 1 else None
        n = len(boxes)
        ncoords = [int(b.shape[-1]) if b.dim() == 2 else 0 for b in boxes]
        for i in range(n):
            if ncoords[i] not in (4, 6):
                raise ArgumentError(f"{self.name}: boxes must be (boxes, 4) or (boxes, 6), got shape "
                                    f"{tuple(boxes[i].shape)}{self._src(ctx, i)}")
        kinds = sorted(set(ncoords))
        if len(kinds) == 1:  # a batch has one box dimensionality in practice
            return [TensorList(c, "") for c in self._group(ctx, list(range(n)), kinds[0], boxes, labels, args)]
        n_out = 3 + (labels is not None) + bool(self.args["output_bbox_indices"])
        rows: list[list[torch.Tensor]] = [[] for _ in range(n)]
        for nc in kinds:  # one search per box dimensionality
            ids = [i for i in range(n) if ncoords[i] == nc]
            cols = self._group(ctx, ids, nc, boxes, labels, args)
            for s, i in enumerate(ids):
                rows[i] = [c[s] for c in cols]
        return [TensorList([r[k] for r in rows], "") for k in range(n_out)]

    @staticmethod
    def _src(ctx: BatchContext, i: int) -> str:
        return f" (sample {i}: {ctx.sources[i]})" if ctx.sources[i] else f" (sample {i})"

    def _group(self, ctx: BatchContext, ids: list[int], ncoords: int, boxes: TensorList, labels: TensorList | None,
               args: dict[str, list[Any]]) -> list[torch.Tensor | list[torch.Tensor]]:
        """The outputs of samples `ids`, whose boxes all have `ncoords` coordinates, each a list of
        samples or one dense (samples, ...) tensor: boxes read and checked as one array, one window
        search for them all, boxes remapped in one pass."""
        ndim = ncoords // 2
        layout = self._layout(ndim)
        per = [boxes[i] for i in ids]
        for i, t in zip(ids, per):
            if not t.is_floating_point():
                raise ArgumentTypeError(f"{self.name}: boxes must be floating point (float32), got {t.dtype}"
                                        f"{self._src(ctx, i)}")
        counts = np.array([t.shape[0] for t in per], np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        # one concatenation (float16/64 samples promote exactly, then round to float32 as one by one)
        b32 = _boxes32(self.name, torch.cat(per) if len(per) > 1 else per[0], ncoords, "")
        lo, hi = _read(b32, layout)
        corners = np.concatenate([lo, hi], 1)
        # as DALI: inverted boxes pass, outside ones do not (two reductions first: NaN fails them)
        if not (corners.min(initial=0.0) >= 0 and corners.max(initial=1.0) <= 1):
            bad = ~((corners >= 0) & (corners <= 1)).all(1)
            row = int(np.nonzero(bad)[0][0])
            s = int(np.searchsorted(offsets, row, side="right")) - 1
            raise DataError(f"{self.name}: box {row - offsets[s]} {corners[row].tolist()} is outside [0, 1] (boxes "
                            f"are relative, in {layout!r}){self._src(ctx, ids[s])}")
        lab = [labels[i] for i in ids] if labels is not None else []
        for s, lt in enumerate(lab):
            if lt.dim() == 0 or lt.shape[0] != counts[s]:
                raise ArgumentError(f"{self.name}: {counts[s]} boxes but labels of shape {tuple(lt.shape)}"
                                    f"{self._src(ctx, ids[s])}")
        crop_shape = self._shapes(ctx, args, "crop_shape", ids, ndim) if self.has_crop_shape else None
        input_shape = self._shapes(ctx, args, "input_shape", ids, ndim) if self.has_input_shape else None
        if input_shape is not None and (input_shape <= 0).any():
            s = int(np.nonzero((input_shape <= 0).any(1))[0][0])
            raise ArgumentError(f"{self.name}: `input_shape` must be positive, got {input_shape[s].tolist()}"
                                f"{self._src(ctx, ids[s])}")
        res = call(BC.find_crops, self.node.seed, ctx.iteration, np.array(ids, np.int64), lo.astype(np.float64),
                   hi.astype(np.float64), offsets, self.params(ndim), crop_shape, input_shape)
        if res.failed >= 0:
            raise DataError(f"{self.name}: no window meeting the thresholds was found in {BC.MAX_ATTEMPTS} attempts; "
                            f"set `total_num_attempts` to take the best window instead{self._src(ctx, ids[res.failed])}")
        if not self.args["quiet"] and res.exhausted.any():
            for s in np.nonzero(res.exhausted & (counts > 0))[0]:
                _log.warning("%s: Could not find a valid cropping window to satisfy the specified requirements "
                             "(attempted %d times). Using the best cropping window so far (best_metric=%g)",
                             self.name, self.args["total_num_attempts"], res.best_metric[s])
        if _plain(layout):  # by its registered stand-in where one takes the call (ops/fast/cpu_bbox.py)
            out, kept, local, n_kept = call(BC.kept_boxes, b32, ndim, layout[ndim] in _EXTENT, offsets, res.rel_lo,
                                            res.rel_hi, res.keep)
        else:
            kept = np.nonzero(res.keep)[0]
            owner = np.repeat(np.arange(len(ids)), counts)[kept]
            n_lo, n_hi = BC.remap32(lo[kept], hi[kept], res.rel_lo, res.rel_hi, owner)
            out, local, n_kept = _write(n_lo, n_hi, layout), kept - offsets[owner], np.bincount(owner,
                                                                                                 minlength=len(ids))
        kept_counts = n_kept.tolist()
        out_boxes = torch.from_numpy(out).split_with_sizes(kept_counts)
        cols: list[torch.Tensor | list[torch.Tensor]] = [torch.from_numpy(res.anchor), torch.from_numpy(res.shape),
                                                         list(out_boxes)]
        if labels is not None:
            first = lab[0]  # (a CPU op: the labels are on the CPU; 1-D ones checked first, ~3x faster)
            if all(t.dtype == first.dtype and t.dim() == 1 for t in lab) or all(
                    t.dtype == first.dtype and t.shape[1:] == first.shape[1:] for t in lab):  # one gather
                picked = (torch.cat(lab) if len(lab) > 1 else lab[0]).index_select(0, torch.from_numpy(kept))
                cols.append(list(picked.split_with_sizes(kept_counts)))
            else:
                picks = torch.from_numpy(local).split_with_sizes(kept_counts)
                cols.append([t[k.to(t.device)] for t, k in zip(lab, picks)])
        if self.args["output_bbox_indices"]:
            cols.append(list(torch.from_numpy(local.astype(np.int32)).split_with_sizes(kept_counts)))
        return cols

    def _shapes(self, ctx: BatchContext, args: dict[str, list[Any]], name: str, ids: list[int],
                ndim: int) -> np.ndarray:
        return np.stack([self._shape_arg(args, name, i, ndim, self._src(ctx, i)) for i in ids])


class SSDRandomCrop(Operator):
    """DALI's deprecated SSDRandomCrop: crops an HWC (or HW) image with a window found as in SSD."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        images, boxes, labels = inputs
        resolve_layout(self.name, images.layout(), images[0].dim() if len(images) else 3, ("HWC", "HW"))
        rows = ctx.map(lambda i: self._one(ctx, i, images[i], boxes[i], labels[i]))
        return [TensorList([r[0] for r in rows], images.layout()), TensorList([r[1] for r in rows], ""),
                TensorList([r[2] for r in rows], "")]

    def output_layout(self, index: int) -> str | None:
        return None if index == 0 else ""  # the images keep theirs (none stays none, as in DALI)

    def _one(self, ctx: BatchContext, i: int, img: torch.Tensor, boxes: torch.Tensor,
             labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        src = f" (sample {i})"
        if img.dim() not in (2, 3):
            raise ArgumentError(f"{self.name}: images must be HWC or HW, got shape {tuple(img.shape)}{src}")
        b = _boxes32(self.name, boxes, 4, src)
        try:
            found = BC.ssd_crop(ctx.sample(i).rng, b, self.args["num_attempts"])
        except RuntimeError as e:
            raise DataError(f"{self.name}: {e}{src}") from None
        if found is None:  # no crop: all three pass through (labels are only read to keep a subset)
            return img, boxes, labels
        if labels.dim() == 0 or labels.shape[0] != b.shape[0]:
            raise ArgumentError(f"{self.name}: {b.shape[0]} boxes but labels of shape {tuple(labels.shape)}{src}")
        left, top, w, h, keep = found
        scale = np.array([w, h, w, h])
        minus = np.array([left, top, left, top])
        nb = np.clip((b[keep].astype(np.float64) - minus) / scale, 0.0, 1.0).astype(np.float32)
        H, W = int(img.shape[0]), int(img.shape[1])
        x0, y0 = int(np.floor(left * W + 0.5)), int(np.floor(top * H + 0.5))
        x1, y1 = int(np.floor((left + w) * W + 0.5)), int(np.floor((top + h) * H + 0.5))
        out_img = img[y0:y1, x0:x1].contiguous()
        out_labels = labels.reshape(labels.shape[0], -1)[torch.from_numpy(keep).to(labels.device)].reshape(-1)
        return out_img, torch.from_numpy(nb), out_labels


def _crop_outputs(args: dict[str, Any], num_inputs: int) -> int:
    return 3 + (num_inputs > 1) + bool(args.get("output_bbox_indices"))


register(OpSchema(
    name="random_bbox_crop", impl=RandomBBoxCrop, devices=("cpu",), min_inputs=1, max_inputs=2,
    num_outputs=_crop_outputs, outputs_use_inputs=True, random=True, class_name_override="RandomBBoxCrop",
    doc="A random crop window that keeps bounding boxes (and labels) consistent: outputs the window's "
        "anchor and shape ([x, y(, z)], [w, h(, d)]; relative, or absolute with `crop_shape`), the "
        "boxes kept (centroid inside, or `bbox_prune_threshold`) in the window's coordinates, the "
        "labels if given, and with `output_bbox_indices` the kept boxes' indices.",
    args=(
        Arg("thresholds", "floats", (0.0,), "minimum IoU (or overlap) per box; one is picked per try"),
        Arg("threshold_type", "str", "iou", "'iou' or 'overlap' (fraction of the box inside the window)",
            check=one_of("iou", "overlap")),
        Arg("aspect_ratio", "float_list", (1.0, 1.0), "valid window aspect ratio range [min, max] (x/y; for 3-D "
            "boxes one or three pairs: xy, xz, yz)"),
        Arg("scaling", "float_list", (1.0, 1.0), "window extent range [min, max] relative to the image"),
        Arg("ltrb", "bool", True, "deprecated: True is bbox_layout 'xyXY', False 'xyWH'"),
        Arg("bbox_layout", "layout", "", "box coordinates, e.g. 'xyXY', 'xyWH', 'xyzXYZ' (default by ltrb)"),
        Arg("num_attempts", "int", 1, "windows tried per picked threshold", check=positive),
        Arg("total_num_attempts", "int", -1, "stop after this many windows and take the best (-1: no limit)"),
        Arg("all_boxes_above_threshold", "bool", True, "every box must meet the threshold (else one box)"),
        Arg("allow_no_crop", "bool", True, "'no crop' is one more outcome to pick"),
        Arg("crop_shape", "ints", None, "a fixed window shape (absolute; needs input_shape)", tensor=True),
        Arg("input_shape", "ints", None, "the image's shape (in shape_layout order)", tensor=True),
        Arg("shape_layout", "layout", "", "order of crop_shape / input_shape: 'WH' (default), 'HW', 'WHD'..."),
        Arg("bbox_prune_threshold", "float", None, "keep boxes with at least this fraction of their area inside "
            "(default: keep boxes whose centroid is inside)"),
        Arg("output_bbox_indices", "bool", False, "also output the indices of the boxes kept"),
        Arg("quiet", "bool", False, "no warning when total_num_attempts ends the search"),
    ),
))
register(OpSchema(
    name="ssd_random_crop", impl=SSDRandomCrop, devices=("cpu",), min_inputs=3, max_inputs=3, num_outputs=3,
    random=True, class_name_override="SSDRandomCrop",
    doc="Deprecated in DALI (use random_bbox_crop): crops an HWC or HW image, its ltrb boxes and labels with a "
        "window whose IoU with every box reaches a minimum picked from (any, 0.1, 0.3, 0.5, 0.7, 0.9) or "
        "no crop; windows 0.3..1 of each side, aspect 0.5..2.",
    args=(Arg("num_attempts", "int", 1, "windows tried per picked minimum IoU", check=positive),),
))
