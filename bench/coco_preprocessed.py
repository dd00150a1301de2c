"""readers.coco start-up: parsing a COCO-sized annotation file against reading the preprocessed
folder a save made of it (DALI's layout). A synthetic file with COCO train2017's counts by default
(118,287 images, 7.3 objects each, polygons of 12 vertices); each step timed in this process.
    python bench/coco_preprocessed.py [--images N] [--out bench/results/coco_preprocessed.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(path: str, images: int, seed: int = 1) -> None:
    rnd = random.Random(seed)
    imgs = [{"id": i + 1, "file_name": f"{i + 1:012d}.jpg", "width": 640, "height": 480} for i in range(images)]
    anns = []
    for im in imgs:
        for _ in range(rnd.choice((1, 3, 5, 7, 9, 11, 15))):
            x, y, w, h = rnd.uniform(0, 500), rnd.uniform(0, 380), rnd.uniform(2, 140), rnd.uniform(2, 100)
            poly = [round(v, 2) for k in range(12) for v in (x + w * rnd.random(), y + h * rnd.random())]
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": rnd.randint(1, 90),
                         "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)], "iscrowd": 0,
                         "area": w * h, "segmentation": [poly]})
    cats = [{"id": c, "name": f"c{c}", "supercategory": "s"} for c in range(1, 91)]
    with open(path, "w") as f:
        json.dump({"images": imgs, "annotations": anns, "categories": cats}, f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=118287)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    from torch_dali.io import coco, coco_preprocessed
    with tempfile.TemporaryDirectory() as d:
        ann = os.path.join(d, "instances.json")
        make(ann, a.images)
        opts = coco.CocoOptions(polygons=True)
        t = time.perf_counter()
        samples = coco.parse(ann, opts)
        parse_s = time.perf_counter() - t
        t = time.perf_counter()
        coco_preprocessed.save(samples, os.path.join(d, "pre"), True, False, True)
        save_s = time.perf_counter() - t
        t = time.perf_counter()
        loaded = coco_preprocessed.load(os.path.join(d, "pre"), True, False, True)
        load_s = time.perf_counter() - t
        assert len(loaded) == len(samples)
        rec = {"what": "coco_preprocessed", "images": a.images, "objects": int(sum(len(s.labels) for s in samples)),
               "json_mb": round(os.path.getsize(ann) / 2**20, 1),
               "folder_mb": round(sum(os.path.getsize(os.path.join(d, "pre", f)) for f in os.listdir(os.path.join(d, "pre"))) / 2**20, 1),
               "parse_json_s": round(parse_s, 2), "save_s": round(save_s, 2), "load_folder_s": round(load_s, 2),
               "speedup": round(parse_s / load_s, 1), "machine": f"{platform.node()} ({os.cpu_count()} cores)",
               "command": "python bench/coco_preprocessed.py " + " ".join(sys.argv[1:])}
    print(json.dumps(rec))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
