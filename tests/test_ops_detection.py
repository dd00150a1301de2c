"""Detection ops beyond the DALI comparison (tests/test_ref_detection.py): random_bbox_crop's
invariants (windows inside their bounds, thresholds held, kept boxes and their mapping as DALI's
rules say), seeds give the same windows for any thread count, bad input is refused by name."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from torch_dali import fn
from torch_dali.errors import ArgumentError, GraphError, PipelineError

from reference import detection_ours as O


def _boxes(n_samples: int, seed: int, ndim: int = 2, big: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_samples):
        n = int(rng.integers(1, 6))
        lo = rng.random((n, ndim)) * (0.3 if big else 0.7)
        hi = lo + (0.4 + rng.random((n, ndim)) * 0.3 if big else rng.random((n, ndim)) * (1 - lo) * 0.9 + 0.02)
        out.append(np.concatenate([lo, np.minimum(hi, 1.0)], 1).astype(np.float32))
    return out


def _iou(b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    nd = len(lo)
    inter = np.prod(np.clip(np.minimum(b[:, nd:], hi) - np.maximum(b[:, :nd], lo), 0, None), 1)
    return inter / (np.prod(b[:, nd:] - b[:, :nd], 1) + np.prod(hi - lo) - inter)


CASES = [
    dict(scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3], allow_no_crop=False, num_attempts=20),
    dict(scaling=[0.3, 0.6], aspect_ratio=[1.0, 1.0], thresholds=[0.0], allow_no_crop=False),
    dict(scaling=[0.2, 0.9], aspect_ratio=[0.5, 2.0], thresholds=[0.2], all_boxes_above_threshold=False,
         allow_no_crop=False, bbox_prune_threshold=0.25, num_attempts=10),
]


@pytest.mark.parametrize("kw", CASES, ids=["all-boxes", "square", "any-box-prune"])
def test_random_bbox_crop_invariants(kw: dict[str, Any]):
    samples = _boxes(40, 1, big=kw.get("all_boxes_above_threshold", True))
    a, s, b, idx = O.run(lambda x: tuple(fn.random_bbox_crop(x, output_bbox_indices=True, **kw)), [samples], 40)
    lo_s, hi_s = kw["scaling"]
    for k in range(40):
        anchor, shape, out, keep, boxes = a[k], s[k], b[k], idx[k], samples[k]
        lo, hi = anchor.astype(np.float64), (anchor + shape).astype(np.float64)
        assert (anchor >= 0).all() and (hi <= 1 + 1e-6).all()
        assert lo_s - 1e-6 <= shape.max() <= hi_s + 1e-6
        r = shape[0] / shape[1]
        assert kw["aspect_ratio"][0] - 1e-5 <= r <= kw["aspect_ratio"][1] + 1e-5
        m = _iou(boxes.astype(np.float64), lo, hi)
        held = m.min() if kw.get("all_boxes_above_threshold", True) else m.max()
        assert held >= min(kw["thresholds"]) - 1e-6
        if kw.get("bbox_prune_threshold") is None:  # the kept boxes are those with the centroid inside
            c = (boxes[:, :2] + boxes[:, 2:]) / 2
            assert keep.tolist() == np.nonzero(((c >= lo) & (c <= hi)).all(1))[0].tolist()
        assert len(keep) > 0 and out.shape == (len(keep), 4)
        want = np.clip((np.clip(boxes[keep], np.tile(lo, 2), np.tile(hi, 2)) - np.tile(lo, 2)) / np.tile(hi - lo, 2), 0, 1)
        np.testing.assert_allclose(out, want, atol=2e-6)


def test_random_bbox_crop_3d_and_xywh():
    s3 = _boxes(6, 2, ndim=3)
    a, s, b = O.run(lambda x: tuple(fn.random_bbox_crop(x, bbox_layout="xyzXYZ", scaling=[0.5, 1.0],
                                                        aspect_ratio=[0.5, 2.0], allow_no_crop=False, num_attempts=50)),
                    [s3], 6)
    assert all(x.shape == (3,) for x in a + s) and all(o.shape[1] == 6 for o in b)
    xywh = [np.concatenate([x[:, :2], x[:, 2:] - x[:, :2]], 1) for x in _boxes(6, 3)]
    a, s, b = O.run(lambda x: tuple(fn.random_bbox_crop(x, bbox_layout="xyWH", allow_no_crop=True)), [xywh], 6)
    for anchor, shape, out, inp in zip(a, s, b, xywh):  # thresholds [0] + no crop: often the whole image
        if (shape == 1).all():
            np.testing.assert_allclose(out, inp, atol=1e-6)


def test_same_seed_same_windows_for_any_thread_count():
    samples = _boxes(32, 4)
    kw = dict(scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5])
    runs = [O.run(lambda x: tuple(fn.random_bbox_crop(x, **kw)), [samples], 32, seed=9, num_threads=t, iterations=2)
            for t in (1, 3)]
    other = O.run(lambda x: tuple(fn.random_bbox_crop(x, **kw)), [samples], 32, seed=10, iterations=2)
    for k in range(3):
        for x, y in zip(runs[0][k], runs[1][k]):
            np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(runs[0][0], other[0]))


def test_per_sample_input_shape():
    b = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)] * 4
    shapes = [np.array([400, 200], np.int32), np.array([300, 300], np.int32)] * 2
    a, s, _ = O.run(lambda x, sh: tuple(fn.random_bbox_crop(x, input_shape=sh, scaling=[0.5, 0.8],
                                                            allow_no_crop=False, num_attempts=20)), [b, shapes], 4)
    for shape, sh in zip(s, shapes):  # a square window in pixels: aspect_ratio [1, 1] in input_shape units
        np.testing.assert_allclose(shape[0] * sh[0], shape[1] * sh[1], rtol=1e-5)


def test_output_count_follows_labels_and_indices():
    b = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]
    lab = [np.array([4], np.int32)]
    assert len(O.run(lambda x: tuple(fn.random_bbox_crop(x)), [b], 1)) == 3
    assert len(O.run(lambda x, y: tuple(fn.random_bbox_crop(x, y)), [b, lab], 1)) == 4
    out = O.run(lambda x, y: tuple(fn.random_bbox_crop(x, y, output_bbox_indices=True)), [b, lab], 1)
    assert len(out) == 5 and out[3][0].tolist() == [4] and out[4][0].dtype == np.int32


@pytest.mark.parametrize("boxes,kw,message", [
    (np.array([[-0.1, 0.2, 0.5, 0.5]], np.float32), {}, "outside [0, 1]"),
    (np.array([[0.2, 0.2, 0.5, 1.5]], np.float32), {}, "outside [0, 1]"),
    (np.array([[0.1, 0.2, 0.5]], np.float32), {}, "(boxes, 4) or (boxes, 6)"),
    (np.array([[1, 2, 3, 4]], np.int32), {}, "floating point"),
    (np.array([[0.1, 0.1, 0.5, 0.5]], np.float32), dict(bbox_layout="xyXX"), "`bbox_layout` must be"),
    (np.array([[0.1, 0.1, 0.5, 0.5]], np.float32), dict(aspect_ratio=[1, 2, 3, 4, 5, 6]), "one [min, max] range"),
    (np.array([[0.1, 0.9, 0.2, 1.0]], np.float32), dict(thresholds=[0.99], allow_no_crop=False, scaling=[0.1, 0.2],
                                                          num_attempts=1000), "no window meeting the thresholds"),
])
def test_random_bbox_crop_errors(boxes, kw, message, monkeypatch):
    from torch_dali.functional import bbox_crop
    monkeypatch.setattr(bbox_crop, "MAX_ATTEMPTS", 2000)
    with pytest.raises(PipelineError) as e:
        O.run(lambda x: tuple(fn.random_bbox_crop(x, **kw)), [[boxes]], 1)
    assert message in str(e.value)


def test_total_num_attempts_takes_the_best_window(caplog):
    b = [np.array([[0.0, 0.0, 0.05, 0.05]], np.float32)] * 4
    kw = dict(thresholds=[0.9], scaling=[0.1, 0.2], allow_no_crop=False, total_num_attempts=3)
    with caplog.at_level("WARNING", logger="torch_dali"):
        O.run(lambda x: tuple(fn.random_bbox_crop(x, quiet=True, **kw)), [b], 4)
    assert not caplog.records
    with caplog.at_level("WARNING", logger="torch_dali"):
        a, s, out = O.run(lambda x: tuple(fn.random_bbox_crop(x, **kw)), [b], 4)
    assert all(0.1 - 1e-6 <= x.max() <= 0.2 + 1e-6 for x in s)
    # one line per sample with boxes, for each batch made (the pipeline may run ahead)
    assert sum("Could not find a valid cropping window" in r.getMessage() for r in caplog.records) >= 4


def test_labels_must_match_boxes():
    b = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]
    with pytest.raises(PipelineError, match="1 boxes but labels of shape"):
        O.run(lambda x, y: tuple(fn.random_bbox_crop(x, y)), [b, [np.array([1, 2], np.int32)]], 1)
    with pytest.raises(PipelineError, match="1 boxes but 2 labels"):
        O.run(lambda x, y: tuple(fn.box_encoder(x, y, anchors=[0, 0, 1, 1])), [b, [np.array([1, 2], np.int32)]], 1)


def test_box_encoder_and_paste_arguments():
    b = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]
    with pytest.raises(ArgumentError, match="4 ltrb values per anchor"):
        O.run(lambda x, y: tuple(fn.box_encoder(x, y, anchors=[0, 0, 1])), [b, [np.array([1], np.int32)]], 1)
    with pytest.raises(PipelineError, match="`ratio` must be >= 1"):
        O.run(lambda x: fn.bbox_paste(x, ratio=0.5), [b], 1)
    with pytest.raises(GraphError, match="device must be one of cpu"):
        O.run(lambda x: fn.bbox_paste(x, ratio=2.0, device="gpu"), [b], 1)


def test_ssd_random_crop_keeps_image_and_boxes_consistent():
    img = np.arange(100 * 160 * 3, dtype=np.int64).reshape(100, 160, 3).astype(np.uint8)
    boxes = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.45, 0.9, 0.8]], np.float32)
    labels = np.array([1, 2], np.int32)
    o = O.run(lambda i, b, la: tuple(fn.ssd_random_crop(i, b, la)), [[img] * 30, [boxes] * 30, [labels] * 30], 30)
    for im, bb, la in zip(*o):
        assert im.ndim == 3 and im.shape[2] == 3 and 0 < len(bb) == len(la) and (bb >= 0).all() and (bb <= 1).all()
        assert set(la.tolist()) <= {1, 2}
    assert any(im.shape != img.shape for im in o[0])


def test_ssd_random_crop_grayscale_and_no_crop_pass_through():
    """HW images are cropped as HWC ones; boxes outside [0, 1] never leave a box centre in a
    window, so every sample passes through as given (labels not read, whatever their count)."""
    img = np.arange(100 * 160, dtype=np.int32).reshape(100, 160)
    boxes = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.45, 0.9, 0.8]], np.float32)
    labels = np.array([1, 2], np.int32)
    o = O.run(lambda i, b, la: tuple(fn.ssd_random_crop(i, b, la)), [[img] * 30, [boxes] * 30, [labels] * 30], 30)
    assert all(im.ndim == 2 for im in o[0]) and any(im.shape != img.shape for im in o[0])
    for im in o[0]:  # a window of the image
        y, x = divmod(int(im[0, 0]), 160)
        np.testing.assert_array_equal(im, img[y:y + im.shape[0], x:x + im.shape[1]])
    far = np.array([[20.0, 30.0, 40.0, 50.0]] * 3, np.float32)
    o = O.run(lambda i, b, la: tuple(fn.ssd_random_crop(i, b, la)), [[img] * 8, [far] * 8, [labels[:1]] * 8], 8)
    for im, bb, la in zip(*o):
        np.testing.assert_array_equal(im, img)
        np.testing.assert_array_equal(bb, far)
        np.testing.assert_array_equal(la, labels[:1])


def test_bb_flip_per_sample_flags():
    b = [np.array([[0.1, 0.2, 0.4, 0.6]], np.float32)] * 3
    h = [np.array(1, np.int32), np.array(0, np.int32), np.array(1, np.int32)]
    out = O.run(lambda x, f: fn.bb_flip(x, ltrb=True, horizontal=f, vertical=0), [b, h], 3)[0]
    np.testing.assert_allclose(out[0], [[0.6, 0.2, 0.9, 0.6]], atol=1e-7)
    np.testing.assert_array_equal(out[1], b[1])
    assert torch.equal(torch.from_numpy(out[0]), torch.from_numpy(out[2]))


def test_bbox_paste_position_and_ratio_as_tensor_arguments():
    """paste_x, paste_y and ratio fed per sample give what the same scalars give (a tensor
    paste_x used to fail looking up its scalar default)."""
    b = _boxes(3, 7)
    px, py, r = [0.0, 0.25, 1.0], [1.0, 0.5, 0.0], [1.5, 2.0, 3.0]
    def f32(v: list[float]) -> list[np.ndarray]:
        return [np.float32(x) for x in v]

    got = O.run(lambda x, a, c, d: fn.bbox_paste(x, paste_x=a, paste_y=c, ratio=d),
                [b, f32(px), f32(py), f32(r)], 3)[0]
    for i in range(3):
        want = O.run(lambda x: fn.bbox_paste(x, paste_x=px[i], paste_y=py[i], ratio=r[i]), [[b[i]]], 1)[0][0]
        np.testing.assert_array_equal(got[i], want)
