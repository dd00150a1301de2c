"""PNG decoding (io.png): corrupt files are DataErrors, never a crash (torchvision 0.29's
decode_png SIGSEGVs on them); valid files decode to torchvision's (libpng's) pixels, GRAY to DALI
2.4's; libpng's per-image warnings are gone."""
from __future__ import annotations

import io
import re
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch
import torchvision.io  # noqa: F401  (registers torch.ops.image; torch_dali imports torchvision only when it decodes)
from PIL import Image

from torch_dali import types
from torch_dali.errors import DataError
from torch_dali.io import decode as D
from torch_dali.io import png as P

try:
    from tests._isolate import ROOT, Died, run_isolated
    from tests.corruption import corrupt_png
except ImportError:
    from _isolate import ROOT, Died, run_isolated  # type: ignore[no-redef]
    from corruption import corrupt_png  # type: ignore[no-redef]

DAMAGE = ("idat-crc", "ihdr-crc", "zlib-checksum", "zlib-data", "filter", "truncated")
TV = torch.ops.image  # torchvision's libpng binding: the reference for valid files


def _t(b: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(b), dtype=torch.uint8)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _raw_png(a: np.ndarray, depth: int, ctype: int, interlace: bool = False, extra: bytes = b"") -> bytes:
    """A PNG of `a` (H, W, C) as stored samples, filter 0; Adam7-interlaced on request."""
    h, w = a.shape[:2]

    def rows(sub: np.ndarray) -> bytes:
        if sub.size == 0:
            return b""
        flat = sub.astype(">u2").view(np.uint8) if depth == 16 else sub.astype(np.uint8)
        flat = flat.reshape(sub.shape[0], -1)
        return b"".join(b"\0" + r.tobytes() for r in flat)

    if interlace:
        passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]
        raw = b"".join(rows(a[y0::dy, x0::dx]) for y0, x0, dy, dx in passes)
    else:
        raw = rows(a)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, int(interlace))
    return (P.SIGNATURE + _chunk(b"IHDR", ihdr) + extra + _chunk(b"IDAT", zlib.compress(raw))
            + _chunk(b"IEND", b""))


