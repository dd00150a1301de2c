"""COCO-style sets: db/coco (64 images), db/coco_pixelwise (a subset of db/coco's images with polygon
and RLE segmentations), db/coco_dummy (images without annotations, annotations without segmentation,
and a TFRecord of the same samples)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import records, synth

# test_coco.py names these images and expects these ids and (unmapped) category ids; each has one
# annotation. Categories are ids 0..19 in order, so remapped labels are the id + 1.
NAMED = {17: ("car-race-438467_1280.jpg", 5), 6: ("clock-1274699_1280.jpg", 7),
         21: ("kite-1159538_1280.jpg", 12), 59: ("cow-234835_1280.jpg", 8),
         39: ("home-office-336378_1280.jpg", 13), 0: ("suit-2619784_1280.jpg", 16),
         5: ("business-suit-690048_1280.jpg", 16), 41: ("car-604019_1280.jpg", 5)}
CATEGORIES = 20
COCO_IMAGES = 64
CROWD_IMAGES = (3, 10, 33)  # one annotation of each is iscrowd=1


def _box(rng: np.random.Generator, w: int, h: int) -> list[int]:
    bw, bh = int(rng.integers(8, w // 2)), int(rng.integers(8, h // 2))
    return [int(rng.integers(0, w - bw)), int(rng.integers(0, h - bh)), bw, bh]


def _polygon(box: list[int]) -> list[int]:
    """A diamond inside the box (non-degenerate, so pixelwise masks are not empty); whole-pixel
    vertices, so relative coordinates (`ratio=True`) scale back to the same mask."""
    x, y, w, h = box
    return [x + w // 2, y + 1, x + w - 1, y + h // 2, x + w // 2, y + h - 1, x + 1, y + h // 2]


def _rle(box: list[int], w: int, h: int) -> dict:
    """The box as uncompressed column-major RLE counts (COCO's format)."""
    m = np.zeros((h, w), np.uint8)
    x, y, bw, bh = box
    m[y:y + bh, x:x + bw] = 1
    flat = m.T.reshape(-1)
    counts, cur, run = [], 0, 0
    for v in flat:
        if v != cur:
            counts.append(run)
            cur, run = v, 0
        run += 1
    counts.append(run)
    return {"size": [h, w], "counts": counts}


def _write(folder: Path, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "instances.json").write_text(json.dumps(doc, indent=1))


def _doc(images: list[dict], annotations: list[dict]) -> dict:
    return {"info": {"description": "synthetic stand-in"}, "licenses": [],
            "images": images, "annotations": annotations,
            "categories": [{"id": i, "name": f"c{i}", "supercategory": "s"} for i in range(CATEGORIES)]}


def make_coco(root: Path) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(101)
    folder = root / "db" / "coco"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    images, annotations = [], []
    for i in range(COCO_IMAGES):
        w, h = int(rng.integers(96, 200)), int(rng.integers(96, 200))
        name, cat = NAMED.get(i, (f"{i}.jpeg", None))
        (folder / "images" / name).write_bytes(synth.jpeg(rng, w, h))
        images.append({"file_name": name, "width": w, "height": h, "id": i, "license": 1})
        n = 1 if cat is not None else int(rng.integers(1, 4))
        for k in range(n):
            box = _box(rng, w, h)
            annotations.append({"id": len(annotations), "image_id": i, "bbox": box, "area": box[2] * box[3],
                                "category_id": cat if cat is not None else int(rng.integers(0, CATEGORIES)),
                                "iscrowd": int(i in CROWD_IMAGES and k == 0),
                                "segmentation": [_polygon(box)]})
    _write(folder, _doc(images, annotations))
    (folder / "file_list.txt").write_text("".join(f"{im['file_name']} {im['id']}\n" for im in images))
    return images, annotations


def make_pixelwise(root: Path, images: list[dict], annotations: list[dict]) -> None:
    """Every fourth image of db/coco (the same file names and bytes), polygons and RLE counts."""
    folder = root / "db" / "coco_pixelwise"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    chosen = [im for im in images if im["id"] % 4 == 1]
    ids = {im["id"] for im in chosen}
    src = root / "db" / "coco" / "images"
    for im in chosen:
        (folder / "images" / im["file_name"]).write_bytes((src / im["file_name"]).read_bytes())
    anns = [a for a in annotations if a["image_id"] in ids]
    _write(folder, _doc(chosen, anns))
    size = {im["id"]: (im["width"], im["height"]) for im in chosen}
    rle = [dict(a, segmentation=_rle(a["bbox"], *size[a["image_id"]])) for a in anns]
    (folder / "instances_rle_counts.json").write_text(json.dumps(_doc(chosen, rle), indent=1))


def make_dummy(root: Path) -> None:
    """36 images: every sixth has no annotation, every fifth's annotations have no segmentation."""
    rng = np.random.default_rng(202)
    folder = root / "db" / "coco_dummy"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    images, annotations, examples = [], [], []
    for i in range(36):
        w, h = int(rng.integers(64, 160)), int(rng.integers(64, 160))
        name = f"{i}.jpeg"
        data = synth.jpeg(rng, w, h)
        (folder / "images" / name).write_bytes(data)
        images.append({"file_name": name, "width": w, "height": h, "id": i})
        boxes, labels = [], []
        for _ in range(0 if i % 6 == 5 else int(rng.integers(1, 4))):
            box = _box(rng, w, h)
            ann = {"id": len(annotations), "image_id": i, "bbox": box, "area": box[2] * box[3],
                   "category_id": int(rng.integers(1, CATEGORIES)), "iscrowd": 0}
            if i % 5 != 4:
                ann["segmentation"] = [_polygon(box)]
            annotations.append(ann)
            boxes += [box[0] / w, box[1] / h, (box[0] + box[2]) / w, (box[1] + box[3]) / h]
            labels.append(ann["category_id"])
        if not labels:  # the TFRecord's samples all hold a box (test_index reads 4 floats at least)
            boxes, labels = [0.1, 0.1, 0.5, 0.5], [1]
        examples.append({"image/encoded": [data], "image/height": [h], "image/width": [w],
                         "image/filename": [name.encode()], "image/object/bbox": boxes,
                         "image/object/class/label": labels})
    _write(folder, _doc(images, annotations))
    (folder / "file_list.txt").write_text("".join(f"{im['file_name']} {im['id']}\n" for im in images))
    records.write_tfrecord(folder / "small_coco.tfrecord", folder / "small_coco_index.idx", examples)


def make(root: Path) -> None:
    images, annotations = make_coco(root)
    make_pixelwise(root, images, annotations)
    make_dummy(root)
