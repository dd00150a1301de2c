"""FITS image HDUs (untrusted bytes in): headers, plain images and tile-compressed images.

What is read is what DALI 2.4's FITS reader gets from CFITSIO's `fits_read_img` with the HDU's
equivalent type: the physical values (BZERO + BSCALE * stored), in the smallest type that holds
them (BITPIX 16 with BZERO 32768 is uint16, BITPIX 8 with BZERO -128 is int8, a non-integer
scaling of 8/16-bit data is float32 and of 32/64-bit data float64), axes in C order (NAXISn first).

Tile-compressed images (a BINTABLE with ZIMAGE = T, the FITS tiled image convention) are decoded
here for the algorithms astropy and CFITSIO write by default or on request: RICE_1, GZIP_1, GZIP_2
and NOCOMPRESS, with floating-point tiles quantized (NO_DITHER, SUBTRACTIVE_DITHER_1 and _2, with
the convention's random sequence) or stored losslessly (GZIP_COMPRESSED_DATA). PLIO_1 and
HCOMPRESS_1 are refused with a DataError naming them.

A header is data: every size it declares is checked against the file before anything is
allocated (NAXIS at most 999, each NAXISn non-negative, the data inside the file; a compressed
image may not claim more than 1 GiB of pixels and 4096 times its compressed size), and any
problem is a DataError naming the file.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import DataError

BLOCK = 2880
CARD = 80
MAX_AXES = 999
#: a tile-compressed image may decode to at most this many times its compressed size (or 1 GiB)
MAX_EXPANSION = 4096
_MAX_HEADER_BLOCKS = 1 << 16  # a header of 180 MB is not a header

_BITPIX = {8: np.dtype(">u1"), 16: np.dtype(">i2"), 32: np.dtype(">i4"), 64: np.dtype(">i8"),
           -32: np.dtype(">f4"), -64: np.dtype(">f8")}


@dataclass
class Hdu:
    """One HDU's header as read: its keywords, where its data starts and how long it is."""

    cards: dict[str, object]
    data_offset: int
    data_size: int  # bytes, before the padding to 2880
    kind: str  # "PRIMARY", "IMAGE", "BINTABLE", ...
    extra: dict[str, object] = field(default_factory=dict)


_VALUE = re.compile(r"\s*('(?:[^']|'')*'|[^/]*)")


def _parse_value(raw: str) -> object:
    m = _VALUE.match(raw)
    v = (m.group(1) if m else raw).strip()
    if v.startswith("'"):
        return v[1:].rsplit("'", 1)[0].replace("''", "'").rstrip()
    if v == "T":
        return True
    if v == "F":
        return False
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v.replace("D", "E").replace("d", "e"))
    except ValueError:
        return v


def _int_key(cards: dict[str, object], key: str, where: str, default: int | None = None) -> int:
    v = cards.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise DataError(f"{where}: the header's {key} is {'missing' if v is None else repr(v)}, "
                        "not an integer")
    return v


def _read_header(read: Callable[[int, int], bytes | bytearray], size: int, offset: int, where: str) -> tuple[dict[str, object], int]:
    """The keywords of the header at `offset` and where its data starts."""
    cards: dict[str, object] = {}
    pos = offset
    for _ in range(_MAX_HEADER_BLOCKS):
        if pos + BLOCK > size:
            raise DataError(f"{where}: the file ends inside a header (at byte {size}; FITS headers "
                            "come in blocks of 2880 bytes ending with an END card)")
        block = read(pos, BLOCK)
        pos += BLOCK
        for k in range(0, BLOCK, CARD):
            card = block[k:k + CARD].decode("ascii", "replace")
            key = card[:8].strip()
            if key == "END":
                return cards, pos
            if card[8:10] == "= " and key and key not in cards:
                cards[key] = _parse_value(card[10:])
    raise DataError(f"{where}: no END card in the header's first {_MAX_HEADER_BLOCKS} blocks")