def _enc(im: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG", **kw)
    return buf.getvalue()


def _exif(orientation: int) -> bytes:
    ifd = struct.pack("<HHHIHH", 1, 0x0112, 3, 1, orientation, 0) + b"\0\0\0\0"
    return b"II*\0" + struct.pack("<I", 8) + ifd


# -- corrupt files: errors, in a child process -----------------------------------------------------

def _decode_request(req: list) -> str:
    """Child side: decodes corrupt_png(damage) with one entry point; what happened, as text."""
    damage, entry = req
    data = _t(corrupt_png(damage))
    try:
        if entry == "image":
            D.decode_image(data, source="x.png")
        elif entry == "gray":
            D.decode_image(data, types.GRAY, source="x.png")
        elif entry == "crop":
            D.decode_image_crop(data, lambda h, w: (0, 0, h // 2, w // 2), source="x.png")
        else:
            D.decode_chw(data, types.ANY_DATA, source="x.png")
        return "decoded"
    except DataError as e:
        return f"DataError: {e}"


def test_corrupt_pngs_are_data_errors_not_crashes():
    reqs = [[d, e] for d in DAMAGE for e in ("image", "gray", "crop", "chw")]
    got = run_isolated("tests.test_data_png:_decode_request", reqs)
    for (damage, entry), r in zip(reqs, got):
        assert not isinstance(r, Died), (damage, entry, r)
        assert r.startswith("DataError: ImageDecoder") and "cannot decode x.png" in r, (damage, entry, r)
    reasons = {d: got[reqs.index([d, "image"])] for d in DAMAGE}
    assert "IDAT' at byte 33 fails its CRC check" in reasons["idat-crc"]
    assert "IHDR' at byte 8 fails its CRC check" in reasons["ihdr-crc"]
    assert "truncated" in reasons["truncated"]


# -- valid files: torchvision's pixels -------------------------------------------------------------

def _valid() -> dict[str, bytes]:
    rng = np.random.default_rng(3)
    rgb = Image.fromarray(rng.integers(0, 256, (19, 27, 3), dtype=np.uint8))
    a16 = rng.integers(0, 65536, (19, 27, 4), dtype=np.uint16)
    c = {m: _enc(rgb.convert(m)) for m in ("RGB", "RGBA", "L", "LA", "1")}
    c["P"] = _enc(rgb.convert("P", palette=Image.ADAPTIVE, colors=40))
    c["P-trns"] = _enc(rgb.convert("P", palette=Image.ADAPTIVE, colors=32), transparency=3)
    c["P-4bit"] = _enc(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), bits=4)
    c["L-trns"] = _enc(rgb.convert("L"), transparency=7)
    c["RGB-trns"] = _enc(rgb, transparency=(1, 2, 3))
    for d in (2, 4):  # packed gray samples, 32 a row
        g = rng.integers(0, 2 ** d, (19, 32), dtype=np.uint8)
        packed = np.packbits(np.unpackbits(g[..., None], axis=2)[..., 8 - d:].reshape(19, -1), axis=1)
        raw = b"".join(b"\0" + r.tobytes() for r in packed)
        c[f"gray-{d}bit"] = (P.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", 32, 19, d, 0, 0, 0, 0))
                             + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))
    c["gray16"] = _raw_png(a16[..., :1], 16, 0)
    c["la16"] = _raw_png(a16[..., :2], 16, 4)
    c["rgb16"] = _raw_png(a16[..., :3], 16, 2)
    c["rgba16"] = _raw_png(a16, 16, 6)
    c["rgb-interlaced"] = _raw_png(np.asarray(rgb), 8, 2, interlace=True)
    c["rgb16-interlaced"] = _raw_png(a16[..., :3], 16, 2, interlace=True)
    for o in (1, 3, 6, 8):
        c[f"exif-{o}"] = _enc(rgb, exif=b"Exif\0\0" + _exif(o))
    return c


VALID = _valid()


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_pngs_decode_to_torchvisions_pixels(name):
    b = VALID[name]
    for output_type, mode in ((types.RGB, 3), (types.ANY_DATA, 0)):
        if output_type == types.ANY_DATA and b[25] == 3:
            mode = 3  # a palette is expanded
        ref = TV.decode_png(_t(b), mode, True).permute(1, 2, 0)
        for dtype in (ref.dtype, torch.uint8):
            got = D.decode_image(_t(b), output_type, dtype=dtype)
            assert torch.equal(got, D.convert_range(ref, dtype)), (name, output_type, dtype)
    assert D.peek_image_shape(b) == tuple(D.decode_image(_t(b)).shape)


@pytest.mark.parametrize("rgb,gamma,gray", [  # DALI 2.4's GRAY, solid 4x2 PNGs
    ((200, 100, 50), None, 124), ((200, 100, 50), b"gAMA45455", 137), ((200, 100, 50), b"sRGB", 137),
    ((200, 100, 50), b"gAMA220000", 119), ((12, 200, 240), b"gAMA45455", 176),
    ((12, 200, 240), b"gAMA220000", 120), ((90, 30, 160), b"sRGB", 78), ((90, 30, 160), b"gAMA220000", 55),
    ((90, 30, 160), b"gAMA100000", 62),  # gamma within 5% of 1: as without
])
def test_gray_from_color_matches_dali(rgb, gamma, gray):
    b = _enc(Image.new("RGB", (4, 2), rgb))
    if gamma == b"sRGB":
        b = b[:33] + _chunk(b"sRGB", b"\0") + b[33:]
    elif gamma is not None:
        b = b[:33] + _chunk(b"gAMA", struct.pack(">I", int(gamma[4:]))) + b[33:]
    assert D.decode_image(_t(b), types.GRAY).flatten().tolist() == [gray] * 8


def test_gray_keeps_gray_pixels_and_16_bits():
    a = np.array([[[7, 7, 7], [1000, 2000, 3000]]], dtype=np.uint16)
    got = D.decode_image(_t(_raw_png(a, 16, 2)), types.GRAY, dtype=torch.uint16).flatten().tolist()
    assert got == [7, (9797 * 1000 + 19234 * 2000 + 3737 * 3000 + 16384) >> 15]  # DALI 2.4: 1882


def test_libpng_warnings_are_not_printed(tmp_path):
    """libpng printed "iCCP: ..." warnings once per image (1,648 lines in one run)."""
    b = _enc(Image.new("RGB", (4, 2), (1, 2, 3)))
    prof = bytearray(132)
    prof[36:40] = b"acsp"
    b = b[:33] + _chunk(b"iCCP", b"x\0\0" + zlib.compress(bytes(prof))) + b[33:]
    script = ("import sys, torch\nfrom torch_dali.io import decode as D\n"
              f"b = torch.frombuffer(bytearray({b!r}), dtype=torch.uint8)\n"
              "for _ in range(3): assert D.decode_image(b).shape == (2, 4, 3)\n")
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert "libpng" not in r.stderr and "iCCP" not in r.stderr, r.stderr


def test_pil_decompression_bomb_limit_does_not_apply(monkeypatch):
    """max_pixels is the limit: PIL's global one (179M pixels by default, here 10) must not refuse
    an image below it (torchvision decoded those)."""
    from PIL import Image as PILImage
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 10)
    b = _enc(Image.new("RGB", (8, 6), (1, 2, 3)))
    assert D.decode_image(_t(b)).shape == (6, 8, 3)
    assert D.decode_image(_t(_raw_png(np.ones((6, 8, 3), np.uint16), 16, 2)), dtype=torch.uint16).shape == (6, 8, 3)


