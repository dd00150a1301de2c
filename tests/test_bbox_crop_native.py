"""random_bbox_crop's window search in C (ops/fast/cpu_bbox.py, `_native/csrc/cpu/bbox_crop.c`) gives
`functional.bbox_crop.find_crops`'s windows bit for bit: 2-D and 3-D boxes, fixed and ranged aspect
ratios, IoU and overlap, pruning, `crop_shape` / `input_shape`, searches cut by total_num_attempts
and searches that give up; the op gives the same batches with and without it, whatever the boxes'
and labels' types and shapes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali._native import helpers
from torch_dali.functional import bbox_crop as BC
from torch_dali.ops.fast import cpu_bbox

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]

_FIELDS = ("anchor", "shape", "rel_lo", "rel_hi", "keep", "exhausted", "best_metric")


def _case(rs: np.random.RandomState) -> tuple:
    nd = int(rs.choice([2, 3]))
    n = rs.randint(1, 6)
    offsets = np.concatenate([[0], np.cumsum(rs.randint(0, 6, n))])
    lo = rs.uniform(0, 0.8, (offsets[-1], nd)).astype(np.float32)
    hi = np.minimum(lo + rs.uniform(0, 0.5, lo.shape).astype(np.float32), np.float32(1))
    if nd == 2:
        aspect = [((0.5, 2.0),), ((1.0, 1.0),), ((0.75, 0.75),), ((0.2, 5.0),)][rs.randint(4)]
    else:
        aspect = [((0.5, 2.0),), ((1.0, 1.0),), ((0.5, 2.0), (1.5, 1.5), (0.3, 3.0)),
                  ((0.8, 0.8), (1.2, 1.2), (1.0, 1.0))][rs.randint(4)]
    p = BC.CropParams(ndim=nd, thresholds=tuple(rs.choice([0.0, 0.1, 0.3, 0.5, 0.7, 0.9], rs.randint(1, 4))),
                      overlap=bool(rs.randint(2)), aspect=aspect,
                      scaling=(float(rs.uniform(0, 0.5)), float(rs.uniform(0.5, 1.0))),
                      allow_no_crop=bool(rs.randint(2)), num_attempts=int(rs.randint(1, 5)),
                      total_num_attempts=int(rs.choice([-1, 3, 10, 50])), all_boxes=bool(rs.randint(2)),
                      prune=[None, 0.0, 0.3, 0.8][rs.randint(4)])
    mode = rs.randint(3)
    input_shape = rs.randint(50, 400, (n, nd)).astype(np.float64) if mode else None
    crop_shape = rs.randint(20, 500, (n, nd)).astype(np.float64) if mode == 2 else None
    ids = np.arange(n) + rs.randint(0, 5)
    return (rs.randint(1 << 31), rs.randint(100), ids, lo.astype(np.float64), hi.astype(np.float64), offsets, p,
            crop_shape, input_shape)


def test_the_search_matches_the_spec_bit_for_bit() -> None:
    need(helpers.BBOX_CROP)
    rs = np.random.RandomState(0)
    seen = {"exhausted": 0, "failed": 0, "kept_some": 0}
    for case in range(300):
        args = _case(rs)
        a, b = BC.find_crops(*args), cpu_bbox.find_crops(*args)
        assert b is not None and a.failed == b.failed, case
        if a.failed >= 0:
            seen["failed"] += 1
            continue
        for f in _FIELDS:
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and np.array_equal(x, y), (case, f, x, y)
        seen["exhausted"] += int(a.exhausted.any())
        seen["kept_some"] += int(a.keep.any())
    assert all(v > 0 for v in seen.values()), seen  # the cases reach every way out of the search


def test_a_search_that_gives_up_names_the_same_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    need(helpers.BBOX_CROP)
    monkeypatch.setattr(BC, "MAX_ATTEMPTS", 50)
    lo, hi = np.array([[0.0, 0.0], [0.4, 0.4]]), np.array([[0.1, 0.1], [0.5, 0.5]])
    p = BC.CropParams(ndim=2, thresholds=(0.99,), overlap=False, aspect=((0.5, 2.0),), scaling=(0.3, 1.0),
                      allow_no_crop=False, num_attempts=1, total_num_attempts=-1, all_boxes=True, prune=None)
    args = (7, 0, np.array([0, 1]), lo, hi, np.array([0, 0, 2]), p)  # sample 0 has no box: any window
    assert BC.find_crops(*args).failed == cpu_bbox.find_crops(*args).failed == 1


def _boxes_and_labels(n: int, dtype: torch.dtype, label_shape: str) -> tuple[list, list]:
    g = torch.Generator().manual_seed(n)
    boxes, labels = [], []
    for i in range(n):
        k = int(torch.randint(0, 9, (), generator=g))
        lo = torch.rand(k, 2, generator=g) * 0.7
        boxes.append(torch.cat([lo, lo + torch.rand(k, 2, generator=g) * 0.3], 1).to(dtype).numpy())
        if label_shape == "mixed":  # (k, 1) and (k, 2): the op gathers them one by one
            labels.append(np.arange((1 + i % 2) * k, dtype=np.int64).reshape(k, 1 + i % 2))
        else:
            labels.append(np.arange(k, dtype=np.int32))
    return boxes, labels


@pytest.mark.parametrize("dtype,label_shape,indices", [(torch.float32, "flat", False), (torch.float64, "mixed", True)])
def test_the_op_gives_the_same_batches_with_and_without_it(monkeypatch: pytest.MonkeyPatch, dtype: torch.dtype,
                                                          label_shape: str, indices: bool) -> None:
    need(helpers.BBOX_CROP)
    boxes, labels = _boxes_and_labels(12, dtype, label_shape)

    def make():
        @pipeline_def(batch_size=12, num_threads=2, device_id=None, seed=5)
        def pipe():
            b = fn.external_source(source=lambda: boxes, batch=True)
            lab = fn.external_source(source=lambda: labels, batch=True)
            return tuple(fn.random_bbox_crop(b, lab, aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5],
                                             scaling=[0.3, 1.0], bbox_layout="xyXY", output_bbox_indices=indices))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["bbox_crop"], 1)
