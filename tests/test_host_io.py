"""io.host_io: the C batch reader and header parser answer exactly what the Python code does."""
from __future__ import annotations

import ctypes
import errno
import io
import mmap
import os
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from torch_dali._native import build as _cbuild
from torch_dali.errors import DataError
from torch_dali.io import decode as D
from torch_dali.io import host_io as H
from torch_dali.io import jpeg_roi as R
from torch_dali.ops.readers._storage import read_file_bytes

PHOTOS = Path(D.__file__).resolve().parents[1] / "data" / "photos"
C_SKIP = _cbuild.skip_reason(H.LIB)  # raises where a C compiler works but the helper did not build
C_OK = not C_SKIP
needs_c = pytest.mark.skipif(not C_OK, reason=f"host_io unavailable: {C_SKIP}")


@pytest.fixture(params=["c", "python"])
def mode(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on the C library and on the pure-Python fallback."""
    if request.param == "c":
        if not C_OK:
            pytest.skip(f"host_io unavailable: {H.unavailable_reason()}")
    else:
        monkeypatch.setattr(H.LIB, "lib", None)
        monkeypatch.setattr(H.LIB, "tried", True)
    return request.param


# -- image data ------------------------------------------------------------------------------------

def _t(b: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(b), dtype=torch.uint8) if b else torch.empty(0, dtype=torch.uint8)


def _img(mode_: str = "RGB", h: int = 24, w: int = 32) -> Image.Image:
    rng = np.random.default_rng(h * 31 + w)
    a = rng.integers(0, 255, (h, w, 4), dtype=np.uint8)
    if mode_ == "I;16":
        return Image.fromarray(rng.integers(0, 65535, (h, w), dtype=np.uint16))
    return Image.fromarray(a[..., :3]).convert(mode_)


def _save(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _tiff(order: bytes, entries: list[tuple[int, int, int]], ifd: int = 8) -> bytes:
    """A TIFF (EXIF) block with IFD0 = `entries` of (tag, type, value), in byte order II or MM."""
    e = "<" if order == b"II" else ">"
    head = order + struct.pack(e + "HI", 42, ifd)
    body = struct.pack(e + "H", len(entries))
    for tag, typ, val in entries:
        body += struct.pack(e + "HHIHH", tag, typ, 1, val, 0)
    return head + b"\0" * (ifd - len(head)) + body + struct.pack(e + "I", 0)


def _exif_jpeg(tiff: bytes, **kw) -> bytes:
    return _save(_img(), "JPEG", exif=b"Exif\0\0" + tiff, **kw)


def _patch(b: bytes, old: bytes, new: bytes) -> bytes:
    i = b.index(old)
    return b[:i] + new + b[i + len(old):]


def _segment(b: bytes, marker: bytes) -> bytes:
    """The first JPEG segment with this marker, marker and length included."""
    i = b.index(marker)
    return b[i:i + 2 + struct.unpack_from(">H", b, i + 2)[0]]


def _chunk(b: bytes, kind: bytes) -> bytes:
    """The first PNG chunk of this type: length, type, data and CRC."""
    i = b.index(kind) - 4
    return b[i:i + 12 + struct.unpack_from(">I", b, i)[0]]


def _sof_patched(marker: int, precision: int | None = None, h: int | None = None,
                 w: int | None = None) -> bytes:
    """A baseline JPEG whose SOF0 is rewritten (marker byte, precision, size): header-only cases."""
    b = bytearray(_save(_img(), "JPEG"))
    i = b.index(b"\xff\xc0")
    b[i + 1] = marker
    if precision is not None:
        b[i + 4] = precision
    if h is not None:
        b[i + 5:i + 7] = struct.pack(">H", h)
    if w is not None:
        b[i + 7:i + 9] = struct.pack(">H", w)
    return bytes(b)


def _png_with_size(w: int, h: int, ctype: int = 2, depth: int = 8) -> bytes:
    b = bytearray(_save(_img(), "PNG"))
    b[16:26] = struct.pack(">IIBB", w, h, depth, ctype)
    return bytes(b)


def _corpus() -> dict[str, bytes]:
    c = {f"photo-{p.name}": p.read_bytes() for p in sorted(PHOTOS.iterdir())}
    for order in (b"II", b"MM"):
        k, e = order.decode(), "<" if order == b"II" else ">"
        for o in range(1, 9):
            c[f"exif-{k}-{o}"] = _exif_jpeg(_tiff(order, [(0x0100, 3, 32), (0x0112, 3, o)]))
            c[f"png-exif-{k}-{o}"] = _save(_img(), "PNG", exif=b"Exif\0\0" + _tiff(order, [(0x0112, 3, o)]))
        c[f"exif-{k}-bad-value"] = _exif_jpeg(_tiff(order, [(0x0112, 3, 9)]))
        c[f"exif-{k}-long-type"] = _exif_jpeg(_tiff(order, [(0x0112, 4, 6)]))
        c[f"exif-{k}-ifd-far"] = _exif_jpeg(_tiff(order, [])[:4] + b"\xff\xff\xff\xf0" + b"\0" * 30)
        c[f"exif-{k}-ifd-at-end"] = _exif_jpeg(order + struct.pack(e + "HI", 42, 8))
        c[f"exif-{k}-count-too-big"] = _exif_jpeg(_tiff(order, [(0x0112, 3, 6)])[:8] + b"\xff\xff")
        c[f"exif-{k}-ifd-offset-20"] = _exif_jpeg(_tiff(order, [(0x0112, 3, 3)], ifd=20))
    for typ, order, value in ((4, b"MM", b"\0\0\0\6"), (1, b"II", b"\6\0\0\0"), (9, b"II", b"\6\0\0\0")):
        e = "<" if order == b"II" else ">"  # the value field as that type stores it
        block = order + struct.pack(e + "HIH", 42, 8, 1) + struct.pack(e + "HHI", 0x0112, typ, 1) + value + b"\0" * 4
        c[f"exif-{order.decode()}-type{typ}-stored"] = _exif_jpeg(block)
    plain = _save(_img(), "JPEG")
    sos = plain.index(b"\xff\xda")
    c["exif-after-sof"] = plain[:sos] + _segment(c["exif-II-6"], b"\xff\xe1") + plain[sos:]
    pil_exif = Image.Exif()
    pil_exif[0x0112] = 6
    c["exif-pil"] = _save(_img(), "JPEG", exif=pil_exif)
    c["exif-bad-order"] = _exif_jpeg(b"XX\0\x2a\0\0\0\x08" + b"\0" * 20)
    c["exif-short"] = _exif_jpeg(b"II\x2a\0")
    app1 = _segment(c["exif-II-6"], b"\xff\xe1")
    c["exif-twice"] = _patch(c["exif-II-6"], app1, app1 + _segment(c["exif-MM-3"], b"\xff\xe1"))  # last wins
    c["app1-not-exif"] = _patch(_save(_img(), "JPEG"), b"\xff\xdb", b"\xff\xe1\x00\x08XMP\0\0\0\xff\xdb")
    c["gray"] = _save(_img("L"), "JPEG")
    c["cmyk"] = _save(_img("CMYK"), "JPEG")
    c["progressive"] = _save(_img(), "JPEG", progressive=True)
    c["444"] = _save(_img(), "JPEG", subsampling=0)
    for m in (0xC1, 0xC2, 0xC3, 0xC5, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
        c[f"sof-{m:x}"] = _sof_patched(m)
    c["sof-12bit"] = _sof_patched(0xC0, precision=12)
    c["sof-zero-height"] = _sof_patched(0xC0, h=0)
    c["sof-zero-width"] = _sof_patched(0xC0, w=0)
    c["sof-huge"] = _sof_patched(0xC0, h=65535, w=65535)
    base = _save(_img(), "JPEG")
    sof = _segment(base, b"\xff\xc0")
    for m in (b"\xc4", b"\xc8", b"\xcc"):  # DHT, JPG, DAC: in the SOF range but not frame headers
        seg = b"\xff" + m + b"\x00\x08\x08\x00\x07\x00\x09\x03"  # would read as a 7x9 frame
        c[f"seg-{m.hex()}-before-sof"] = _patch(base, sof, seg + sof)
    c["fill-bytes"] = _patch(base, b"\xff\xdb", b"\xff\xff\xff\xdb")
    c["rst-tem-soi"] = base[:2] + b"\xff\xd0\xff\x01\xff\xd8\xff\xd7" + base[2:]
    # bytes that are not markers: libjpeg skips them (a warning), so the size must still be read
    c["stray-byte-after-soi"] = base[:2] + b"\x00" + base[2:]
    c["ff00-after-soi"] = base[:2] + b"\xff\x00\x00\xff" + base[2:]
    c["garbage-before-sof"] = _patch(base, sof, b"\x12\xff\x00\x34\xff\xff\x00\x56" + sof)
    c["garbage-with-fake-sof"] = _patch(base, sof, b"\x00\xc0\x00\x11\x08\x99\x99\x99\x99" + sof)
    c["seg-len-0"] = base[:2] + b"\xff\xe0\x00\x00" + base[2:]
    c["only-garbage"] = base[:2] + bytes(range(0, 255, 3)) * 3
    c["sos-first"] = base[:2] + b"\xff\xda\x00\x02" + base[2:]
    c["eoi-first"] = base[:2] + b"\xff\xd9\x00\x02" + base[2:]
    c["soi-only"] = b"\xff\xd8"
    c["soi-eoi"] = b"\xff\xd8\xff\xd9"
    c["sof-short-segment"] = b"\xff\xd8\xff\xc0\x00\x05\x08\x00\x10\x00"
    c["sof-seg-len-0"] = b"\xff\xd8\xff\xc0\x00\x00\x08\x00\x10\x00\x10\x03"
    c["sof-minimal"] = b"\xff\xd8\xff\xc0\x00\x08\x08\x00\x10\x00\x20\x03"  # body of exactly 6 bytes
    c["sof-minimal-cut"] = c["sof-minimal"][:-1]
    c["seg-len-1"] = b"\xff\xd8\xff\xe0\x00\x01" + base[2:]
    c["png-rgb"] = _save(_img(), "PNG")
    c["png-rgba"] = _save(_img("RGBA"), "PNG")
    c["png-gray"] = _save(_img("L"), "PNG")
    c["png-la"] = _save(_img("LA"), "PNG")
    c["png-palette"] = _save(_img("P"), "PNG")
    c["png-1bit"] = _save(_img("1"), "PNG")
    c["png-16bit"] = _save(_img("I;16"), "PNG")
    for order in (b"II", b"MM"):  # the orientation entry ends the block: no next-IFD offset
        t = _tiff(order, [(0x0112, 3, 8)])[:-4]
        c[f"exif-{order.decode()}-minimal"] = _exif_jpeg(t)
        c[f"png-exif-{order.decode()}-minimal"] = (c["png-rgb"][:33] + struct.pack(">I", len(t)) + b"eXIf" + t
                                                   + b"\0" * 4 + c["png-rgb"][33:])
    c["png-bad-ctype"] = _png_with_size(32, 24, ctype=5)
    c["png-zero-width"] = _png_with_size(0, 24)
    c["png-huge"] = _png_with_size(2**31 - 1, 2**31 - 1)
    c["png-over-int32"] = _png_with_size(2**31, 5)
    c["png-max-uint32"] = _png_with_size(32, 2**32 - 1)
    c["png-no-ihdr"] = _patch(_save(_img(), "PNG"), b"IHDR", b"IHDX")
    c["png-exif-renamed"] = _patch(c["png-exif-II-6"], b"eXIf", b"eXIX")
    exif_chunk = _chunk(c["png-exif-II-6"], b"eXIf")
    no_exif = _patch(c["png-exif-II-6"], exif_chunk, b"")
    iend = _chunk(no_exif, b"IEND")
    c["png-exif-after-idat"] = _patch(no_exif, iend, exif_chunk + iend)
    c["png-huge-chunk"] = c["png-rgb"][:33] + b"\xff\xff\xff\xf0tEXt" + c["png-rgb"][41:]
    c["gif"] = _save(_img(), "GIF")
    c["bmp"] = _save(_img(), "BMP")
    c["zero-bytes"] = b""
    c["one-byte"] = b"\xff"
    c["garbage"] = bytes(np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8))
    c["png-sig-only"] = b"\x89PNG\r\n\x1a\n"
    for k in [k for k in c if k.startswith(("exif-II-6", "png-exif-MM-3", "photo-astronaut"))]:
        for n in (1, 3, 8, 20, 40, 100, 300):
            c[f"{k}-trunc{n}"] = c[k][:n]
    return c


CORPUS = _corpus()


def _expected(b: bytes) -> D.ImageInfo | None:
    """What image_infos must answer: peek_image_info's JPEG/PNG result; None where it raises, where
    the data is some other format, or where a size does not fit an int32."""
    if not (b[:2] == b"\xff\xd8" or b[:8] == b"\x89PNG\r\n\x1a\n"):
        return None
    try:
        info = D.peek_image_info(b)
    except DataError:
        return None
    return info if max(info.height, info.width) < 2**31 else None


def test_corpus_is_interesting() -> None:
    got = {k: _expected(v) for k, v in CORPUS.items()}
    for kind in ("exif", "png-exif"):
        for o in ("II", "MM"):
            assert [got[f"{kind}-{o}-{i}"].orientation for i in range(1, 9)] == list(range(1, 9))
    assert got["exif-pil"].orientation == 6 and got["exif-twice"].orientation == 3
    # DALI 2.4 reads the value field's first 16 bits whatever the type (measured: BYTE, SHORT,
    # SSHORT, LONG, SLONG in both byte orders): a big-endian LONG 6 is 0 there, so no turn
    assert [got[f"exif-{o}-long-type"].orientation for o in ("II", "MM")] == [6, 6]
    assert got["exif-after-sof"].orientation == 6  # between the frame header and the scan: DALI 2.4 turns it
    assert [got[k].orientation for k in ("exif-MM-type4-stored", "exif-II-type1-stored",
                                         "exif-II-type9-stored")] == [1, 6, 6]
    assert got["cmyk"].channels == 4 and got["gray"].channels == 1 and got["progressive"].progressive
    assert got["png-16bit"].bit_depth == 16 and got["png-la"].channels == 2
    assert got["png-palette"].channels == 3
    assert got["sof-huge"].height == 65535 and got["png-huge"].width == 2**31 - 1
    assert D.peek_image_info(CORPUS["png-over-int32"]).width == 2**31  # valid for Python, None here
    # DALI 2.4 turns a PNG by an eXIf after the image data too (measured: decode and peek)
    assert got["png-exif-after-idat"].orientation == 6 and got["png-exif-renamed"].orientation == 1
    assert got["exif-MM-minimal"].orientation == 8 and got["png-exif-II-minimal"].orientation == 8
    assert got["sof-minimal"].channels == 3 and got["sof-minimal-cut"] is None
    assert got["app1-not-exif"] is not None and got["exif-MM-ifd-offset-20"].orientation == 3
    for k in ("zero-bytes", "garbage", "sof-zero-height", "only-garbage", "sos-first", "png-bad-ctype",
              "png-no-ihdr", "exif-II-6-trunc100"):
        assert got[k] is None, k
    for k in ("stray-byte-after-soi", "ff00-after-soi", "garbage-before-sof", "garbage-with-fake-sof",
              "seg-len-0"):
        assert (got[k].height, got[k].width) == (24, 32), k


@pytest.mark.skipif(not R.available(), reason=f"jpeg_roi (libjpeg) unavailable: {R.unavailable_reason()}")
def test_jpeg_sizes_are_the_ones_libjpeg_decodes(mode: str) -> None:
    """Wherever libjpeg reads a frame header (ignoring its warnings, as torchvision's decoder does),
    the parsers read the same size: the max_pixels check sees what would be decoded."""
    names = [k for k, v in CORPUS.items() if v[:2] == b"\xff\xd8"]
    got = H.image_infos([_t(CORPUS[k]) for k in names])
    checked = 0
    for k, info in zip(names, got):
        try:
            h, w = R.jpeg_header(CORPUS[k], lenient=True)[:2]
        except DataError:
            continue
        assert info is not None and (info.height, info.width) == (h, w), k
        checked += 1
    assert checked > 40


def _guarded(mode: str, bs: list[bytes]) -> list[D.ImageInfo | None]:
    """image_infos of each buffer ending flush against an unreadable page (C only)."""
    if mode == "c":
        return [H.image_infos([_guard().place(b)])[0] for b in bs]
    return [H._py_info(_t(b)) for b in bs]


def test_image_infos_corpus(mode: str) -> None:
    names = list(CORPUS)
    expected = [_expected(CORPUS[k]) for k in names]
    got = H.image_infos([_t(CORPUS[k]) for k in names])
    for k, g, e in zip(names, got, expected):
        assert g == e, k
    assert _guarded(mode, [CORPUS[k] for k in names]) == expected


def test_image_infos_every_prefix(mode: str) -> None:
    for k in ("exif-MM-5", "exif-II-2", "exif-II-ifd-offset-20", "png-exif-II-8", "png-exif-MM-7",
              "photo-chelsea.jpg", "sof-c2", "png-16bit", "fill-bytes", "rst-tem-soi", "sof-minimal",
              "exif-II-minimal", "exif-MM-minimal", "png-exif-MM-minimal"):
        b = CORPUS[k][:1200]
        prefixes = [b[:n] for n in range(len(b) + 1)]
        expected = [_expected(p) for p in prefixes]
        assert H.image_infos([_t(p) for p in prefixes]) == expected, k
        assert _guarded(mode, prefixes) == expected, k


def test_image_infos_views_and_odd_tensors(mode: str) -> None:
    blobs = [CORPUS["exif-II-6"], CORPUS["png-rgb"], CORPUS["cmyk"]]
    slab = _t(b"".join(blobs))
    views = list(torch.split(slab, [len(b) for b in blobs]))
    assert H.image_infos(views) == [_expected(b) for b in blobs]
    good = _t(CORPUS["gray"])
    strided = torch.stack([good, good], 1).reshape(-1)[::2]
    assert torch.equal(strided, good) and not strided.is_contiguous()
    odd = [strided, good.to(torch.int16), good.reshape(1, -1), good.clone()]
    assert H.image_infos(odd) == [None, None, None, _expected(CORPUS["gray"])]
    assert H.image_infos([]) == []


# -- fuzz: out-of-bounds reads hit a guard page ----------------------------------------------------

class _Guarded:
    """A buffer whose end is followed by an unreadable page: data placed flush against it makes
    any read past the end a segfault instead of a silent wrong answer."""

    def __init__(self, size: int = 1 << 18) -> None:
        page = mmap.PAGESIZE
        self.size = -(-size // page) * page
        self.m = mmap.mmap(-1, self.size + page)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.m))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if libc.mprotect(addr + self.size, page, 0) != 0:  # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect failed")
        self.t = torch.frombuffer(self.m, dtype=torch.uint8)[:self.size]

    def place(self, b: bytes) -> torch.Tensor:
        start = self.size - len(b)
        self.m[start:self.size] = b
        return self.t[start:]


_GUARD: list[_Guarded] = []


def _guard() -> _Guarded:
    if not _GUARD:
        _GUARD.append(_Guarded())
    return _GUARD[0]


_SEEDS = [CORPUS[k][:2000] for k in ("exif-II-6", "exif-MM-3", "progressive", "png-exif-MM-6", "png-16bit",
                                     "png-palette", "cmyk", "fill-bytes", "photo-astronaut.jpg")]


def _check_one(b: bytes) -> None:
    exp = _expected(b)
    assert H._py_info(_t(b)) == exp
    if C_OK:
        assert H.image_infos([_guard().place(b)]) == [exp]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=400),
                 st.builds(lambda p, b: p + b,
                           st.sampled_from([b"\xff\xd8", b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n"]),
                           st.binary(max_size=300))))
def test_fuzz_random_bytes(b: bytes) -> None:
    _check_one(b)


_BYTE_SPECIALS = st.sampled_from([0x00, 0x01, 0x02, 0x08, 0xC0, 0xC2, 0xC4, 0xD8, 0xD9, 0xDA, 0xE1, 0xFF])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(_SEEDS))),
       st.lists(st.tuples(st.integers(0, 1999), st.one_of(st.integers(0, 255), _BYTE_SPECIALS)), max_size=6),
       st.integers(0, 2000))
def test_fuzz_mutated_headers(seed: int, muts: list[tuple[int, int]], cut: int) -> None:
    b = bytearray(_SEEDS[seed])
    for pos, val in muts:
        if pos < len(b):
            b[pos] = val
    _check_one(bytes(b[:cut]))


# -- read_files ------------------------------------------------------------------------------------

def _same_as_reader(got: torch.Tensor | OSError, path: str) -> None:
    assert isinstance(got, torch.Tensor) and got.dtype == torch.uint8 and got.dim() == 1
    assert torch.equal(got, read_file_bytes(path, "test"))


def test_read_files_normal(mode: str, tmp_path: Path) -> None:
    paths = [str(p) for p in sorted(PHOTOS.iterdir())]
    rng = np.random.default_rng(1)
    for i, n in enumerate((0, 1, 4095, 4096, 4097, 3 << 20)):
        p = tmp_path / f"f{i}.bin"
        p.write_bytes(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        paths.append(str(p))
    (tmp_path / "png.jpg").write_bytes(CORPUS["png-rgb"])  # content decides, not the name
    paths.append(str(tmp_path / "png.jpg"))
    os.symlink(paths[0], tmp_path / "link.jpg")
    paths.append(str(tmp_path / "link.jpg"))
    got = H.read_files(paths)
    assert len(got) == len(paths)
    for g, p in zip(got, paths):
        _same_as_reader(g, p)
    assert got[paths.index(str(tmp_path / "f0.bin"))].numel() == 0
    assert H.image_infos([got[-2]]) == [_expected(CORPUS["png-rgb"])]
    if mode == "c":  # one slab for the batch
        assert len({g.untyped_storage().data_ptr() for g in got if g.numel()}) == 1
    assert H.read_files([]) == []


def test_read_files_errors_in_place(mode: str, tmp_path: Path) -> None:
    good = tmp_path / "good.jpg"
    good.write_bytes(CORPUS["exif-II-6"])
    os.mkfifo(tmp_path / "fifo")  # must not block
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    paths = [str(good), str(tmp_path / "missing.jpg"), str(good), str(tmp_path), str(tmp_path / "fifo"),
             "", str(tmp_path / "dangling"), str(good) + "\0x", str(good / "sub")]
    got = H.read_files(paths)
    _same_as_reader(got[0], str(good))
    _same_as_reader(got[2], str(good))
    codes = [errno.ENOENT, errno.EISDIR, errno.EISDIR, errno.ENOENT, errno.ENOENT, errno.EINVAL,
             errno.ENOTDIR]
    for g, p, code in zip(got[1:2] + got[3:], paths[1:2] + paths[3:], codes):
        assert isinstance(g, OSError) and g.errno == code and g.filename == p, (p, g)
        assert g.strerror
    assert isinstance(got[1], FileNotFoundError) and isinstance(got[3], IsADirectoryError)


def test_read_files_non_utf8_name(mode: str, tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9-\xff.jpg"
    with open(raw, "wb") as f:
        f.write(CORPUS["png-16bit"])
    name = os.fsdecode(raw)  # a str with surrogate escapes
    got = H.read_files([name, raw])
    _same_as_reader(got[0], name)
    assert torch.equal(got[1], got[0])
    assert isinstance(H.read_files([name + "x"])[0], FileNotFoundError)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_read_files_unreadable(mode: str, tmp_path: Path) -> None:
    p = tmp_path / "secret.jpg"
    p.write_bytes(b"x" * 10)
    p.chmod(0)
    try:
        g = H.read_files([str(p)])[0]
        assert isinstance(g, PermissionError) and g.errno == errno.EACCES and g.filename == str(p)
    finally:
        p.chmod(0o644)


class _RacingLib:
    """The real library, but files change between the size pass and the read pass."""

    def __init__(self, lib: ctypes.CDLL, change) -> None:
        self._lib, self._change = lib, change

    def td_file_sizes(self, *a):
        r = self._lib.td_file_sizes(*a)
        self._change()
        return r

    def __getattr__(self, name: str):
        return getattr(self._lib, name)


@needs_c
def test_read_files_grown_and_shrunk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.bin" for i in range(4)]
    for i, p in enumerate(paths):
        p.write_bytes(bytes([i + 1]) * 1000)

    def change() -> None:
        with open(paths[1], "ab") as f:
            f.write(b"more")
        with open(paths[2], "r+b") as f:
            f.truncate(10)
        paths[3].write_bytes(b"")

    monkeypatch.setattr(H.LIB, "lib", _RacingLib(H.LIB.load(), change))
    got = H.read_files([str(p) for p in paths])
    assert [g.numel() for g in got] == [1000, 1004, 10, 0]
    for g, p in zip(got, paths):
        assert bytes(g.numpy()) == p.read_bytes()


def test_env_var_disables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(H.LIB, "lib", None)
    monkeypatch.setattr(H.LIB, "tried", False)
    monkeypatch.setattr(H.LIB, "reason", "")
    monkeypatch.setenv("TORCH_DALI_NO_HOST_IO", "1")
    assert not H.available() and "TORCH_DALI_NO_HOST_IO" in H.unavailable_reason()
    p = tmp_path / "a.jpg"
    p.write_bytes(CORPUS["gray"])
    got = H.read_files([str(p)])
    _same_as_reader(got[0], str(p))
    assert H.image_infos(got) == [_expected(CORPUS["gray"])]


# -- _cbuild ---------------------------------------------------------------------------------------

def test_cbuild_cache_and_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_DALI_EXT_DIR", str(tmp_path / "cache"))
    src = tmp_path / "tiny.c"
    src.write_text("int td_tiny(int x) { return x + 1; }\n")
    try:
        so = _cbuild.build(src)
    except RuntimeError as e:
        pytest.skip(f"no working C compiler: {e}")
    assert so.parent == tmp_path / "cache" and so.name.startswith("tiny-") and so.suffix == ".so"
    assert ctypes.CDLL(str(so)).td_tiny(41) == 42
    assert _cbuild.build(src) == so  # cached
    assert _cbuild.build(src, ["m"]) != so  # the flags are part of the key
    assert [p.name for p in so.parent.iterdir() if p.name.startswith(".")] == []  # no temporaries left
    src.write_text("int td_tiny(int x) { return x + 2 }\n")
    with pytest.raises(RuntimeError, match="compiling tiny.c failed"):
        _cbuild.build(src)
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    src.write_text("int td_tiny2(void) { return 0; }\n")
    with pytest.raises(RuntimeError, match="cannot run the C compiler"):
        _cbuild.build(src)
    with pytest.raises(RuntimeError, match="cannot read the C source"):
        _cbuild.build(tmp_path / "absent.c")


@pytest.mark.parametrize("max_pixels", [10 ** 9, 2000])
def test_mixed_decoder_gpu_candidates_follow_the_per_sample_rule(mode: str, max_pixels: int) -> None:
    """The mixed decoder picks its GPU batch from the C header table (no object per sample); the
    pick and the orientations are those of the per-sample rule: peek_image_info, gpu_decodable,
    max_pixels (on the corpus, C and Python header parsers)."""
    import warnings
    from types import SimpleNamespace

    from torch_dali import fn, pipeline_def
    from torch_dali.io import nvjpeg
    from torch_dali.ops.decoders.image import ImageDecoder

    corpus = _corpus()
    names = sorted(corpus)
    datas = [_t(corpus[k]) for k in names]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        enc = fn.external_source(source=lambda: [datas[0]], batch=True)
        return fn.decoders.image(enc, device="mixed", max_pixels=max_pixels)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pipe = p()
        pipe.build()
    op = next(o for o in pipe.executor.plan.ops.values() if isinstance(o, ImageDecoder))
    want_idx, want_orient, want_hw = [], [], []
    for i, d in enumerate(datas):
        try:
            info = D.peek_image_info(d)
        except DataError:
            continue
        if nvjpeg.gpu_decodable(info) and info.height * info.width <= max_pixels:
            want_idx.append(i)
            want_orient.append(info.orientation)
            want_hw.append([info.height, info.width])
    idx, orient, hw = op._gpu_candidates(datas, SimpleNamespace(sources=names))
    assert [names[i] for i in idx] == [names[i] for i in want_idx]
    assert orient == want_orient
    assert hw.tolist() == want_hw  # the stored sizes the ROI windows are drawn from
    assert 0 < len(idx) < len(names)
    assert any(o != 1 for o in orient)
    # the same samples packed in one buffer (what readers.file / readers.mxnet hand over)
    from torch_dali.packed import PackedSamples
    sizes = [d.numel() for d in datas]
    packed = PackedSamples.make(torch.cat(datas) if datas else torch.empty(0, dtype=torch.uint8),
                                np.cumsum([0] + sizes[:-1]), sizes)
    p_idx, p_orient, p_hw = op._gpu_candidates(packed, SimpleNamespace(sources=names))
    assert (p_idx, p_orient, p_hw.tolist()) == (idx, orient, hw.tolist())
    pipe.shutdown()
