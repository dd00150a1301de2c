"""fn.filter's arithmetic follows DALI 2.4's CPU operator (OpenCV's filter2D, AVX2 path): to the
input's own type each row's blocks of 8 values take fused multiply-adds, its tail plain sums, and
integers round half to even; to float32 from integers, plain products and sums. Digests (sha256,
first 16 hex digits) of DALI 2.4's CPU outputs on this project's x86-64 machine, for PIL's
sharpness kernel (auto_aug's `sharpness`, whose sums land on .5 exactly) and a random 3x5 kernel,
rows with and without a tail; checked with the C helper and the spec."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.functional import filters as K
from torch_dali.ops import _dispatch

DALI_24 = {
    ("sharp", "u8", False): "87cf826d807bb474", ("sharp", "u8", True): "c3a6def1a2ae74c4",
    ("sharp", "u16", False): "73f567007953c093", ("sharp", "u16", True): "a29e00f76d1b3d02",
    ("sharp", "i16", False): "55990a0c5273c842", ("sharp", "i16", True): "61ba0479cf25fe24",
    ("sharp", "f32", False): "36736025368dbcaa", ("sharp", "f32", True): "36736025368dbcaa",
    ("rand", "u8", False): "242339e4200f75af", ("rand", "u8", True): "fc680f3fd86a5efb",
    ("rand", "u16", False): "8648b2ae73c032ea", ("rand", "u16", True): "389da3341577cae9",
    ("rand", "i16", False): "8e1566c0eb319838", ("rand", "i16", True): "4ae1981bbd9f7b8b",
    ("rand", "f32", False): "664bd1ccbc5b15ca", ("rand", "f32", True): "664bd1ccbc5b15ca",
    ("sharp", "u8_tail", False): "b97ffd7eac327ec7", ("sharp", "u8_tail", True): "01eedc5a1edc83fd",
    ("sharp", "f32_tail", False): "0f31985b9de4c0f2", ("sharp", "f32_tail", True): "0f31985b9de4c0f2",
    ("sharp", "f32_chw", False): "df2928e433cf8fd6", ("sharp", "f32_chw", True): "df2928e433cf8fd6",
    ("rand", "u8_tail", False): "31287a04a3b9a28a", ("rand", "u8_tail", True): "53357c2a4a8c8f28",
    ("rand", "f32_tail", False): "dff349a8d47bc0aa", ("rand", "f32_tail", True): "dff349a8d47bc0aa",
    ("rand", "f32_chw", False): "42405ec6c605262f", ("rand", "f32_chw", True): "42405ec6c605262f",
}


def _inputs() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(5)
    m = np.float32(0.3857143)
    blur = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / 13
    ident = np.zeros((3, 3), np.float32)
    ident[1, 1] = 1
    kernels = {"sharp": (-m * blur + (1 + m) * ident).astype(np.float32),
               "rand": rng.normal(0, 0.4, (3, 5)).astype(np.float32)}
    imgs = {"u8": rng.integers(0, 256, (40, 48, 3), dtype=np.uint8),
            "u16": rng.integers(0, 65536, (40, 48, 3), dtype=np.uint16),
            "i16": rng.integers(-30000, 30000, (40, 48, 3), dtype=np.int16),
            "f32": rng.normal(0, 50, (40, 48, 3)).astype(np.float32),
            # rows of 37 * 3 and 37 values: their last 7 and 5 are OpenCV's scalar tail (plain sums)
            "u8_tail": rng.integers(0, 256, (50, 37, 3), dtype=np.uint8),
            "f32_tail": rng.normal(0, 50, (33, 37, 3)).astype(np.float32),
            "f32_chw": rng.normal(0, 50, (3, 33, 37)).astype(np.float32)}
    return kernels, imgs


def _digests() -> dict[tuple[str, str, bool], str]:
    kernels, imgs = _inputs()
    got = {}
    for kn, k in kernels.items():
        for name, img in imgs.items():
            for to_float in (False, True):
                @pipeline_def(batch_size=1, num_threads=1, device_id=None)
                def pipe():
                    x = fn.external_source(lambda: [img], batch=True, layout="CHW" if "chw" in name else "HWC")
                    kw = {"dtype": types.FLOAT} if to_float else {}
                    return fn.filter(x, types.Constant(k), **kw)

                p = pipe()
                p.build()
                (out,) = p.run()
                a = np.ascontiguousarray(np.array(out[0]))
                got[(kn, name, to_float)] = hashlib.sha256(a.tobytes()).hexdigest()[:16]
    return got


@pytest.mark.parametrize("helper", [True, False], ids=["c_helper", "spec"])
def test_filter_outputs_are_dali_24_bits(monkeypatch: pytest.MonkeyPatch, helper: bool) -> None:
    if not helper:
        monkeypatch.setattr(_dispatch, "_FAST_FN", {})
    assert _digests() == DALI_24


def test_fma32_rounds_once() -> None:
    import torch
    one_up = 1.0 + 2.0 ** -23
    # (1 + 2**-23) + (1 + 2**-23) * (2**-24 - 2**-47) = 1 + 2**-23 + 2**-24 - 2**-70: in float64 the
    # last term is lost and the sum is a float32 tie, which half to even takes up to 1 + 2**-22;
    # rounded once it stays 1 + 2**-23
    acc = torch.tensor([one_up], dtype=torch.float32)
    x = torch.tensor([one_up], dtype=torch.float32)
    w = torch.tensor([2.0 ** -24 - 2.0 ** -47], dtype=torch.float32)
    assert (acc.double() + x.double() * w.double()).float().item() == 1.0 + 2.0 ** -22
    assert K.fma32(acc, x, w).item() == one_up
    assert K.fma32_emulated(acc, x, w).item() == one_up
