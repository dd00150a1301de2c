"""random_bbox_crop's batch outputs, byte for byte, as they were before its Python overhead was
trimmed (dense anchor/shape outputs, column-slice layouts, one remap per batch): sha256 of every
output of seeded pipelines over plain and permuted 2-D and 3-D layouts, extents, labels of one and
of several shapes, a batch mixing 2-D and 3-D boxes, empty samples and box indices (digests from
the code at f6707e8)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


def _boxes(rs: np.random.RandomState, n: int, nd: int, extents: bool) -> np.ndarray:
    lo = rs.uniform(0, 0.6, (n, nd)).astype(np.float32)
    ext = rs.uniform(0.05, 0.4, (n, nd)).astype(np.float32)
    return np.concatenate([lo, ext if extents else lo + ext], 1)


CASES = {
    "xyXY": dict(bbox_layout="xyXY", aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5], scaling=[0.3, 1.0]),
    "xyWH": dict(bbox_layout="xyWH", scaling=[0.3, 1.0], output_bbox_indices=True),
    "YXyx": dict(bbox_layout="YXyx", scaling=[0.2, 0.9], threshold_type="overlap", bbox_prune_threshold=0.4),
    "xyzXYZ": dict(bbox_layout="xyzXYZ", scaling=[0.5, 1.0], aspect_ratio=[0.5, 2.0, 0.5, 2.0, 0.5, 2.0]),
    "xyzWHD": dict(bbox_layout="xyzWHD", scaling=[0.5, 1.0], output_bbox_indices=True),
    "mixed_labels": dict(bbox_layout="xyXY", scaling=[0.3, 1.0], total_num_attempts=5, quiet=True),
    "mixed_dims": dict(scaling=[0.5, 1.0], output_bbox_indices=True),
}


def _digest(name: str) -> str:
    rs = np.random.RandomState(len(name))
    kw = CASES[name]
    nd = 3 if name.startswith("xyz") else 2
    counts = [7, 0, 12, 1, 20, 3, 9, 5]
    extents = "W" in kw.get("bbox_layout", "")
    boxes = [_boxes(rs, k, 3 if name == "mixed_dims" and s % 2 else nd, extents) for s, k in enumerate(counts)]
    if name == "YXyx":
        boxes = [b[:, [3, 2, 1, 0]] for b in boxes]
    widths = [1, 2] if name == "mixed_labels" else [0]  # rows of 1 and 2 labels: gathered one by one
    labels = [np.arange(k * max(w, 1)).reshape((k, w) if w else (k,)).astype(np.int32)
              for w, k in zip(widths * len(counts), counts)]

    @pipeline_def(batch_size=len(counts), num_threads=2, device_id=None, seed=7)
    def pipe():
        b = fn.external_source(source=lambda: boxes)
        lab = fn.external_source(source=lambda: labels)
        return tuple(fn.random_bbox_crop(b, lab, **kw))
    p = pipe()
    p.build()
    h = hashlib.sha256()
    for _ in range(3):
        for out in p.run():
            for t in out:
                a = np.asarray(t)
                h.update(f"{a.dtype}{a.shape}".encode() + a.tobytes())
    return h.hexdigest()[:16]


WANT = {
    "YXyx": "6ceb9d8df4155952", "mixed_dims": "64c933ec962eeabf", "mixed_labels": "376c63b57e6cae7f",
    "xyWH": "095b1d708d006320", "xyXY": "cbdade28f86f5682", "xyzWHD": "e981accef1beed22",
    "xyzXYZ": "d6c9f18a00415e39",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_outputs_keep_their_bytes(name: str) -> None:
    assert _digest(name) == WANT[name]


if __name__ == "__main__":
    print({n: _digest(n) for n in sorted(CASES)})
