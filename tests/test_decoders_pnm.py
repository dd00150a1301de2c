"""PNM samples as DALI 2.4's CPU decoder gives them (OpenCV's reader, not netpbm's scaling): binary
maps of maxval up to 255 as stored, ASCII ones scaled by `v * 255 // maxval`, maxval 256..65534
the high byte of each sample, maxval 65535 all 16 bits; GRAY of colour by OpenCV's 14-bit weights.
PIL's path scaled every map to maxval (a P6 of maxval 100 came out 2.55x brighter) and kept 8 bits
of 16-bit colour. The digests are sha256 prefixes of DALI 2.4's outputs for these bytes."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from torch_dali import types
from torch_dali.errors import DataError
from torch_dali.io import decode as D

try:
    from tests._dali_digests import DTYPES, OUTPUT_TYPES, digest
except ImportError:
    from _dali_digests import DTYPES, OUTPUT_TYPES, digest  # type: ignore[no-redef]


def _values(magic: int, maxval: int) -> np.ndarray:
    c = 3 if magic in (3, 6) else 1
    v = np.random.default_rng(magic * 100003 + maxval).integers(0, maxval + 1, (5, 7, c))
    v.flat[0] = maxval
    return v


def _pnm(magic: int, maxval: int) -> bytes:
    """A 5x7 map whose first sample is maxval, the rest drawn below it (a comment in the header)."""
    v = _values(magic, maxval)
    head = f"P{magic}\n# made by a test\n7 5\n{maxval}\n".encode()
    if magic in (2, 3):
        return head + "\n".join(" ".join(str(int(x)) for x in row.ravel()) for row in v).encode() + b"\n"
    return head + v.astype(">u2" if maxval > 255 else np.uint8).tobytes()


CASES = [(6, 100), (5, 100), (3, 100), (2, 2), (5, 1000), (3, 4095), (6, 65534), (6, 65535), (2, 65535)]
# (magic, maxval) -> [(output type, dtype, shape, sha256 prefix)] of DALI 2.4's decoders.image
DALI = {
    (6, 100): [
        ("RGB", "u8", (5, 7, 3), "239616f358e165f2"),
        ("GRAY", "u8", (5, 7, 1), "d7d2458238c45534"),
        ("GRAY", "u16", (5, 7, 1), "cf244571d1c4cbcd"),
        ("ANY", "u16", (5, 7, 3), "b4b6e32c47e8ed30"),
        ("YCbCr", "u8", (5, 7, 3), "ed3e627488899794")],
    (5, 100): [
        ("RGB", "u8", (5, 7, 3), "076e7fa9adb1992d"),
        ("GRAY", "u8", (5, 7, 1), "8ea9b7007bd3533b"),
        ("GRAY", "u16", (5, 7, 1), "cfe1fd8217f755aa"),
        ("ANY", "u16", (5, 7, 1), "cfe1fd8217f755aa"),
        ("YCbCr", "u8", (5, 7, 3), "4d045009165e2ddd")],
    (3, 100): [
        ("RGB", "u8", (5, 7, 3), "070b07ef6d0731f5"),
        ("GRAY", "u8", (5, 7, 1), "0503ba1f874f4edd"),
        ("GRAY", "u16", (5, 7, 1), "61e99c0f64316940"),
        ("ANY", "u16", (5, 7, 3), "ca1ab53811560dad"),
        ("YCbCr", "u8", (5, 7, 3), "8dd91e244e842dba")],
    (2, 2): [
        ("RGB", "u8", (5, 7, 3), "b6aa8680ba3d7aac"),
        ("GRAY", "u8", (5, 7, 1), "f09d37de94218afe"),
        ("GRAY", "u16", (5, 7, 1), "9a82ccda13d56921"),
        ("ANY", "u16", (5, 7, 1), "9a82ccda13d56921"),
        ("YCbCr", "u8", (5, 7, 3), "4e848c9eda4d068e")],
    (5, 1000): [
        ("RGB", "u8", (5, 7, 3), "8862a21cf4d48505"),
        ("GRAY", "u8", (5, 7, 1), "2526eb99f4587e20"),
        ("GRAY", "u16", (5, 7, 1), "575fadfe6abffad3"),
        ("ANY", "u16", (5, 7, 1), "575fadfe6abffad3"),
        ("YCbCr", "u8", (5, 7, 3), "f5a0aaec291dbd5c")],
    (3, 4095): [
        ("RGB", "u8", (5, 7, 3), "c53b0de48f634747"),
        ("GRAY", "u8", (5, 7, 1), "2f80ab03e2305dd8"),
        ("GRAY", "u16", (5, 7, 1), "adf7f53b867144fb"),
        ("ANY", "u16", (5, 7, 3), "ba2150b2de1cda9f"),
        ("YCbCr", "u8", (5, 7, 3), "ddca97108cfe3649")],
    (6, 65534): [
        ("RGB", "u8", (5, 7, 3), "1a43a2765eae2cbf"),
        ("GRAY", "u8", (5, 7, 1), "95541005ac60c09f"),
        ("GRAY", "u16", (5, 7, 1), "c7c4855c7c01fc29"),
        ("ANY", "u16", (5, 7, 3), "b2d06270c6af6389"),
        ("YCbCr", "u8", (5, 7, 3), "bf684121718287b4")],
    (6, 65535): [
        ("RGB", "u8", (5, 7, 3), "f487ab8293ab3db2"),
        ("GRAY", "u8", (5, 7, 1), "2028bdb50aeaa771"),
        ("GRAY", "u16", (5, 7, 1), "f35133e61cf6f823"),
        ("ANY", "u16", (5, 7, 3), "5260c3933bfda730"),
        ("YCbCr", "u8", (5, 7, 3), "9c74c95d3cb7e3f5")],
    (2, 65535): [
        ("RGB", "u8", (5, 7, 3), "673abe068ca4442a"),
        ("GRAY", "u8", (5, 7, 1), "514cf7a6edcdd416"),
        ("GRAY", "u16", (5, 7, 1), "f9a3b42515b96c69"),
        ("ANY", "u16", (5, 7, 1), "f9a3b42515b96c69"),
        ("YCbCr", "u8", (5, 7, 3), "a25a6616aa046c10")],
}


@pytest.mark.parametrize("case", CASES, ids=[f"P{m}-{v}" for m, v in CASES])
def test_decoded_as_dali(case):
    data = torch.frombuffer(bytearray(_pnm(*case)), dtype=torch.uint8)
    for ot, dt, shape, want in DALI[case]:
        got = D.decode_image(data, OUTPUT_TYPES[ot], DTYPES[dt])
        assert (tuple(got.shape), digest(got)) == (shape, want), (ot, dt)


def test_samples_follow_opencv_not_maxval():
    """The rule behind the digests, on values: P6 maxval 100 as stored; P3 maxval 100 scaled down
    (int division); P5 maxval 1000 the high byte; P6 maxval 65535 exact."""
    for (magic, maxval), want in (((6, 100), lambda v: v), ((3, 100), lambda v: v * 255 // 100),
                                  ((5, 1000), lambda v: v >> 8), ((6, 65535), lambda v: v)):
        got = D.decode_image(torch.frombuffer(bytearray(_pnm(magic, maxval)), dtype=torch.uint8), types.ANY_DATA,
                             torch.uint16 if maxval == 65535 else torch.uint8)
        np.testing.assert_array_equal(got.numpy(), want(_values(magic, maxval)))


@pytest.mark.parametrize("bad", [b"P6\n7 5\n100\n" + bytes(50), b"P3\n2 1\n255\n1 2 3 4\n", b"P5\n7 5\n70000\n" + bytes(70),
                                 b"P5\n0 5\n255\n"])
def test_short_or_invalid_maps_are_data_errors(bad):
    with pytest.raises(DataError):
        D.decode_image(torch.frombuffer(bytearray(bad), dtype=torch.uint8))
