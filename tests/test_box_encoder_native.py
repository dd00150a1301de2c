"""box_encoder in C (ops/fast/cpu_boxes.py, `_native/csrc/cpu/box_encoder.c`) gives
`functional.detection.box_encoder_batch`'s encodings and labels byte for byte: inverted, empty and
grid-aligned boxes (ties), empty samples, with and without `offset`, scales, means and stds, SSD's
8732 anchors; NaN IoUs are left to the spec; the op gives the same batches with and without it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torch_dali.functional.detection as K
from torch_dali import fn, pipeline_def
from torch_dali._native import helpers
from torch_dali.ops.fast import cpu_boxes

try:
    from tests._stand_ins import need, same_with_and_without
    from tests.test_box_encoder_fast import _anchors, _batch  # inverted, empty and grid-tied boxes
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]
    from test_box_encoder_fast import _anchors, _batch  # type: ignore[no-redef]


def _ssd_anchors() -> torch.Tensor:
    out = []
    for fk, n in [(38, 4), (19, 6), (10, 6), (5, 6), (3, 4), (1, 4)]:
        for i in range(fk):
            for j in range(fk):
                for k in range(n):
                    cx, cy, w = (j + 0.5) / fk, (i + 0.5) / fk, 0.1 + 0.15 * k
                    out.append([cx - w / 2, cy - w / 2, cx + w / 2, cy + w / 2])
    return torch.tensor(out, dtype=torch.float32).clamp(0, 1)


def _same(a: tuple, b: tuple) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.numpy().tobytes() == y.numpy().tobytes()
               for x, y in zip(a, b))


def test_the_encodings_match_the_spec_byte_for_byte() -> None:
    need(helpers.BOX_ENCODER)
    rs = np.random.RandomState(0)
    taken = 0
    for trial in range(200):
        grid = bool(trial % 2)
        boxes, labels = _batch(rs, rs.randint(1, 6), int(rs.choice([1, 5, 30])), grid)
        if trial % 25 == 0:
            anchors = _ssd_anchors()
        else:
            anchors = _anchors(rs, grid)
        b, lab, counts = K.pad_boxes(boxes, labels, torch.device("cpu"))
        args = (float(rs.choice([0.0, 0.3, 0.5, 0.9])), bool(trial % 3), float(rs.choice([1.0, 300.0])),
                [0.0, 0.1, 0.0, 0.2], [0.1, 0.1, 0.2, 0.2])
        got = cpu_boxes.box_encoder_batch(b, lab, counts, anchors, *args)
        if b.shape[1] == 0:
            assert got is None  # no box in the batch: the spec's early return
            continue
        taken += 1
        assert got is not None and _same(got, K.box_encoder_batch(b, lab, counts, anchors, *args)), trial
    assert taken > 150


def test_a_nan_iou_is_left_to_the_spec() -> None:
    need(helpers.BOX_ENCODER)
    b = torch.tensor([[[0.1, 0.1, float("nan"), 0.5]]])
    anchors = torch.tensor([[0.0, 0.0, 0.5, 0.5], [0.2, 0.2, 0.9, 0.9]])
    args = (b, torch.tensor([[3]], dtype=torch.int32), torch.tensor([1]), anchors, 0.5, True, 1.0, [0.0] * 4, [1.0] * 4)
    assert cpu_boxes.box_encoder_batch(*args) is None


def test_the_op_gives_the_same_batches_with_and_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    need(helpers.BOX_ENCODER)
    boxes, labels = _batch(np.random.RandomState(3), 8, 12, False)
    boxes = [b.numpy().clip(0, 1) for b in boxes]
    labels = [lab.numpy() for lab in labels]
    anchors = _ssd_anchors().reshape(-1).tolist()

    def make():
        @pipeline_def(batch_size=8, num_threads=2, device_id=None)
        def pipe():
            b = fn.external_source(source=lambda: boxes, batch=True)
            lab = fn.external_source(source=lambda: labels, batch=True)
            return tuple(fn.box_encoder(b, lab, anchors=anchors, criteria=0.5, offset=True, scale=1.0,
                                        stds=[0.1, 0.1, 0.2, 0.2]))
        p = pipe()
        p.build()
        return p

    # bytes: inverted boxes (clipped) give NaN offsets, equal in bits on both paths
    same_with_and_without(monkeypatch, make, ["box_encode"], 1,
                          lambda x, y: x.dtype == y.dtype and x.numpy().tobytes() == y.numpy().tobytes())


def test_the_batch_split_across_threads_gives_the_one_call_batches() -> None:
    boxes, labels = _batch(np.random.RandomState(4), 12, 6, True)
    boxes = [b.numpy().clip(0, 1) for b in boxes]
    boxes[3] = boxes[3][:0]  # a sample without boxes, and a part of the batch may have none at all
    labels = [lab.numpy() for lab in labels]
    labels[3] = labels[3][:0]
    anchors = _ssd_anchors().reshape(-1).tolist()

    def run(threads: int) -> list:
        @pipeline_def(batch_size=12, num_threads=threads, device_id=None)
        def pipe():
            b = fn.external_source(source=lambda: boxes, batch=True)
            lab = fn.external_source(source=lambda: labels, batch=True)
            return tuple(fn.box_encoder(b, lab, anchors=anchors, criteria=0.4, offset=True, stds=[0.1, 0.1, 0.2, 0.2]))
        p = pipe()
        p.build()
        return [[torch.as_tensor(t).numpy().tobytes() for t in out] for out in p.run()]

    assert run(1) == run(3)


def test_a_batch_of_equal_box_counts_pads_as_one_stack() -> None:
    # (the stacks' fast path against the zero-filled padding it skips)
    rs = np.random.RandomState(5)
    for n, dtype in [(7, torch.int32), (0, torch.int64), (1, torch.int32)]:
        boxes = [torch.from_numpy(rs.uniform(0, 1, (n, 4)).astype(np.float32)) for _ in range(5)]
        labels = [torch.arange(n, dtype=dtype) + k for k in range(5)]
        b, lab, counts = K.pad_boxes(boxes, labels, torch.device("cpu"))
        assert b.dtype == torch.float32 and lab.dtype == dtype and counts.tolist() == [n] * 5
        assert torch.equal(b, torch.stack(boxes)) and torch.equal(lab, torch.stack(labels))
    mixed = [torch.zeros(2, 4), torch.ones(3, 4)]
    b, lab, counts = K.pad_boxes(mixed, [torch.ones(2, dtype=torch.int32), torch.ones(3, dtype=torch.int32)],
                                 torch.device("cpu"))
    assert b.shape == (2, 3, 4) and counts.tolist() == [2, 3] and b[0, 2].abs().sum() == 0 and lab[0, 2] == 0
