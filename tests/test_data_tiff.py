"""TIFFs PIL does not hand over whole (more samples per pixel than its modes, 16-bit colour), read by
torch_dali.io.tiff, against DALI 2.4's CPU decoder: tests/reference/tiff_tables.npz (made once by
`/work/dali-venv/bin/python -m tests.reference.tiff_ref`) holds DALI's output for each case of
tests/reference/tiff_ref.py, every output_type x uint8/uint16, and its peek_image_shape.
DALI's multichannel test (`test_pipeline_multichannel`) decodes such files with ANY_DATA."""
from __future__ import annotations

import functools
import io
import struct
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from reference import tiff_ref as R
from torch_dali import fn, pipeline_def, types
from torch_dali.errors import DataError
from torch_dali.io import decode as D
from torch_dali.io import tiff


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, np.ndarray]:
    with np.load(R.TABLES) as z:
        return {k: z[k] for k in z.files}


def _decode_all(name: str) -> dict[str, np.ndarray]:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        enc = fn.external_source(source=lambda: [torch.from_numpy(R.encoded(name).copy())], batch=True)
        outs = [fn.peek_image_shape(enc)]
        for ot in R.OUTPUT_TYPES:
            for dt in R.DTYPES:
                outs.append(fn.decoders.image(enc, output_type=getattr(types, ot), dtype=getattr(types, dt)))
        return tuple(outs)

    p = pipe()
    p.build()
    outs = p.run()
    keys = [f"{name}/shape"] + [f"{name}/{ot}/{dt}" for ot in R.OUTPUT_TYPES for dt in R.DTYPES]
    return {k: o[0].cpu().numpy() for k, o in zip(keys, outs)}


@pytest.mark.parametrize("name", list(R.CASES))
def test_matches_dali(name):
    got = _decode_all(name)
    ref = _tables()
    for key, out in got.items():
        want = ref[key]
        if want.dtype.kind == "U":  # DALI 2.4 refuses planar and rotated multi-sample files; we
            continue  # decode them (test_planar_and_rotated_files_decode)
        if R.CASES[name][0].shape[-1] == 2 and "/ANY_DATA/" not in key and "/shape" not in key:
            continue  # DALI 2.4 reads 3 samples a pixel of 2 there: test_two_samples_give_the_first
        assert out.dtype == want.dtype and out.shape == want.shape, key
        np.testing.assert_array_equal(out, want, err_msg=key)


def test_planar_and_rotated_files_decode():
    got = _decode_all("rgb_6ch_planar")
    np.testing.assert_array_equal(got["rgb_6ch_planar/ANY_DATA/UINT8"], R.CASES["rgb_6ch_planar"][0])
    got = _decode_all("rgb_6ch_orientation6")  # EXIF/TIFF orientation 6: rotate 90 degrees clockwise
    np.testing.assert_array_equal(got["rgb_6ch_orientation6/ANY_DATA/UINT8"],
                                  np.rot90(R.CASES["rgb_6ch_orientation6"][0], -1))


@pytest.mark.parametrize("libtiff", [True, False])
@pytest.mark.parametrize("shape", [(64, 80, 3), (9, 5, 3)])
def test_lzw_strips_match_pil(shape, libtiff, monkeypatch):
    """LZW (codes growing 9 -> 12 bits, table resets) on files PIL writes; read by this module,
    through PIL's libtiff binding and by the Python decoder it falls back to without libtiff."""
    if not libtiff:
        from PIL import features
        check = features.check
        monkeypatch.setattr(features, "check", lambda name: False if name == "libtiff" else check(name))
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, shape, dtype=np.uint8)
    a[: shape[0] // 2] //= 32  # some repetition too
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, "TIFF", compression="tiff_lzw")
    b = buf.getvalue()
    lay = tiff.layout(b)
    assert lay.compression == 5
    np.testing.assert_array_equal(tiff.decode(b, lay), a)


def test_plain_tiffs_stay_with_pil():
    rgb = np.zeros((4, 5, 3), np.uint8)
    assert tiff.reads_here(R.write_tiff(rgb)) is None
    assert tiff.reads_here(R.write_tiff(np.zeros((4, 5, 4), np.uint8), extra=2)) is None
    assert tiff.reads_here(R.write_tiff(np.zeros((4, 5, 6), np.uint8))) is not None
    assert tiff.reads_here(b"II*\x00garbage") is None


def test_peek_image_shape_counts_every_sample_for_any_data():
    b = R.write_tiff(np.zeros((7, 3, 6), np.uint8))
    assert D.peek_image_shape(b, types.ANY_DATA) == (7, 3, 6)
    assert D.peek_image_shape(b) == (7, 3, 3)


def test_two_samples_give_the_first():
    a = R.CASES["gray16_2ch"][0]
    got = _decode_all("gray16_2ch")
    np.testing.assert_array_equal(got["gray16_2ch/GRAY/UINT16"], a[..., :1])
    np.testing.assert_array_equal(got["gray16_2ch/RGB/UINT16"], np.repeat(a[..., :1], 3, axis=2))


def test_bombs_and_broken_files():
    """A Deflate strip inflating to 64 MB for a 4x4x6 image is read only as far as the pixels need;
    a strip cut short is a DataError naming the sample."""
    b = bytearray(R.write_tiff(np.zeros((4, 4, 6), np.uint8), compression=8))
    lay = tiff.layout(bytes(b))
    bomb = zlib.compress(bytes(64 << 20), 9)
    big = bytes(b) + bomb
    big = big.replace(struct.pack("<HHII", 273, 4, 1, lay.offsets[0]), struct.pack("<HHII", 273, 4, 1, len(b)))
    big = big.replace(struct.pack("<HHII", 279, 4, 1, lay.counts[0]), struct.pack("<HHII", 279, 4, 1, len(bomb)))
    assert tiff.layout(big).counts == (len(bomb),)
    np.testing.assert_array_equal(D.decode_image(torch.frombuffer(bytearray(big), dtype=torch.uint8),
                                                 types.ANY_DATA), np.zeros((4, 4, 6), np.uint8))
    cut = R.write_tiff(np.ones((8, 8, 6), np.uint8))
    cut = cut.replace(struct.pack("<HHII", 279, 4, 1, 8 * 8 * 6), struct.pack("<HHII", 279, 4, 1, 100))
    with pytest.raises(DataError, match="truncated"):
        D.decode_image(torch.frombuffer(bytearray(cut), dtype=torch.uint8), types.ANY_DATA, source="cut.tif")
