"""Fuzz targets for the detection ops' C helpers (registered in tests/_fuzz.py's TARGETS): random_bbox_crop's
window search (bbox_crop.c) against its spec, functional.bbox_crop.find_crops, and box_encoder
(box_encoder.c) against functional.detection.box_encoder_batch, at edge arguments."""
from __future__ import annotations

import random

import numpy as np
import torch

from torch_dali._native import helpers
from torch_dali.functional import bbox_crop as BC
from torch_dali.functional import detection as K
from torch_dali.ops.fast import cpu_bbox, cpu_boxes


class Fail(AssertionError):
    """An oracle violation (the input is reported)."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Fail(what)


def target_bbox_crop(data: bytes, rnd: random.Random) -> None:
    """bbox_crop.c == functional.bbox_crop.find_crops bit for bit, at edge arguments: empty and
    degenerate boxes, zero scaling, fixed and extreme aspect ratios, windows larger than the image."""
    if helpers.BBOX_CROP.load() is None:
        return
    nd, n = rnd.choice([2, 3]), rnd.randint(1, 4)
    offsets = [0]
    for _ in range(n):
        offsets.append(offsets[-1] + rnd.choice([0, 1, 2, rnd.randint(0, 30)]))
    edge = lambda: rnd.choice([0.0, 1.0, 0.5, rnd.random()])  # noqa: E731
    lo = np.array([[edge() for _ in range(nd)] for _ in range(offsets[-1])]).reshape(-1, nd)
    hi = np.minimum(lo + np.array([[rnd.choice([0.0, rnd.random()]) for _ in range(nd)]
                                   for _ in range(offsets[-1])]).reshape(-1, nd), 1.0)
    lo, hi = lo.astype(np.float32).astype(np.float64), hi.astype(np.float32).astype(np.float64)
    pair = lambda: rnd.choice([(1.0, 1.0), (0.5, 2.0), (a := rnd.uniform(0.01, 100), a), (1e-3, 1e3)])  # noqa: E731
    s0 = rnd.choice([0.0, 0.3, rnd.random()])
    no_crop = rnd.random() < 0.7
    total = rnd.choice([-1, 1, 5, 40]) if no_crop else rnd.randint(1, 40)  # the spec's endless searches are slow
    p = BC.CropParams(ndim=nd, thresholds=tuple(rnd.choice([0.0, 0.5, 1.0, rnd.random()]) for _ in range(rnd.randint(1, 3))),
                      overlap=rnd.random() < 0.5, aspect=tuple(pair() for _ in range(rnd.choice([1, 3]) if nd == 3 else 1)),
                      scaling=(s0, rnd.choice([s0, 1.0, s0 + rnd.random()])), allow_no_crop=no_crop,
                      num_attempts=rnd.randint(1, 4), total_num_attempts=total, all_boxes=rnd.random() < 0.5,
                      prune=rnd.choice([None, 0.0, 1.0, rnd.random()]))
    shapes = lambda: np.array([[float(rnd.choice([1, 2, rnd.randint(1, 5000)])) for _ in range(nd)]  # noqa: E731
                               for _ in range(n)])
    ins = shapes() if rnd.random() < 0.6 else None
    cs = shapes() if ins is not None and rnd.random() < 0.5 else None
    if cs is not None and total <= 0:  # no "no crop" outcome with crop_shape: bound the search
        p = BC.CropParams(**{**p.__dict__, "total_num_attempts": rnd.randint(1, 40)})
    args = (rnd.getrandbits(64), rnd.getrandbits(32), np.arange(n) + rnd.randint(0, 9), lo, hi, np.array(offsets), p, cs, ins)
    want, got = BC.find_crops(*args), cpu_bbox.find_crops(*args)
    _check(got is not None and got.failed == want.failed, f"search failed at {want.failed}, C at {got and got.failed}")
    if want.failed < 0:
        for f in ("anchor", "shape", "rel_lo", "rel_hi", "keep", "exhausted", "best_metric"):
            a, b = getattr(want, f), getattr(got, f)
            _check(a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"),
                   f"{f}: spec {a} != C {b} for {p} crop {cs} input {ins}")


def target_box_encoder(data: bytes, rnd: random.Random) -> None:
    """box_encoder.c == box_encoder_batch byte for byte (or declined, for NaN IoUs) at edge
    coordinates: infinities, NaN, tiny and huge values, inverted and empty boxes, empty samples."""
    if helpers.BOX_ENCODER.load() is None:
        return
    edge = lambda: rnd.choice([0.0, 1.0, 0.5, -0.0, 1e-38, 1e-45, 3e38, float("inf"), -float("inf"),  # noqa: E731
                               float("nan"), rnd.random(), rnd.uniform(-2, 2)])
    B, N, M = rnd.randint(1, 4), rnd.randint(1, 6), rnd.randint(1, 20)
    boxes = torch.tensor([[[edge() for _ in range(4)] for _ in range(N)] for _ in range(B)], dtype=torch.float32)
    anchors = torch.tensor([[edge() for _ in range(4)] for _ in range(M)], dtype=torch.float32)
    counts = torch.tensor([rnd.randint(0, N) for _ in range(B)])
    labels = torch.randint(1, 50, (B, N), dtype=torch.int32)
    args = (rnd.choice([0.0, 0.5, 1.0, -1.0]), rnd.random() < 0.5, rnd.choice([1.0, 0.5, 300.0]),
            [rnd.choice([0.0, 0.1]) for _ in range(4)], [rnd.choice([0.1, 1.0, 0.2]) for _ in range(4)])
    got = cpu_boxes.box_encoder_batch(boxes, labels, counts, anchors, *args)
    if got is None:
        return
    want = K.box_encoder_batch(boxes, labels, counts, anchors, *args)
    for g, w in zip(got, want):
        _check(g.dtype == w.dtype and g.numpy().tobytes() == w.numpy().tobytes(),
               f"C != spec for boxes {boxes.tolist()} counts {counts.tolist()} anchors {anchors.tolist()} {args}")


TARGETS = {"bbox_crop": (target_bbox_crop, lambda: [b""]), "box_encoder": (target_box_encoder, lambda: [b""])}
