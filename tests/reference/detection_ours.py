"""torch_dali's side of the detection reference cases (the same calls as detection_dali.py)."""
from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from torch_dali import fn, pipeline_def

from . import detection_cases as C


def _const(samples: list[np.ndarray]) -> Callable[[], list[torch.Tensor]]:
    return lambda: [torch.from_numpy(np.ascontiguousarray(s)) for s in samples]


def run(graph: Callable[..., Any], inputs: list[list[np.ndarray]], batch: int, seed: int = 1234,
        iterations: int = 1, num_threads: int = 1) -> list[list[np.ndarray]]:
    @pipeline_def(batch_size=batch, num_threads=num_threads, device_id=None, seed=seed)
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


def coco(case: str, root: Path) -> list[dict[str, np.ndarray]]:
    images, ann = C.write_coco_sample(root)
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
    out = []
    for _ in range(p.epoch_size("Reader")):
        res = p.run()
        s = {name: np.array(res[k].at(0)) for k, name in enumerate(names)}
        img = s.pop("image")
        s["image"] = np.array([img.size, zlib.crc32(img.tobytes())], np.int64)
        out.append(s)
    return out


def crop_windows(case: str, seed: int = 4321, per_batch: int = 200) -> np.ndarray:
    kw = C.CROP_CASES[case]
    outs = run(lambda b: tuple(fn.random_bbox_crop(b, **kw)), [[C.CROP_BOXES] * per_batch], per_batch, seed=seed,
               iterations=C.CROP_DRAWS // per_batch)
    return np.array([[*a, *s, len(b)] for a, s, b in zip(outs[0], outs[1], outs[2])], np.float64)


def ssd_crop_windows(seed: int = 4321, per_batch: int = 200) -> np.ndarray:
    img = np.zeros((100, 160, 3), np.uint8)
    labels = np.arange(len(C.CROP_BOXES), dtype=np.int32)

    def graph(i: Any, b: Any, lab: Any) -> Any:
        return tuple(fn.ssd_random_crop(i, b, lab))

    @pipeline_def(batch_size=per_batch, num_threads=1, device_id=None, seed=seed)
    def pipe():
        i = fn.external_source(source=_const([img] * per_batch), batch=True, layout="HWC")
        b = fn.external_source(source=_const([C.CROP_BOXES] * per_batch), batch=True)
        lab = fn.external_source(source=_const([labels] * per_batch), batch=True)
        return graph(i, b, lab)

    p = pipe()
    p.build()
    rows = []
    for _ in range(C.CROP_DRAWS // per_batch):
        o, b, _ = p.run()
        rows += [[o.at(k).shape[0], o.at(k).shape[1], len(b.at(k))] for k in range(per_batch)]
    return np.array(rows, np.float64)
