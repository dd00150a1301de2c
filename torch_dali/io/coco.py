"""COCO annotation files (pycocotools' JSON format) read as DALI 2.4's readers.coco reads them.

An annotation file is untrusted input: its size is bounded, every field used is type-checked, and
a bad structure is a DataError naming the file and the field (`annotations[3].bbox`), never a crash.

Rules (DALI's): images are read in the order of their ids (or of the `images` argument); an
image's objects are its annotations in file order, less those whose bbox width or height is below
`size_threshold` and, without `include_iscrowd`, the crowd ones; labels are the category's position
in `categories` counting from 1 (an id not listed there gives 0), or the category id itself with
`avoid_class_remapping`; `ratio` divides coordinates by the image's width and height.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataError
from .bounded_file import FileTooLarge, NotRegularFile, read_regular_file

#: the largest annotation file read (pycocotools' train2017 instances file is ~450 MB)
MAX_JSON_BYTES = 1 << 30


@dataclass
class CocoOptions:
    ltrb: bool = False
    ratio: bool = False
    size_threshold: float = 0.1
    include_iscrowd: bool = True
    skip_empty: bool = False
    avoid_class_remapping: bool = False
    polygons: bool = False  # parse polygon segmentations
    rles: bool = False  # parse RLE segmentations too (pixelwise masks)
    images: list[str] | None = None


@dataclass
class CocoSample:
    file_name: str
    image_id: int
    width: int
    height: int
    boxes: np.ndarray  # (n, 4) float32
    labels: np.ndarray  # (n,) int32
    polygons: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int32))  # mask, start, end vertex
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    rles: list[tuple[int, int, int, Any]] = field(default_factory=list)  # (mask index, h, w, counts)


class _Doc:
    """Typed access to a parsed JSON document, every error naming the file and the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> DataError:
        return DataError(f"readers.coco: {self.path}: `{where}` {what}")

    def int_(self, v: Any, where: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                return int(v)
            raise self.fail(where, f"must be an integer, got {type(v).__name__} {_short(v)}")
        if not -2**31 <= v < 2**31:
            raise self.fail(where, f"must fit in 32 bits, got {v}")
        return v

    def num(self, v: Any, where: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.fail(where, f"must be a finite number, got {_short(v)}")
        return float(v)

    def list_(self, v: Any, where: str) -> list:
        if not isinstance(v, list):
            raise self.fail(where, f"must be a list, got {type(v).__name__}")
        return v

    def obj(self, v: Any, where: str) -> dict:
        if not isinstance(v, dict):
            raise self.fail(where, f"must be an object, got {type(v).__name__}")
        return v

    def need(self, o: dict, key: str, where: str) -> Any:
        if key not in o:
            raise self.fail(where, f"has no `{key}`")
        return o[key]


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_json(path: str, max_bytes: int | None = None) -> Any:
    """The parsed file; DataError if it is missing, too large, not JSON, or nested too deep."""
    max_bytes = MAX_JSON_BYTES if max_bytes is None else max_bytes
    try:
        data = read_regular_file(path, max_bytes)
    except NotRegularFile:
        raise DataError(f"readers.coco: the annotations file {path} is not a regular file") from None
    except FileTooLarge as e:
        raise DataError(f"readers.coco: {path} is {e.size} bytes, more than the {max_bytes} an annotation "
                        "file may have") from None
    except OSError as e:
        raise DataError(f"readers.coco: cannot read the annotations file {path}: {e.strerror or e}") from None
    try:
        return json.loads(data, parse_constant=_no_constants)
    except RecursionError:
        raise DataError(f"readers.coco: {path}: the JSON is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"readers.coco: {path} is not valid JSON: {e}") from None


def parse(path: str, opts: CocoOptions, max_bytes: int | None = None) -> list[CocoSample]:
    """The samples of an annotation file, in DALI's order, with their objects."""
    d = _Doc(path)
    root = d.obj(load_json(path, max_bytes), "(top level)")
    images = [d.obj(x, f"images[{k}]") for k, x in enumerate(d.list_(root.get("images", []), "images"))]
    infos = []
    for k, im in enumerate(images):
        w = f"images[{k}]"
        name = d.need(im, "file_name", w)
        if not isinstance(name, str):
            raise d.fail(f"{w}.file_name", f"must be a string, got {type(name).__name__}")
        infos.append((name, d.int_(d.need(im, "id", w), f"{w}.id"), d.int_(im.get("width", 0), f"{w}.width"),
                      d.int_(im.get("height", 0), f"{w}.height")))
    categories: dict[int, int] = {}
    for k, c in enumerate(d.list_(root.get("categories", []), "categories")):
        cid = d.int_(d.need(d.obj(c, f"categories[{k}]"), "id", f"categories[{k}]"), f"categories[{k}].id")
        categories.setdefault(cid, k + 1)
    if opts.images is None:
        order = [name for name, *_ in sorted(infos, key=lambda t: t[1])]
    else:
        order = list(opts.images)
    by_name = {name: (name, iid, w, h) for name, iid, w, h in infos}  # the last entry of a name wins
    wanted = {by_name[n][1] for n in order if n in by_name}
    anns: dict[int, list[tuple[int, dict]]] = {i: [] for i in wanted}
    for k, a in enumerate(d.list_(root.get("annotations", []), "annotations")):
        w = f"annotations[{k}]"
        a = d.obj(a, w)
        iid = d.int_(d.need(a, "image_id", w), f"{w}.image_id")
        if iid in anns:
            anns[iid].append((k, a))
    out = []
    for name in order:
        info = by_name.get(name)
        if info is None:
            continue
        s = _sample(d, info, anns[info[1]], categories, opts)
        if not opts.skip_empty or len(s.labels):
            out.append(s)
    return out


def _sample(d: _Doc, info: tuple[str, int, int, int], anns: list[tuple[int, dict]], categories: dict[int, int],
            opts: CocoOptions) -> CocoSample:
    name, iid, width, height = info
    if opts.ratio and (width <= 0 or height <= 0):
        raise d.fail(f"images (id {iid})", f"needs a positive width and height for ratio=True, got {width}x{height}")
    boxes, labels, polys, verts, rles = [], [], [], [], []
    for k, a in anns:
        w = f"annotations[{k}]"
        box = d.list_(d.need(a, "bbox", w), f"{w}.bbox")
        if len(box) != 4:
            raise d.fail(f"{w}.bbox", f"must hold 4 numbers [x, y, width, height], got {len(box)}")
        x, y, bw, bh = (d.num(v, f"{w}.bbox[{i}]") for i, v in enumerate(box))
        crowd = d.int_(a.get("iscrowd", 0), f"{w}.iscrowd")
        if (crowd and not opts.include_iscrowd) or not (bw >= opts.size_threshold and bh >= opts.size_threshold):
            continue
        cat = d.int_(d.need(a, "category_id", w), f"{w}.category_id")
        b = np.array([x, y, bw, bh], np.float32)
        if opts.ltrb:
            b[2:] += b[:2]
        if opts.ratio:
            b /= np.array([width, height, width, height], np.float32)
        obj = len(labels)
        boxes.append(b)
        labels.append(cat if opts.avoid_class_remapping else categories.get(cat, 0))
        if opts.polygons and "segmentation" in a:
            _segmentation(d, a["segmentation"], f"{w}.segmentation", obj, opts, (width, height), polys, verts, rles)
    v = np.concatenate(verts).reshape(-1, 2) if verts else np.zeros((0, 2), np.float32)
    return CocoSample(name, iid, width, height,
                      np.stack(boxes).astype(np.float32) if boxes else np.zeros((0, 4), np.float32),
                      np.array(labels, np.int32), np.array(polys, np.int32).reshape(-1, 3), v.astype(np.float32), rles)


def _segmentation(d: _Doc, seg: Any, w: str, obj: int, opts: CocoOptions, wh: tuple[int, int],
                  polys: list, verts: list, rles: list) -> None:
    if isinstance(seg, dict):
        if not opts.rles:
            return  # RLE masks are read only for pixelwise masks, as in DALI
        size = d.list_(d.need(seg, "size", w), f"{w}.size")
        if len(size) != 2:
            raise d.fail(f"{w}.size", f"must be [height, width], got {len(size)} values")
        h, ww = d.int_(size[0], f"{w}.size[0]"), d.int_(size[1], f"{w}.size[1]")
        if h <= 0 or ww <= 0:
            raise d.fail(f"{w}.size", f"must be positive, got {[h, ww]}")
        counts = d.need(seg, "counts", w)
        if isinstance(counts, list):
            counts = [d.int_(c, f"{w}.counts[{i}]") for i, c in enumerate(counts)]
            if any(c < 0 for c in counts):
                raise d.fail(f"{w}.counts", "must not be negative")
        elif not isinstance(counts, str):
            raise d.fail(f"{w}.counts", f"must be a string or a list of integers, got {type(counts).__name__}")
        if not counts:
            raise d.fail(f"{w}.counts", "is empty")
        rles.append((obj, h, ww, counts))
        return
    if not isinstance(seg, list):
        return  # DALI skips any other value
    start = sum(len(v) for v in verts)
    for i, poly in enumerate(seg):
        coords = [d.num(c, f"{w}[{i}][{j}]") for j, c in enumerate(d.list_(poly, f"{w}[{i}]"))]
        if len(coords) % 2:
            raise d.fail(f"{w}[{i}]", f"must hold x, y pairs, got {len(coords)} numbers")
        xy = np.array(coords, np.float32).reshape(-1, 2)
        if opts.ratio:
            xy /= np.array(wh, np.float32)
        polys.append((obj, start, start + len(xy)))
        start += len(xy)
        verts.append(xy)