def _data_size(cards: dict[str, object], where: str, primary: bool) -> int:
    bitpix = _int_key(cards, "BITPIX", where)
    if bitpix not in _BITPIX:
        raise DataError(f"{where}: BITPIX {bitpix} is not one of 8, 16, 32, 64, -32, -64")
    naxis = _int_key(cards, "NAXIS", where)
    if not 0 <= naxis <= MAX_AXES:
        raise DataError(f"{where}: NAXIS {naxis} is outside 0..{MAX_AXES}")
    if naxis == 0:
        return 0
    dims = [_int_key(cards, f"NAXIS{i + 1}", where) for i in range(naxis)]
    for i, d in enumerate(dims):
        if d < 0:
            raise DataError(f"{where}: NAXIS{i + 1} is {d}; axis lengths cannot be negative")
    groups = primary and cards.get("GROUPS") is True and dims[0] == 0
    pcount = _int_key(cards, "PCOUNT", where, 0)
    gcount = _int_key(cards, "GCOUNT", where, 1)
    if pcount < 0 or gcount < 0:
        raise DataError(f"{where}: PCOUNT {pcount} / GCOUNT {gcount} cannot be negative")
    n = math.prod(dims[1:] if groups else dims)
    return abs(bitpix) // 8 * gcount * (pcount + n)


