"""decoders.image's YCbCr into uint16 / float / int16: DALI computes it in the output type (float:
offsets 1/16 and 1/2 in [0, 1]; integers: 16 and 128 scaled to the type's bits), not by scaling
8-bit YCbCr. Values measured with NVIDIA DALI 2.4's CPU decoder on this PNG."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali import types
from torch_dali.io import decode as D

PIXELS = np.array([[[0, 0, 0], [255, 255, 255], [255, 0, 0]], [[0, 255, 0], [0, 0, 255], [193, 88, 107]]], np.uint8)

DALI = {  # DALI 2.4, decoders.image(output_type=YCbCr, dtype=...), pixels in row order
    torch.uint16: [[4096, 32768, 32768], [60379, 32768, 32768], [20925, 23054, 61552], [37134, 13698, 8665],
                   [10512, 61552, 28087], [30927, 30913, 44271]],
    torch.float32: [[0.0625, 0.5, 0.5], [0.9213235378265381, 0.5, 0.5],
                    [0.3192882239818573, 0.3517770767211914, 0.9392157196998596],
                    [0.5666294693946838, 0.20900720357894897, 0.13221165537834167],
                    [0.16040588915348053, 0.9392157196998596, 0.4285726249217987],
                    [0.47190961241722107, 0.47169291973114014, 0.6755315065383911]],
    torch.int16: [[2048, 16384, 16384], [30189, 16384, 16384], [10462, 11527, 30776], [18567, 6849, 4333],
                  [5256, 30776, 14044], [15463, 15456, 22136]],
}


def _png() -> torch.Tensor:
    buf = io.BytesIO()
    Image.fromarray(PIXELS).save(buf, "PNG")
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


@pytest.mark.parametrize("dtype", list(DALI))
def test_ycbcr_in_wider_types_matches_dali(dtype):
    got = D.decode_image(_png(), types.YCbCr, dtype=dtype)
    assert got.dtype == dtype and tuple(got.shape) == (2, 3, 3)
    want = torch.tensor(DALI[dtype], dtype=torch.float64)
    diff = (got.reshape(-1, 3).to(torch.float64) - want).abs().max().item()
    assert diff <= (1e-6 if dtype.is_floating_point else 1), diff


def test_ycbcr_crop_is_the_crop_of_the_whole():
    whole = D.decode_image(_png(), types.YCbCr, dtype=torch.float32)
    crop = D.decode_image_crop(_png(), lambda h, w: (1, 1, 1, 2), types.YCbCr, dtype=torch.float32)
    assert torch.equal(crop, whole[1:2, 1:3])
