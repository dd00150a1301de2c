"""Inputs and cases shared by the detection table generator (DALI venv) and the tests.

NumPy, json and the package's sample photos only: nothing here imports torch_dali or DALI. The COCO
sample is a folder of the package's photos with an annotation file in pycocotools' format, written
by `write_coco_sample` the same way every time (ids out of order, non-contiguous category ids, a
crowd object with an RLE mask, a too-small box, an unknown category, an image without objects, an
annotation of an image not listed, polygon and multi-polygon segmentations).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

TABLES = "detection_tables.npz"  # beside this file
PHOTOS = Path(__file__).resolve().parents[2] / "torch_dali" / "data" / "photos"

# -- the COCO sample ---------------------------------------------------------------------------------

# (file, width, height, image id): ids out of file order; brick.jpg has no objects
COCO_IMAGES = [("coffee.jpg", 600, 400, 42), ("chelsea.jpg", 451, 300, 7), ("rocket.jpg", 640, 427, 19),
               ("astronaut.jpg", 512, 512, 3), ("brick.jpg", 512, 512, 100), ("camera.jpg", 512, 512, 55)]
COCO_CATEGORIES = [18, 1, 90, 3]  # in file order: labels 1..4 after DALI's remapping


def encode_rle_string(counts: list[int]) -> str:
    """pycocotools' compressed RLE string of run lengths (what its `encode` writes)."""
    out = []
    for i, x in enumerate(counts):
        if i > 2:
            x -= counts[i - 2]
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return "".join(out)


def _rect_rle(h: int, w: int, x0: int, y0: int, x1: int, y1: int) -> list[int]:
    """Run lengths (column-major) of the rectangle [x0, x1) x [y0, y1)."""
    m = np.zeros((h, w), bool)
    m[y0:y1, x0:x1] = True
    flat = m.T.reshape(-1)
    edges = np.flatnonzero(np.diff(flat.astype(np.int8))) + 1
    runs = np.diff(np.concatenate([[0], edges, [flat.size]])).tolist()
    return ([0] + runs) if flat[0] else runs


def coco_annotations() -> dict[str, Any]:
    anns: list[dict[str, Any]] = []

    def add(image_id: int, cat: int, bbox: list[float], seg: Any = None, crowd: int = 0) -> None:
        a = {"id": len(anns) + 1, "image_id": image_id, "category_id": cat, "bbox": bbox, "iscrowd": crowd,
             "area": bbox[2] * bbox[3]}
        if seg is not None:
            a["segmentation"] = seg
        anns.append(a)

    add(42, 18, [100.5, 80.25, 200.0, 150.0], [[100.5, 80.25, 300.5, 80.25, 300.5, 230.25, 100.5, 230.25]])
    add(42, 3, [320.0, 200.0, 150.0, 120.0], [[320, 200, 470, 210, 400, 320]])
    add(42, 90, [10.0, 10.0, 0.05, 30.0], [[10, 10, 10.05, 10, 10.05, 40]])  # below size_threshold
    add(7, 1, [50.0, 40.0, 120.0, 100.0], [[50, 40, 170, 40, 170, 140], [60, 120, 100, 130, 80, 139]])
    add(7, 3, [200.0, 100.0, 180.0, 150.0],
        {"size": [300, 451], "counts": _rect_rle(300, 451, 200, 100, 380, 250)}, crowd=1)
    add(999, 18, [1.0, 1.0, 5.0, 5.0], [[1, 1, 6, 1, 6, 6]])  # an image the file does not list
    add(19, 90, [300.0, 50.0, 100.0, 300.0], [[300, 50, 400, 50, 350, 350]])
    add(19, 77, [20.0, 300.0, 60.0, 60.0], [[20, 300, 80, 300, 80, 360, 20, 360]])  # unknown category
    add(3, 18, [0.0, 0.0, 512.0, 512.0], [[0, 0, 512, 0, 512, 512, 0, 512]])
    add(3, 1, [150.0, 150.0, 200.0, 200.0], [[150, 150, 350, 150, 350, 350, 150, 350]])
    add(55, 3, [64.0, 64.0, 256.0, 128.0],
        {"size": [512, 512], "counts": encode_rle_string(_rect_rle(512, 512, 64, 64, 320, 192))}, crowd=1)
    add(55, 90, [300.0, 250.0, 150.0, 200.0], [[300, 250, 450, 250, 450, 450, 300, 450]])
    add(55, 1, [30.5, 300.0, 0.5, 0.5])  # no segmentation; 0.5 px survives size_threshold=0.1
    images = [{"id": i, "file_name": f, "width": w, "height": h} for f, w, h, i in COCO_IMAGES]
    cats = [{"id": c, "name": f"class{c}", "supercategory": "thing"} for c in COCO_CATEGORIES]
    return {"info": {"description": "torch_dali detection test sample"}, "images": images,
            "annotations": anns, "categories": cats}


def write_coco_sample(root: Path) -> tuple[Path, Path]:
    """(image folder, annotation file) of the COCO sample under `root`."""
    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    for f, *_ in COCO_IMAGES:
        shutil.copyfile(PHOTOS / f, images / f)
    ann = root / "instances.json"
    ann.write_text(json.dumps(coco_annotations(), indent=1, sort_keys=True))
    return images, ann


