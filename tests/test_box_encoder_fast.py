"""box_encoder's planar IoU and mask-based last-argmax against the first formulation
(`plain=True`: `iou`, `_last_argmax`): byte-identical encodings and labels on random batches."""
import numpy as np
import torch

import torch_dali.functional.detection as K


def _batch(rs, b, n_max, grid):
    boxes, labels = [], []
    for _ in range(b):
        n = rs.randint(0, n_max + 1)
        lo = rs.uniform(0, 0.9, (n, 2))
        hi = lo + rs.uniform(-0.05, 0.5, (n, 2))  # some inverted and empty boxes
        if grid:  # coordinates on a grid: many equal IoUs, so the tie rule matters
            lo, hi = np.round(lo * 8) / 8, np.round(hi * 8) / 8
        boxes.append(torch.from_numpy(np.concatenate([lo, hi], 1).astype(np.float32)))
        labels.append(torch.from_numpy(rs.randint(1, 90, n).astype(np.int32)))
    return boxes, labels


def _anchors(rs, grid):
    """1-59 random ltrb anchors; on the grid, corners on 1/8 steps (IoU ties)."""
    m = rs.randint(1, 60)
    a_lo = rs.uniform(0, 0.9, (m, 2))
    a_hi = a_lo + rs.uniform(0.01, 0.5, (m, 2))
    if grid:
        a_lo, a_hi = np.round(a_lo * 8) / 8, np.round(a_hi * 8) / 8 + 0.125
    return torch.from_numpy(np.concatenate([a_lo, a_hi], 1).astype(np.float32))


def test_fast_equals_plain():
    rs = np.random.RandomState(0)
    for trial in range(120):
        grid = bool(trial % 2)
        boxes, labels = _batch(rs, rs.randint(1, 6), rs.choice([0, 1, 5, 30]), grid)
        anchors = _anchors(rs, grid)
        b, lab, counts = K.pad_boxes(boxes, labels, torch.device("cpu"))
        args = (float(rs.choice([0.0, 0.3, 0.5, 0.9])), bool(trial % 3 == 0), float(rs.choice([1.0, 300.0])),
                [0.0, 0.1, 0.0, 0.2], [0.1, 0.1, 0.2, 0.2])
        fast = K.box_encoder_batch(b, lab, counts, anchors, *args)
        plain = K.box_encoder_batch(b, lab, counts, anchors, *args, plain=True)
        for f, p in zip(fast, plain):
            assert f.dtype == p.dtype and f.numpy().tobytes() == p.numpy().tobytes(), trial


def test_planar_iou_and_last_argmax():
    rs = np.random.RandomState(1)
    a = torch.from_numpy(np.round(rs.uniform(-0.2, 1.2, (3, 17, 4)) * 4).astype(np.float32) / 4)
    b = torch.from_numpy(np.round(rs.uniform(-0.2, 1.2, (23, 4)) * 4).astype(np.float32) / 4)
    want = K.iou(a[..., :2], a[..., 2:], b[:, :2], b[:, 2:])
    got = K.iou_planar(a[..., :2], a[..., 2:], b[:, :2], b[:, 2:])
    assert got.numpy().tobytes() == want.numpy().tobytes()
    for dim in (1, 2):
        assert torch.equal(K._last_argmax_eq(want, dim), K._last_argmax(want, dim))
