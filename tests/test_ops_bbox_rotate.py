"""bbox_rotate against DALI 2.4's CPU backend: tests/reference/bbox_rotate_tables.npz (made once by
`/work/dali-venv/bin/python -m tests.reference.bbox_rotate_ref`) holds DALI's boxes and labels for
each case of tests/reference/bbox_rotate_ref.py, and the cases DALI refuses."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from reference import bbox_rotate_ref as R
import torch_dali


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, np.ndarray]:
    with np.load(R.TABLES) as z:
        return {k: z[k] for k in z.files}


def run(boxes: list[np.ndarray], labels: list[np.ndarray] | None, args: dict[str, Any],
        angles: list[float] | None = None, shapes: list[list[int]] | None = None,
        device: str = "cpu") -> list[list[np.ndarray]]:
    p = R.build(torch_dali, boxes, labels, args, angles, shapes, device)
    return [[t.cpu().numpy() for t in tl] for tl in p.run()]


@pytest.mark.parametrize("name", list(R.CASES))
def test_matches_dali(name):
    boxes, labels, args, angles, shapes = R.CASES[name]
    got = run(boxes, labels, args, angles, shapes)
    t = _tables()
    assert len(got) == (2 if labels is not None else 1)
    pixels = not args.get("bbox_normalized", True)
    for k, out in enumerate(got):
        for i, g in enumerate(out):
            want = t[f"{name}/{k}/{i}"]
            assert g.shape == want.shape and g.dtype == want.dtype, (name, k, i, g.shape, want.shape, g.dtype)
            if k == 0:  # float32 trigonometry: a few ulps of the coordinates' magnitude
                np.testing.assert_allclose(g, want, rtol=0, atol=1e-4 if pixels else 2e-6, err_msg=f"{name} {i}")
            else:
                np.testing.assert_array_equal(g, want, err_msg=f"{name} labels {i}")


@pytest.mark.parametrize("name", list(R.ERRORS))
def test_refuses_what_dali_refuses(name):
    boxes, labels, args = R.ERRORS[name]
    dali_says = bytes(_tables()[f"error/{name}"]).decode()
    if dali_says == "no error":
        # boxes_n3: DALI 2.4 only logs the wrong shape and reads past the sample; refused here
        assert name == "boxes_n3"
    with pytest.raises(RuntimeError):
        run(boxes, labels, args)


def test_classes_and_outputs():
    from torch_dali import ops
    assert ops.BBoxRotate is not None
    boxes, labels, args, _, _ = R.CASES["expand_30"]
    assert len(run(boxes, None, args)) == 1  # no labels in, no labels out
