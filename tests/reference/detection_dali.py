"""Runs the detection cases through NVIDIA DALI's CPU backend (needs `nvidia.dali`; never torch_dali).

Used by make_detection_tables.py to write the stored tables and by the tests' live comparisons.
"""
from __future__ import annotations

import tempfile
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
from nvidia.dali import fn, pipeline_def

from . import detection_cases as C


def _const(samples: list[np.ndarray]) -> Callable[[], list[np.ndarray]]:
    return lambda: list(samples)  # no parameters: DALI passes call info to a source that takes one


def _run(graph: Callable[..., Any], inputs: list[list[np.ndarray]], batch: int, seed: int = 1234,
         iterations: int = 1) -> list[list[np.ndarray]]:
    """Outputs (a list of samples per output) of graph(*external sources) on a CPU pipeline."""
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=seed)
    def pipe():
        srcs = [fn.external_source(source=_const(s), batch=True) for s in inputs]
        outs = graph(*srcs)
        return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)

    p = pipe()
    p.build()
    got: list[list[np.ndarray]] = []
    for _ in range(iterations):
        res = p.run()
        got = got or [[] for _ in res]
        for k, tl in enumerate(res):
            got[k].extend(np.array(tl.at(i)) for i in range(len(tl)))
    return got


def coco(case: str, root: Path | None = None) -> list[dict[str, np.ndarray]]:
    """Every sample of one epoch of readers.coco on the COCO sample, in order: its outputs by name
    (the image as its length and CRC-32)."""
    with tempfile.TemporaryDirectory() as tmp:
        images, ann = C.write_coco_sample(Path(tmp) if root is None else root)
        kw = dict(C.COCO_CASES[case])
        names = ["image", "boxes", "labels"]
        if kw.get("polygon_masks") or kw.get("masks"):
            names += ["polygons", "vertices"]
        if kw.get("pixelwise_masks"):
            names.append("mask")
        if kw.get("image_ids"):
            names.append("image_id")

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            return tuple(fn.readers.coco(file_root=str(images), annotations_file=str(ann), name="Reader", **kw))

        p = pipe()
        p.build()
        n = p.epoch_size("Reader")
        out = []
        for _ in range(n):
            res = p.run()
            s = {name: np.array(res[k].at(0)) for k, name in enumerate(names)}
            img = s.pop("image")
            s["image"] = np.array([img.size, zlib.crc32(img.tobytes())], np.int64)
            out.append(s)
        return out


def bb_flip(args: dict[str, Any], samples: list[np.ndarray]) -> list[np.ndarray]:
    return _run(lambda b: fn.bb_flip(b, **args), [samples], len(samples))[0]


def bbox_paste(args: dict[str, Any], samples: list[np.ndarray]) -> list[np.ndarray]:
    return _run(lambda b: fn.bbox_paste(b, **args), [samples], len(samples))[0]


def box_encoder(args: dict[str, Any]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    enc, lab = _run(lambda b, lab: tuple(fn.box_encoder(b, lab, anchors=C.anchors(), **args)),
                    [C.BOX_SAMPLES, C.ENCODER_LABELS], len(C.BOX_SAMPLES))
    return enc, lab


def crop_windows(case: str, seed: int = 4321, per_batch: int = 200) -> np.ndarray:
    """(draws, 5) rows of anchor x, y, shape w, h and the number of boxes kept, for C.CROP_DRAWS windows."""
    kw = C.CROP_CASES[case]
    outs = _run(lambda b: tuple(fn.random_bbox_crop(b, **kw)), [[C.CROP_BOXES] * per_batch], per_batch, seed=seed,
                iterations=C.CROP_DRAWS // per_batch)
    return np.array([[*a, *s, len(b)] for a, s, b in zip(outs[0], outs[1], outs[2])], np.float64)


def ssd_crop_windows(seed: int = 4321, per_batch: int = 200) -> np.ndarray:
    """(draws, 3) rows of the cropped image's height and width and the number of boxes kept."""
    img = np.zeros((100, 160, 3), np.uint8)
    labels = np.arange(len(C.CROP_BOXES), dtype=np.int32)
    outs = _run(lambda i, b, lab: tuple(fn.ssd_random_crop(i, b, lab)),
                [[img] * per_batch, [C.CROP_BOXES] * per_batch, [labels] * per_batch], per_batch, seed=seed,
                iterations=C.CROP_DRAWS // per_batch)
    return np.array([[o.shape[0], o.shape[1], len(b)] for o, b in zip(outs[0], outs[1])], np.float64)


def ssd_boxes(root: Path | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The deterministic part of examples/ssd_pipeline.py in DALI: COCO boxes (ltrb, ratio), flipped
    horizontally, encoded on the small anchor set: (encoded boxes, labels) per sample of one epoch."""
    with tempfile.TemporaryDirectory() as tmp:
        images, ann = C.write_coco_sample(Path(tmp) if root is None else root)

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            _, b, lab = fn.readers.coco(file_root=str(images), annotations_file=str(ann), ltrb=True, ratio=True,
                                        skip_empty=True, name="Reader")
            b = fn.bb_flip(b, ltrb=True, horizontal=1)
            return tuple(fn.box_encoder(b, lab, anchors=C.anchors(), criteria=0.5, offset=True, scale=1.0,
                                        stds=[0.1, 0.1, 0.2, 0.2]))

        p = pipe()
        p.build()
        out = []
        for _ in range(p.epoch_size("Reader")):
            e, lab = p.run()
            out.append((np.array(e.at(0)), np.array(lab.at(0))))
        return out
