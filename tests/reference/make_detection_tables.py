"""Regenerates tests/reference/detection_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.make_detection_tables     # from the repository root

Every DALI expectation in tests/test_ref_detection.py comes from this file's output. Needs a Python
with `nvidia.dali` (and NumPy); never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import detection_cases as C
from . import table_file
from . import detection_dali as D


def build() -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    for case in C.COCO_CASES:
        rows = D.coco(case)
        t[f"coco/{case}/n"] = np.array(len(rows))
        for i, row in enumerate(rows):
            for name, v in row.items():
                t[f"coco/{case}/{i}/{name}"] = v
    for i, args in enumerate(C.FLIP_CASES):
        samples = C.BOX_SAMPLES if args["ltrb"] else C.XYWH_SAMPLES
        for k, v in enumerate(D.bb_flip(args, samples)):
            t[f"bb_flip/{i}/{k}"] = v
    for i, args in enumerate(C.PASTE_CASES):
        samples = C.BOX_SAMPLES if args["ltrb"] else C.XYWH_SAMPLES
        for k, v in enumerate(D.bbox_paste(args, samples)):
            t[f"bbox_paste/{i}/{k}"] = v
    for i, args in enumerate(C.ENCODER_CASES):
        enc, lab = D.box_encoder(args)
        for k, (e, la) in enumerate(zip(enc, lab)):
            t[f"box_encoder/{i}/{k}/boxes"] = e
            t[f"box_encoder/{i}/{k}/labels"] = la
    for case in C.CROP_CASES:
        t[f"crop/{case}"] = D.crop_windows(case)
    t["ssd_crop"] = D.ssd_crop_windows()
    for k, (e, la) in enumerate(D.ssd_boxes()):
        t[f"ssd_example/{k}/boxes"] = e
        t[f"ssd_example/{k}/labels"] = la
    return t


def main() -> None:
    out = Path(__file__).with_name(C.TABLES)
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.make_detection_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
