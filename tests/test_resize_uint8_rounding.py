"""uint8 resize rounds exact x.5 values where DALI 2.4's CPU resize does.

DALI rounds half to even in the values its vectorised loops store and half away from zero in those
it stores one by one. Which is which depends on its last pass: along the columns (rows of memory,
16 values at a time, the rest of a row one by one) or along the rows of pixels (the columns whose
taps lie inside the image, 16 pixels at a time, every other column one by one). When its two
pass orders cost the same it runs the rows first if the height shrinks (square downscales such as
224x224 -> 112x112), else the columns first. Digests: DALI 2.4's outputs (CPU) for the same
images, whose values (multiples of 17) make many exact ties."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.functional.resize import resize

# (in_h, in_w, out_h, out_w, channels, antialias) -> first 16 hex digits of sha256(DALI's output)
DALI = {
    (50, 50, 25, 25, 2, False): "a831aad6e2c53fa1",
    (224, 224, 112, 112, 3, True): "d74a0470800d94dc",
    (18, 18, 9, 9, 3, False): "64aa91dee0f61871",
    (10, 10, 5, 40, 1, False): "94957fb18d5b3a98",
    (5, 7, 4, 10, 3, False): "da7cc870a9e10c92",
    (8, 4, 4, 10, 3, True): "2b6a7005750ea63c",
    (64, 48, 30, 100, 3, False): "769f0c3259e3076b",
    (33, 33, 47, 47, 4, False): "a725cda277be407e",
}
CASES = list(DALI)


def _image(case: tuple) -> np.ndarray:
    h, w, _, _, c, _ = case
    return np.random.default_rng(CASES.index(case)).integers(0, 16, (h, w, c), dtype=np.uint8) * 17


def _digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("case", CASES)
def test_spec_rounds_as_dali(case: tuple) -> None:
    out = resize(torch.from_numpy(_image(case)), case[2:4], "linear", antialias=case[5])
    assert _digest(out.numpy()) == DALI[case]


@pytest.mark.parametrize("case", CASES)
def test_op_rounds_as_dali(case: tuple) -> None:
    """Through fn.resize: the C helper when it is built, else the spec."""
    x = _image(case)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        src = fn.external_source(source=lambda: [x], batch=True, layout="HWC")
        return fn.resize(src, size=list(case[2:4]), antialias=case[5])

    p = pipe()
    p.build()
    (out,) = p.run()
    assert _digest(np.asarray(out[0])) == DALI[case]
