"""bbox_rotate cases, shared by the test (tests/test_ops_bbox_rotate.py) and the table generator.

`/work/dali-venv/bin/python -m tests.reference.bbox_rotate_ref` runs each case through DALI 2.4's
CPU backend once and writes bbox_rotate_tables.npz beside this file: per case and sample the boxes
(and labels) out, or the error text for the cases DALI refuses. NumPy only at import.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

TABLES = Path(__file__).with_name("bbox_rotate_tables.npz")

_rng = np.random.default_rng(7)


def _boxes(n: int, ltrb: bool, scale: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    xy = _rng.uniform(-0.1, 0.9, (n, 2))
    wh = _rng.uniform(0.02, 0.5, (n, 2))
    b = np.concatenate([xy, xy + wh if ltrb else wh], 1) * np.array(scale * 2)
    return b.astype(np.float32)


# each sample of a case: boxes, and labels as (N,) or (N, 1) int32
LTRB = [_boxes(5, True), _boxes(1, True), np.zeros((0, 4), np.float32),
        np.array([[0.0, 0.0, 1.0, 1.0], [0.4, 0.45, 0.6, 0.5], [0.9, 0.9, 1.0, 1.0]], np.float32)]
XYWH_PX = [_boxes(4, False, (200.0, 100.0)), _boxes(3, False, (200.0, 100.0))]
LABELS_1D = [np.arange(len(b), dtype=np.int32) + 10 * i for i, b in enumerate(LTRB)]
LABELS_2D = [np.arange(len(b), dtype=np.int32).reshape(-1, 1) + 7 for b in XYWH_PX]

# name -> (boxes, labels or None, constant args, per-sample angles or None, per-sample input_shape or None)
CASES: dict[str, tuple[list[np.ndarray], list[np.ndarray] | None, dict[str, Any], list[float] | None,
                       list[list[int]] | None]] = {
    "expand_30": (LTRB, LABELS_1D, {"angle": 30.0, "input_shape": [100, 200, 3]}, None, None),
    "expand_odd": (LTRB, None, {"angle": -73.5, "input_shape": [91, 47]}, None, None),
    "fixed_90_px_xywh": (XYWH_PX, LABELS_2D, {"angle": 90.0, "input_shape": [100, 200], "mode": "fixed",
                                              "bbox_layout": "xyWH", "bbox_normalized": False}, None, None),
    "halfway_keep": (LTRB, LABELS_1D, {"angle": 45.0, "input_shape": [120, 160], "mode": "halfway",
                                       "keep_size": True, "remove_threshold": 0.6}, None, None),
    "fixed_keep_135": (LTRB, LABELS_1D, {"angle": 135.0, "input_shape": [64, 64], "mode": "fixed",
                                         "keep_size": True}, None, None),
    "size_canvas": (LTRB, LABELS_1D, {"angle": -20.0, "input_shape": [100, 200], "size": [150.7, 230.2]},
                    None, None),
    "threshold_0": (LTRB, LABELS_1D, {"angle": 60.0, "input_shape": [50, 80], "keep_size": True,
                                      "remove_threshold": 0.0}, None, None),
    "threshold_1": (LTRB, LABELS_1D, {"angle": 10.0, "input_shape": [50, 80], "keep_size": True,
                                      "remove_threshold": 0.999}, None, None),
    "shape_layout_wh": (XYWH_PX, None, {"angle": 15.0, "input_shape": [200, 100], "shape_layout": "WH",
                                        "bbox_layout": "xyWH", "bbox_normalized": False}, None, None),
    "per_sample": (LTRB, LABELS_1D, {"keep_size": False}, [0.0, 33.0, 200.0, -90.0],
                   [[100, 200, 3], [31, 40, 3], [64, 64, 1], [10, 300, 3]]),
}

# name -> (boxes, labels, args): DALI refuses these (a RuntimeError, at build or run)
ERRORS: dict[str, tuple[list[np.ndarray], list[np.ndarray] | None, dict[str, Any]]] = {
    "keep_size_and_size": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "keep_size": True,
                                            "size": [20, 20]}),
    "bad_mode": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "mode": "shrink"}),
    "bad_bbox_layout": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "bbox_layout": "xyxy"}),
    "bad_shape_layout": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "shape_layout": "HC"}),
    "short_input_shape": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10], "shape_layout": "CHW"}),
    "threshold_range": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "remove_threshold": 1.5}),
    "threshold_1": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "remove_threshold": 1.0}),
    "threshold_negative": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "remove_threshold": -0.1}),
    "float64_boxes": ([LTRB[0].astype(np.float64)], None, {"angle": 5.0, "input_shape": [10, 10]}),
    "boxes_n3": ([LTRB[0][:, :3].copy()], None, {"angle": 5.0, "input_shape": [10, 10]}),
    "int64_labels": (LTRB[:1], [LABELS_1D[0].astype(np.int64)], {"angle": 5.0, "input_shape": [10, 10]}),
    "label_count": (LTRB[:1], [LABELS_1D[0][:2]], {"angle": 5.0, "input_shape": [10, 10]}),
    "size_3": (LTRB[:1], None, {"angle": 5.0, "input_shape": [10, 10], "size": [1, 2, 3]}),
}


def build(lib: Any, boxes: list[np.ndarray], labels: list[np.ndarray] | None, args: dict[str, Any],
          angles: list[float] | None, shapes: list[list[int]] | None, device: str = "cpu") -> Any:
    """A case's built pipeline on `lib` (nvidia.dali here, torch_dali in the test): the same graph
    for both; on device "gpu" the boxes and labels are moved to the GPU first."""
    fn, pipeline_def = lib.fn, lib.pipeline_def

    @pipeline_def(batch_size=len(boxes), num_threads=1, device_id=None if device == "cpu" else 0)
    def pipe():
        ins = [fn.external_source(source=lambda: boxes, batch=True)]
        if labels is not None:
            ins.append(fn.external_source(source=lambda: labels, batch=True))
        if device == "gpu":
            ins = [x.gpu() for x in ins]
        kw = dict(args)
        if angles is not None:
            kw["angle"] = fn.external_source(source=lambda: [np.float32(a) for a in angles], batch=True)
        if shapes is not None:
            kw["input_shape"] = fn.external_source(source=lambda: [np.array(s, np.int64) for s in shapes],
                                                   batch=True)
        out = fn.bbox_rotate(*ins, **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    p.build()
    return p


def _dali_run(boxes: list[np.ndarray], labels: list[np.ndarray] | None, args: dict[str, Any],
              angles: list[float] | None, shapes: list[list[int]] | None) -> list[list[np.ndarray]]:
    import nvidia.dali as dali

    p = build(dali, boxes, labels, args, angles, shapes)
    return [[np.array(t[i]) for i in range(len(boxes))] for t in p.run()]


def main() -> None:
    from .table_file import dali_error, save
    tables: dict[str, np.ndarray] = {}
    for name, (boxes, labels, args, angles, shapes) in CASES.items():
        for k, out in enumerate(_dali_run(boxes, labels, args, angles, shapes)):
            for i, t in enumerate(out):
                tables[f"{name}/{k}/{i}"] = t
    for name, (boxes, labels, args) in ERRORS.items():
        try:
            _dali_run(boxes, labels, args, None, None)
            msg = "no error"
        except RuntimeError as e:
            msg = dali_error(e)
        tables[f"error/{name}"] = np.frombuffer(msg.encode(), np.uint8)
    save(TABLES, tables, "tests.reference.bbox_rotate_ref")
    for k, v in tables.items():
        if k.startswith("error/"):
            print(k, bytes(v).decode())


if __name__ == "__main__":
    main()