#: readers.coco argument sets compared with DALI (name -> arguments; the outputs follow from them)
COCO_CASES: dict[str, dict[str, Any]] = {
    "default": dict(image_ids=True),
    "ltrb_ratio": dict(ltrb=True, ratio=True, image_ids=True),
    "skip_empty_nocrowd": dict(skip_empty=True, include_iscrowd=False, image_ids=True),
    "threshold_raw_ids": dict(size_threshold=1.0, avoid_class_remapping=True, image_ids=True),
    "polygons": dict(polygon_masks=True, image_ids=True),
    "polygons_ratio": dict(polygon_masks=True, ratio=True, ltrb=True),
    "legacy_masks": dict(masks=True),
    "pixelwise": dict(pixelwise_masks=True, image_ids=True),
    "images_arg": dict(images=["rocket.jpg", "coffee.jpg", "rocket.jpg", "nope.jpg"], image_ids=True),
}

#: readers.coco argument sets whose preprocessed-annotation folders DALI wrote
#: (tests/reference/coco_preprocessed/, coco_preprocessed_make.py)
PRE_CASES: dict[str, dict[str, Any]] = {
    "default": dict(image_ids=True),
    "plain_skip_empty": dict(skip_empty=True),
    "polygons_ltrb_ratio": dict(polygon_masks=True, image_ids=True, ltrb=True, ratio=True),
    "pixelwise": dict(pixelwise_masks=True, image_ids=True),
    "images_arg": dict(images=["rocket.jpg", "coffee.jpg", "rocket.jpg"], polygon_masks=True),
}

# -- box ops -----------------------------------------------------------------------------------------

def boxes(n: int, seed: int, ltrb: bool = True) -> np.ndarray:
    """n random float32 boxes inside [0, 1] (ltrb, or xywh)."""
    rng = np.random.default_rng(seed)
    a = rng.random((n, 2)) * 0.8
    e = rng.random((n, 2)) * (1.0 - a) * 0.9 + 0.01
    b = np.concatenate([a, a + e if ltrb else e], 1)
    return b.astype(np.float32)


BOX_SAMPLES = [boxes(5, 1), boxes(1, 2), boxes(0, 3), boxes(9, 4)]
XYWH_SAMPLES = [boxes(5, 5, ltrb=False), boxes(3, 6, ltrb=False)]
FLIP_CASES = [dict(ltrb=True, horizontal=1, vertical=0), dict(ltrb=True, horizontal=0, vertical=1),
              dict(ltrb=True, horizontal=1, vertical=1), dict(ltrb=False, horizontal=1, vertical=1),
              dict(ltrb=False, horizontal=0, vertical=1), dict(ltrb=True, horizontal=0, vertical=0)]
PASTE_CASES = [dict(ltrb=True, ratio=2.0), dict(ltrb=False, ratio=3.0, paste_x=0.0, paste_y=1.0),
               dict(ltrb=True, ratio=1.5, paste_x=0.25, paste_y=0.75), dict(ltrb=True, ratio=1.0),
               dict(ltrb=False, ratio=7.3, paste_x=1.0, paste_y=1.0)]


def anchors(grid: int = 4, scales: tuple[float, ...] = (0.2, 0.45)) -> list[float]:
    """ltrb anchors: squares and 2:1 / 1:2 boxes on a grid x grid of centres (clipped to [0, 1])."""
    out = []
    for i in range(grid):
        for j in range(grid):
            cx, cy = (j + 0.5) / grid, (i + 0.5) / grid
            for s in scales:
                for rw, rh in ((1.0, 1.0), (1.41421356, 0.70710678), (0.70710678, 1.41421356)):
                    w, h = s * rw, s * rh
                    out += [max(cx - w / 2, 0.0), max(cy - h / 2, 0.0), min(cx + w / 2, 1.0), min(cy + h / 2, 1.0)]
    return out


ENCODER_LABELS = [np.arange(1, len(b) + 1, dtype=np.int32) * 3 for b in BOX_SAMPLES]
ENCODER_CASES = [dict(criteria=0.5), dict(criteria=0.2), dict(criteria=0.5, offset=True),
                 dict(criteria=0.4, offset=True, scale=300.0, means=[0.1, -0.2, 0.3, 0.0], stds=[0.1, 0.1, 0.2, 0.2])]

# -- random crops: statistics of the windows for a seed ------------------------------------------------

CROP_DRAWS = 1200  # windows per case (batches of 200)
CROP_BOXES = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.45, 0.9, 0.8], [0.3, 0.6, 0.45, 0.95]], np.float32)
CROP_CASES: dict[str, dict[str, Any]] = {
    "default": dict(),
    "scaling": dict(scaling=[0.3, 1.0]),
    "ssd": dict(scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5],
                all_boxes_above_threshold=False, num_attempts=5),
    "no_nocrop": dict(scaling=[0.3, 1.0], allow_no_crop=False),
    "any_box": dict(scaling=[0.2, 0.6], aspect_ratio=[0.5, 2.0], thresholds=[0.2], allow_no_crop=False,
                    all_boxes_above_threshold=False, num_attempts=10),
    "prune": dict(scaling=[0.4, 0.7], aspect_ratio=[0.75, 1.33], allow_no_crop=False, bbox_prune_threshold=0.3),
    "fixed": dict(crop_shape=[60, 40], input_shape=[100, 80]),
    "input_shape": dict(scaling=[0.4, 1.0], input_shape=[160, 100], allow_no_crop=False),
}