def test_palette_transparency_warns_nothing():
    a = np.array([[[9, 8, 7], [1, 2, 3], [200, 0, 0], [0, 0, 0]]] * 2, np.uint8)
    b = _enc(Image.fromarray(a).convert("P", palette=Image.ADAPTIVE, colors=4))
    k = b.index(b"IDAT") - 4
    b = b[:k] + _chunk(b"tRNS", b"\x00\x80\x40") + b[k:]  # alphas of several entries: PIL warned
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        assert D.decode_image(_t(b)).shape == (2, 4, 3)


def _tall_request(_: object) -> str:
    """Child side (8 GiB cap): decodes an 11 x 15,990,793 16-bit RGBA PNG whose stream ends after
    50 whole rows (89 bytes each): PIL decoded that as a complete image, the rest zeros."""
    import resource
    import time
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    ihdr = struct.pack(">IIBBBBB", 11, 15_990_793, 16, 6, 0, 0, 0)
    b = P.SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0" * 89 * 50)) + _chunk(b"IEND", b"")
    t0 = time.perf_counter()
    try:
        D.decode_image(_t(b), types.GRAY, dtype=torch.uint16, source="tall.png")
        return "decoded"
    except DataError as e:
        return f"{time.perf_counter() - t0:.3f} {e}"


def test_tiny_png_declaring_a_huge_image_is_refused_before_decoding():
    """A fuzzed 869-byte PNG of 11 x 15,990,793 16-bit RGBA pixels (under max_pixels) decoded in
    6-25 s to 10.5 GB of memory: PIL allocated the image, then filled what the short stream held
    (DALI 2.4 refuses such files). Deflate inflates a byte to at most 1032, so a header whose rows
    need more than that of the IDAT chunks is refused from the chunk walk."""
    (got,) = run_isolated("tests.test_data_png:_tall_request", [0], timeout=60)
    assert not isinstance(got, Died), got
    seconds, _, msg = got.partition(" ")
    assert float(seconds) < 0.5 and re.search(r"cannot decode tall\.png: PNG image data is too short: \d+ "
                                              r"compressed bytes cannot hold the 1423180577 bytes", msg), got


@pytest.mark.parametrize("name", sorted(VALID))
def test_raw_size_is_what_the_idat_stream_inflates_to(name):
    b, pos, idat = VALID[name], 8, b""
    while pos + 12 <= len(b):
        n, kind = struct.unpack_from(">I4s", b, pos)
        idat += b[pos + 8:pos + 8 + n] if kind == b"IDAT" else b""
        pos += 12 + n
    assert P.raw_size(b) == len(zlib.decompress(idat))


def test_gray_of_16_bit_color_is_computed_in_bands():
    """GRAY of a 16-bit color PNG made int64 work arrays of the whole image: 47 bytes a pixel
    traced here (189 MB for 4M pixels; 12 GB at max_pixels) and 3.3 s for 16M pixels; in bands
    of rows, under 20 (the image itself is 6), with the same values."""
    import tracemalloc
    w, h = 1000, 4000
    a = (np.arange(w * 3, dtype=np.uint32) * 2654435761 % 65536).astype(">u2")
    ihdr = struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)
    b = (P.SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress((b"\0" + a.tobytes()) * h, 1))
         + _chunk(b"IEND", b""))
    tracemalloc.start()
    try:
        got = P.decode(b, "gray")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * w * h, peak
    row = a.astype(np.uint16).reshape(1, w, 3)
    assert np.array_equal(got, np.broadcast_to(P._gray_band(row, 0), (h, w, 1)))
