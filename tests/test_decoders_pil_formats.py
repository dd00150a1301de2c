"""Formats decoded through PIL (BMP, TIFF, PPM, ...): what `peek_image_shape` says and what
decoders.image gives for ANY_DATA, as DALI 2.4's CPU decoder (measured on these files): a palette
image is 3 channels (its colours) in both, a bilevel (1-bit) image 1 channel of 0 / 255."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali import types
from torch_dali.io import decode as D

_RGB = np.random.default_rng(0).integers(0, 256, (12, 10, 3), dtype=np.uint8)


def _enc(mode: str, fmt: str) -> torch.Tensor:
    buf = io.BytesIO()
    Image.fromarray(_RGB).convert(mode).save(buf, fmt)
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


@pytest.mark.parametrize("fmt", ["BMP", "TIFF"])
def test_palette_is_three_channels_in_peek_and_decode(fmt):
    data = _enc("P", fmt)
    assert D.peek_image_shape(data, types.ANY_DATA) == (12, 10, 3)  # DALI 2.4: 3 (was 1 here)
    assert tuple(D.decode_image(data, types.ANY_DATA).shape) == (12, 10, 3)


def test_bilevel_any_data_is_one_gray_channel():
    data = _enc("1", "BMP")
    got = D.decode_image(data, types.ANY_DATA)
    assert tuple(got.shape) == (12, 10, 1) == D.peek_image_shape(data, types.ANY_DATA)  # DALI 2.4: 1 channel
    want = np.asarray(Image.fromarray(_RGB).convert("1").convert("L"))
    np.testing.assert_array_equal(got[..., 0].numpy(), want)
    assert set(np.unique(want).tolist()) <= {0, 255}