def list_hdus(read: Callable[[int, int], bytes | bytearray], size: int, where: str, upto: int) -> list[Hdu]:
    """The first `upto` HDUs of a file (fewer when the file has fewer)."""
    out: list[Hdu] = []
    pos = 0
    if bytes(read(0, min(size, 6))) != b"SIMPLE":
        raise DataError(f"{where}: not a FITS file (it does not start with a SIMPLE card)")
    while len(out) < upto and pos < size:
        cards, data = _read_header(read, size, pos, where)
        primary = not out
        if primary and cards.get("SIMPLE") is not True:
            raise DataError(f"{where}: not a FITS file (it does not start with SIMPLE = T)")
        kind = "PRIMARY" if primary else str(cards.get("XTENSION", "")).strip().upper()
        if not primary and not kind:
            raise DataError(f"{where}: HDU {len(out) + 1} has no XTENSION keyword")
        nbytes = _data_size(cards, f"{where}: HDU {len(out) + 1}", primary)
        if data + nbytes > size:
            raise DataError(f"{where}: HDU {len(out) + 1}'s data needs {nbytes} bytes from byte "
                            f"{data}, but the file has {size} (truncated?)")
        out.append(Hdu(cards, data, nbytes, kind))
        pos = data + -(-nbytes // BLOCK) * BLOCK
    return out


# -- the type an image's values come out in -------------------------------------------------------

_INT_RANGES = [(np.uint8, 0, 255), (np.int8, -128, 127), (np.int16, -(1 << 15), (1 << 15) - 1),
               (np.uint16, 0, (1 << 16) - 1), (np.int32, -(1 << 31), (1 << 31) - 1),
               (np.uint32, 0, (1 << 32) - 1), (np.int64, -(1 << 63), (1 << 63) - 1),
               (np.uint64, 0, (1 << 64) - 1)]


def equivalent_type(bitpix: int, bscale: float, bzero: float) -> np.dtype:
    """The type CFITSIO's equivalent-type rule gives BITPIX scaled by BSCALE and BZERO."""
    if bitpix < 0:
        return np.dtype(np.float32 if bitpix == -32 else np.float64)
    if bscale == 1.0 and bzero == 0.0:
        return np.dtype({8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}[bitpix])
    if bscale == 1.0 and float(bzero).is_integer():
        base = _BITPIX[bitpix]
        info = np.iinfo(np.int8 if bitpix == 8 else base.newbyteorder("="))
        lo, hi = (0, 255) if bitpix == 8 else (info.min, info.max)
        lo, hi = lo + int(bzero), hi + int(bzero)
        for t, a, b in _INT_RANGES:
            if np.dtype(t).itemsize * 8 < bitpix:  # never narrower than the stored values
                continue
            if a <= lo and hi <= b:
                return np.dtype(t)
    return np.dtype(np.float32 if bitpix in (8, 16) else np.float64)


def _scaled(raw: np.ndarray, out: np.dtype, bscale: float, bzero: float) -> np.ndarray:
    """Stored values -> physical values (BZERO + BSCALE * stored) in the type `out`."""
    native = raw.astype(raw.dtype.newbyteorder("="), copy=False)
    if bscale == 1.0 and bzero == 0.0:
        return native.astype(out, copy=False)
    if out.kind in "iu":
        off = int(bzero)
        if out.itemsize == native.itemsize and off == (1 << (8 * out.itemsize - 1)) * (1 if out.kind == "u" else -1):
            # the unsigned (and signed-byte) convention: the offset flips the sign bit
            flip = np.array(1 << (8 * out.itemsize - 1), np.uint64).astype(native.dtype.str.replace("i", "u"))
            return (native.view(flip.dtype) ^ flip).view(out)
        return (native.astype(np.int64) + off).astype(out)
    return (native.astype(np.float64) * bscale + bzero).astype(out)


def _shape(cards: dict[str, object], prefix: str, where: str) -> tuple[int, ...]:
    n = _int_key(cards, f"{prefix}NAXIS", where)
    if not 0 <= n <= MAX_AXES:
        raise DataError(f"{where}: {prefix}NAXIS {n} is outside 0..{MAX_AXES}")
    dims = [_int_key(cards, f"{prefix}NAXIS{i + 1}", where) for i in range(n)]
    if any(d < 0 for d in dims):
        raise DataError(f"{where}: {prefix}NAXISn {dims} cannot be negative")
    return tuple(reversed(dims))


def _fnum(cards: dict[str, object], key: str, default: float, where: str) -> float:
    v = cards.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DataError(f"{where}: the header's {key} is {v!r}, not a number")
    return float(v)


def read_image(read: Callable[[int, int], bytes | bytearray], hdu: Hdu, where: str) -> np.ndarray:
    """An image HDU's values (plain or tile-compressed), in its equivalent type, C order."""
    c = hdu.cards
    if hdu.kind == "BINTABLE" and c.get("ZIMAGE") is True:
        return _read_compressed(read, hdu, where)
    if hdu.kind not in ("PRIMARY", "IMAGE"):
        raise DataError(f"{where}: the HDU is a {hdu.kind or 'non-image'} extension; only image "
                        "HDUs can be read")
    shape = _shape(c, "", where)
    if not shape:
        raise DataError(f"{where}: the image HDU has no data (NAXIS = 0); image HDUs with at least "
                        "one axis can be read")
    bitpix = _int_key(c, "BITPIX", where)
    stored = _BITPIX[bitpix]
    n = math.prod(shape)
    raw = np.frombuffer(read(hdu.data_offset, n * stored.itemsize), stored)
    out = equivalent_type(bitpix, _fnum(c, "BSCALE", 1.0, where), _fnum(c, "BZERO", 0.0, where))
    return _scaled(raw, out, _fnum(c, "BSCALE", 1.0, where), _fnum(c, "BZERO", 0.0, where)).reshape(shape)


# -- tile-compressed images --------------------------------------------------------------------

_TFORM = re.compile(r"^\s*(\d*)([LXBIJKAEDCMPQ])([A-Z]?)")
_TSIZE = {"L": 1, "X": 1, "B": 1, "I": 2, "J": 4, "K": 8, "A": 1, "E": 4, "D": 8, "C": 8, "M": 16,
          "P": 8, "Q": 16}
_TTYPE = {"B": np.dtype(">u1"), "I": np.dtype(">i2"), "J": np.dtype(">i4"), "K": np.dtype(">i8"),
          "E": np.dtype(">f4"), "D": np.dtype(">f8")}


def _columns(c: dict[str, object], where: str) -> dict[str, tuple[int, str, str, int]]:
    """name -> (byte offset in a row, type code, element type of a P/Q array, repeat)."""
    n = _int_key(c, "TFIELDS", where)
    if not 0 <= n <= 999:
        raise DataError(f"{where}: TFIELDS {n} is outside 0..999")
    cols: dict[str, tuple[int, str, str, int]] = {}
    off = 0
    for i in range(1, n + 1):
        form = str(c.get(f"TFORM{i}", ""))
        m = _TFORM.match(form)
        if not m:
            raise DataError(f"{where}: column {i}'s TFORM {form!r} is not a binary table format")
        rep = int(m.group(1) or 1)
        code = m.group(2)
        name = str(c.get(f"TTYPE{i}", "")).strip().upper()
        cols[name] = (off, code, m.group(3), rep)
        off += (-(-rep // 8) if code == "X" else rep * _TSIZE[code])
    if off != _int_key(c, "NAXIS1", where):
        raise DataError(f"{where}: the table's columns take {off} bytes a row, NAXIS1 says "
                        f"{c.get('NAXIS1')}")
    return cols


def _rand_table() -> np.ndarray:
    """The FITS tiled-image convention's 10000 uniform values (a Park-Miller sequence from seed 1)."""
    a, m, seed = 16807.0, 2147483647.0, 1.0
    out = np.empty(10000)
    for i in range(10000):
        t = a * seed
        seed = t - m * int(t / m)
        out[i] = seed / m
    return out.astype(np.float32).astype(np.float64)  # the convention keeps them as float32


_RAND: np.ndarray | None = None
_BITCHARS = bytes.maketrans(b"\x00\x01", b"01")


def _dither(tile_row: int, n: int, zdither0: int) -> np.ndarray:
    """The subtractive-dither offsets of the `n` pixels of (0-based) tile `tile_row`."""
    global _RAND
    if _RAND is None:
        _RAND = _rand_table()
    r = _RAND
    iseed = (tile_row + zdither0 - 1) % 10000
    nxt = int(r[iseed] * 500)
    out = np.empty(n)
    k = 0
    while k < n:
        take = min(n - k, 10000 - nxt)
        out[k:k + take] = r[nxt:nxt + take]
        k += take
        nxt += take
        if nxt == 10000:
            iseed = (iseed + 1) % 10000
            nxt = int(r[iseed] * 500)
    return out


def rice_decode(buf: bytes, n: int, bytepix: int, blocksize: int, where: str) -> np.ndarray:
    """`n` pixels of a RICE_1 tile (signed values of `bytepix` bytes; uint8 for 1)."""
    fsbits, fsmax, bbits = {1: (3, 6, 8), 2: (4, 14, 16), 4: (5, 25, 32)}.get(bytepix, (0, 0, 0))
    if not fsbits:
        raise DataError(f"{where}: RICE_1 BYTEPIX {bytepix} is not 1, 2 or 4")
    if blocksize <= 0:
        raise DataError(f"{where}: RICE_1 BLOCKSIZE {blocksize} must be positive")
    if len(buf) < bytepix:
        raise DataError(f"{where}: a RICE_1 tile of {len(buf)} bytes is too short")
    # the bit stream as a str of "0"/"1": str.find and int(..., 2) do the bit work at C speed
    bits = np.unpackbits(np.frombuffer(buf, np.uint8)[bytepix:]).tobytes().translate(_BITCHARS).decode()
    total = len(bits)
    mask = (1 << bbits) - 1
    last = int.from_bytes(buf[:bytepix], "big")
    out = [0] * n
    p = 0
    i = 0
    short = f"{where}: a RICE_1 tile ends early (corrupt data)"
    while i < n:
        if p + fsbits > total:
            raise DataError(short)
        fs = int(bits[p:p + fsbits], 2) - 1
        p += fsbits
        m = min(blocksize, n - i)
        if fs < 0:
            out[i:i + m] = [last] * m
        elif fs == fsmax:
            if p + m * bbits > total:
                raise DataError(short)
            for j in range(i, i + m):
                d = int(bits[p:p + bbits], 2)
                p += bbits
                last = (last + (~(d >> 1) if d & 1 else d >> 1)) & mask
                out[j] = last
        else:
            find = bits.find
            for j in range(i, i + m):
                q = find("1", p)
                if q < 0 or q + 1 + fs > total:
                    raise DataError(short)
                d = ((q - p) << fs) | int(bits[q + 1:q + 1 + fs] or "0", 2)
                p = q + 1 + fs
                last = (last + (~(d >> 1) if d & 1 else d >> 1)) & mask
                out[j] = last
        i += m
    arr = np.array(out, dtype=np.uint64 if bbits == 32 else np.uint32)
    return arr.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[bytepix]).view(
        {1: np.uint8, 2: np.int16, 4: np.int32}[bytepix])


def _gunzip(buf: bytes, where: str, need: int) -> bytes:
    """At most `need` bytes of a tile (gzip or zlib header): deflate inflates up to ~1000x, so a
    whole tile of a small file could be gigabytes; bytes past what the tile needs are never used."""
    try:
        return zlib.decompressobj(47).decompress(buf, need)
    except zlib.error as e:
        raise DataError(f"{where}: a GZIP tile cannot be decompressed ({e})") from None


def _option(opts: dict[str, object], name: str, default: int, allowed: Any, where: str) -> int:
    """A compression parameter (ZNAMEi / ZVALi) as an integer in `allowed`, else a DataError."""
    v = opts.get(name, default)
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v not in allowed:
        raise DataError(f"{where}: the compression parameter {name} is {v!r}; it must be an integer "
                        f"in {allowed if isinstance(allowed, tuple) else f'[{allowed.start}, {allowed.stop - 1}]'}")
    return v


def _read_compressed(read: Callable[[int, int], bytes | bytearray], hdu: Hdu, where: str) -> np.ndarray:
    c = hdu.cards
    shape = _shape(c, "Z", where)
    if not shape:
        raise DataError(f"{where}: the compressed image has no axes (ZNAXIS = 0)")
    zbitpix = _int_key(c, "ZBITPIX", where)
    if zbitpix not in _BITPIX:
        raise DataError(f"{where}: ZBITPIX {zbitpix} is not one of 8, 16, 32, 64, -32, -64")
    cmp = str(c.get("ZCMPTYPE", "")).strip().upper()
    if cmp not in ("RICE_1", "RICE_ONE", "GZIP_1", "GZIP_2", "NOCOMPRESS"):
        raise DataError(f"{where}: tile compression {cmp or '(none given)'} is not supported "
                        "(RICE_1, GZIP_1, GZIP_2 and NOCOMPRESS are)")
    dims = list(reversed(shape))  # ZNAXIS1 first
    decoded = math.prod(shape) * abs(zbitpix) // 8
    if decoded > max(MAX_EXPANSION * hdu.data_size, 1 << 30):
        raise DataError(f"{where}: the compressed image claims {decoded} bytes of pixels from "
                        f"{hdu.data_size} bytes of data, more than {MAX_EXPANSION} times as many "
                        "(and over 1 GiB): refused as a corrupt or hostile header")
    tiles = []
    for i, d in enumerate(dims):
        t = _int_key(c, f"ZTILE{i + 1}", where, d if i == 0 else 1)
        if t <= 0:
            raise DataError(f"{where}: ZTILE{i + 1} is {t}; tile sizes must be positive")
        tiles.append(t)
    counts = [-(-d // t) for d, t in zip(dims, tiles)]
    ntiles = math.prod(counts)
    rows = _int_key(c, "NAXIS2", where)
    if rows < ntiles:
        raise DataError(f"{where}: the table has {rows} rows for {ntiles} tiles")
    cols = _columns(c, where)
    if "COMPRESSED_DATA" not in cols:
        raise DataError(f"{where}: the compressed image has no COMPRESSED_DATA column")
    row_len = _int_key(c, "NAXIS1", where)
    heap = hdu.data_offset + _int_key(c, "THEAP", where, row_len * rows)
    end = hdu.data_offset + hdu.data_size
    table = read(hdu.data_offset, row_len * rows)
    opts = {str(c.get(f"ZNAME{i}", "")).strip().upper(): c.get(f"ZVAL{i}") for i in range(1, 1000)
            if f"ZNAME{i}" in c}
    bytepix = _option(opts, "BYTEPIX", 4 if zbitpix not in (8, 16) else abs(zbitpix) // 8, (1, 2, 4, 8), where)
    blocksize = _option(opts, "BLOCKSIZE", 32, range(1, 1 << 16), where)
    quant = str(c.get("ZQUANTIZ", "NO_DITHER")).strip().upper()
    zdither0 = _int_key(c, "ZDITHER0", where, 1)
    bscale, bzero = _fnum(c, "BSCALE", 1.0, where), _fnum(c, "BZERO", 0.0, where)
    out_type = equivalent_type(zbitpix, bscale, bzero)
    floating = zbitpix < 0
    result = np.empty(shape, out_type if not floating else np.dtype(_BITPIX[zbitpix].newbyteorder("=")))
    zblank_key = c.get("ZBLANK")

    def cell(name: str, row: int) -> object:
        off, code, elem, rep = cols[name]
        at = row * row_len + off
        if code in "PQ":
            dt = np.dtype(">i4") if code == "P" else np.dtype(">i8")
            cnt, pos = (int(x) for x in np.frombuffer(table, dt, 2, at))
            size = _TSIZE.get(elem, 1) * cnt
            if cnt < 0 or pos < 0 or heap + pos + size > end:
                raise DataError(f"{where}: tile {row + 1}'s {name} lies outside the heap")
            return read(heap + pos, size)
        t = _TTYPE.get(code)
        if t is None:
            raise DataError(f"{where}: column {name} has an unusable format {code}")
        return np.frombuffer(table, t, 1, at)[0]

    for k in range(ntiles):
        # the tile's position along each axis (ZNAXIS1 fastest)
        idx, rem = [], k
        for cnt in counts:
            idx.append(rem % cnt)
            rem //= cnt
        sl = tuple(slice(i * t, min((i + 1) * t, d)) for i, t, d in zip(idx, tiles, dims))
        tshape = tuple(s.stop - s.start for s in sl)
        n = math.prod(tshape)
        data = cell("COMPRESSED_DATA", k)
        if not isinstance(data, (bytes, bytearray)):  # a hostile TFORM: not a byte-array column
            raise DataError(f"{where}: the COMPRESSED_DATA column of tile {k} does not hold bytes")
        vals: np.ndarray
        if not data and floating and "GZIP_COMPRESSED_DATA" in cols:
            st = _BITPIX[zbitpix]
            raw = _gunzip(cell("GZIP_COMPRESSED_DATA", k), where, n * st.itemsize)  # type: ignore[arg-type]
            if len(raw) < n * st.itemsize:
                raise DataError(f"{where}: tile {k + 1} holds {len(raw)} bytes, it needs {n * st.itemsize}")
            vals = np.frombuffer(raw, st, n).astype(st.newbyteorder("="))
        else:
            quantized = floating and ("ZSCALE" in cols or "ZSCALE" in c)
            ints_bitpix = 32 if quantized else zbitpix
            if cmp in ("RICE_1", "RICE_ONE"):
                q = rice_decode(data, n, bytepix, blocksize, f"{where}: tile {k + 1}")
            else:
                st = _BITPIX[ints_bitpix]
                raw = data if cmp == "NOCOMPRESS" else _gunzip(data, where, n * st.itemsize)
                if cmp == "GZIP_2" and st.itemsize > 1:
                    if len(raw) < n * st.itemsize:
                        raise DataError(f"{where}: tile {k + 1} holds {len(raw)} bytes, it needs {n * st.itemsize}")
                    raw = np.frombuffer(raw, np.uint8, n * st.itemsize).reshape(st.itemsize, n).T.tobytes()
                if len(raw) < n * st.itemsize:
                    raise DataError(f"{where}: tile {k + 1} holds {len(raw)} bytes, it needs {n * st.itemsize}")
                q = np.frombuffer(raw, st, n)
            if floating and not quantized:
                vals = q.astype(result.dtype)
            elif floating:
                zs = float(cell("ZSCALE", k)) if "ZSCALE" in cols else _fnum(c, "ZSCALE", 1.0, where)  # type: ignore[arg-type]
                zz = float(cell("ZZERO", k)) if "ZZERO" in cols else _fnum(c, "ZZERO", 0.0, where)  # type: ignore[arg-type]
                qi = q.astype(np.int64)
                if quant in ("SUBTRACTIVE_DITHER_1", "SUBTRACTIVE_DITHER_2"):
                    v = (qi - _dither(k, n, zdither0) + 0.5) * zs + zz
                else:
                    v = qi * zs + zz
                blank = int(cell("ZBLANK", k)) if "ZBLANK" in cols else zblank_key  # type: ignore[arg-type]
                if blank is not None:
                    v = np.where(qi == int(blank), np.nan, v)  # type: ignore[arg-type]
                if quant == "SUBTRACTIVE_DITHER_2":
                    v = np.where(qi == -2147483646, 0.0, v)
                vals = v.astype(result.dtype)
            else:
                vals = _scaled(q.astype(_BITPIX[zbitpix].newbyteorder("=")), out_type, bscale, bzero)
        result[tuple(reversed(sl))] = vals.reshape(tuple(reversed(tshape)))
    return result
