"""TIFFs DALI 2.4 decodes with OpenCV rather than its libtiff decoder. 8-bit RGBA (unassociated
alpha) files planar, or turned by their orientation tag while adjust_orientation is on: OpenCV's
libtiff RGBA reader premultiplies the colours, (c * a + 127) // 255; torch_dali gave the stored
colours (up to 232 off), which the same file keeps with adjust_orientation=False or stored chunky
and upright. GRAY of a 16-bit RGB file with an orientation tag: OpenCV's 14-bit fixed-point luma
on the 16-bit samples (libtiff's float luma was up to 2 off in uint16). A palette file turned by
its tag: the colormap's high bytes, widened to 16 bits as x * 257 (its 16-bit colormap, as DALI
gives upright palette files, was up to 255 off in uint16). The digests are sha256
prefixes of DALI 2.4's outputs for these bytes."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from reference.tiff_ref import write_tiff
from torch_dali import types
from torch_dali.io import decode as D

try:
    from tests._dali_digests import DTYPES, OUTPUT_TYPES, digest
except ImportError:
    from _dali_digests import DTYPES, OUTPUT_TYPES, digest  # type: ignore[no-redef]


def _rgba(kind: str) -> bytes:
    if kind == "palette_orientation3":
        im = Image.fromarray(np.random.default_rng(10).integers(0, 256, (9, 14), dtype=np.uint8), "P")
        im.putpalette([(i * 37) % 256 for i in range(768)])
        b = io.BytesIO()
        im.save(b, "TIFF", tiffinfo={274: 3})
        return b.getvalue()
    if kind == "rgb16_orientation8":
        return write_tiff(np.random.default_rng(9).integers(0, 65536, (9, 14, 3), dtype=np.uint16), orientation=8)
    a = np.random.default_rng(8).integers(0, 256, (9, 14, 4), dtype=np.uint8)
    if kind == "planar":
        return write_tiff(a, extra=2, planar=2)
    return write_tiff(a, extra=2, orientation=int(kind[-1]))


KINDS = ["planar", "orientation6", "orientation3", "rgb16_orientation8", "palette_orientation3"]
# kind -> [(output type, dtype, adjust_orientation, shape, sha256 prefix)] of DALI 2.4's decoders.image
DALI = {
    "planar": [
        ("RGB", "u8", True, (9, 14, 3), "e3c185debbca3dc5"), ("RGB", "u8", False, (9, 14, 3), "e3c185debbca3dc5"),
        ("GRAY", "u8", True, (9, 14, 1), "b447ab59b0b20c2e"), ("GRAY", "u8", False, (9, 14, 1), "b447ab59b0b20c2e"),
        ("ANY", "u8", True, (9, 14, 4), "79ea883410c1a116"), ("ANY", "u8", False, (9, 14, 4), "79ea883410c1a116"),
        ("YCbCr", "u8", True, (9, 14, 3), "02d871d19d27d573"), ("YCbCr", "u8", False, (9, 14, 3), "02d871d19d27d573")],
    "orientation6": [
        ("RGB", "u8", True, (14, 9, 3), "2084f1d38c2b2cc5"), ("RGB", "u8", False, (9, 14, 3), "5a241c9343c6c821"),
        ("GRAY", "u8", True, (14, 9, 1), "e71f5c48b9b7f96b"), ("GRAY", "u8", False, (9, 14, 1), "17438766be5a687f"),
        ("ANY", "u8", True, (14, 9, 4), "81266098adeaebce"), ("ANY", "u8", False, (9, 14, 4), "e1618b7fa369b39e"),
        ("YCbCr", "u8", True, (14, 9, 3), "b0a678ad844436b2"), ("YCbCr", "u8", False, (9, 14, 3), "f4593412cdb6b66d")],
    "orientation3": [
        ("RGB", "u8", True, (9, 14, 3), "58d0bd5a0c3dd4c0"), ("RGB", "u8", False, (9, 14, 3), "5a241c9343c6c821"),
        ("GRAY", "u8", True, (9, 14, 1), "e3adc6c320a4bf6e"), ("GRAY", "u8", False, (9, 14, 1), "17438766be5a687f"),
        ("ANY", "u8", True, (9, 14, 4), "61004ebb415c46e7"), ("ANY", "u8", False, (9, 14, 4), "e1618b7fa369b39e"),
        ("YCbCr", "u8", True, (9, 14, 3), "944e882674dd9787"), ("YCbCr", "u8", False, (9, 14, 3), "f4593412cdb6b66d")],
    "rgb16_orientation8": [
        ("GRAY", "u16", True, (14, 9, 1), "d26cca65f5c04ac0"), ("GRAY", "u16", False, (9, 14, 1), "1fe0d5837042bd77"),
        ("GRAY", "u8", True, (14, 9, 1), "016e0bd227e59be5"), ("GRAY", "u8", False, (9, 14, 1), "87180be4ef8811ce"),
        ("RGB", "u16", True, (14, 9, 3), "f2d9ba664a80d312"), ("RGB", "u16", False, (9, 14, 3), "6447d1cf525880ee")],
    "palette_orientation3": [
        ("RGB", "u8", True, (9, 14, 3), "61a9936da335fae2"), ("RGB", "u8", False, (9, 14, 3), "e952b3bcd5a6392c"),
        ("RGB", "f32", True, (9, 14, 3), "14469f6cbea9b43f"), ("RGB", "f32", False, (9, 14, 3), "e31af01fba7c108d"),
        ("GRAY", "u8", True, (9, 14, 1), "3ada5b1e2dde2a8d"), ("GRAY", "u8", False, (9, 14, 1), "62ca6aa169595f5a"),
        ("GRAY", "u16", True, (9, 14, 1), "be992f939314dc0b"), ("GRAY", "u16", False, (9, 14, 1), "3a2b9fc107877a1c"),
        ("ANY", "u16", True, (9, 14, 3), "2c7f93ca98dafd77"), ("ANY", "u16", False, (9, 14, 3), "fc02d639c6ed426a"),
        ("YCbCr", "u8", True, (9, 14, 3), "d31d0d7a619d1b6d"), ("YCbCr", "u8", False, (9, 14, 3), "813b75196a832b61")],
}


@pytest.mark.parametrize("kind", KINDS)
def test_decoded_as_dali(kind):
    data = torch.frombuffer(bytearray(_rgba(kind)), dtype=torch.uint8)
    for ot, dt, adjust, shape, want in DALI[kind]:
        got = D.decode_image(data, OUTPUT_TYPES[ot], DTYPES[dt], adjust_orientation=adjust)
        assert (tuple(got.shape), digest(got)) == (shape, want), (ot, adjust)


def test_colours_are_premultiplied_only_where_opencv_reads_the_file():
    a = np.random.default_rng(8).integers(0, 256, (9, 14, 4), dtype=np.uint8).astype(np.int64)
    pre = np.concatenate([(a[..., :3] * a[..., 3:] + 127) // 255, a[..., 3:]], -1)
    planar = torch.frombuffer(bytearray(_rgba("planar")), dtype=torch.uint8)
    np.testing.assert_array_equal(D.decode_image(planar, types.ANY_DATA).numpy(), pre)
    turned = torch.frombuffer(bytearray(_rgba("orientation3")), dtype=torch.uint8)
    np.testing.assert_array_equal(D.decode_image(turned, types.ANY_DATA, adjust_orientation=False).numpy(), a)
    np.testing.assert_array_equal(D.decode_image(turned, types.ANY_DATA).numpy(), pre[::-1, ::-1])
