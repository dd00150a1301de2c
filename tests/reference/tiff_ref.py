"""Multi-sample and 16-bit TIFF cases for decoders.image, shared by the test
(tests/test_data_tiff.py) and the table generator.

`/work/dali-venv/bin/python -m tests.reference.tiff_ref` decodes each case with DALI 2.4's CPU
decoder (every output_type x uint8/uint16, and peek_image_shape) and writes tiff_tables.npz beside
this file. The files are written here by `write_tiff` (baseline TIFF: strips or tiles, chunky or
planar, none / LZW / Deflate / PackBits, horizontal differencing, either byte order). NumPy only at
import.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

TABLES = Path(__file__).with_name("tiff_tables.npz")
OUTPUT_TYPES = ("ANY_DATA", "RGB", "BGR", "GRAY")
DTYPES = ("UINT8", "UINT16")


def _packbits(raw: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(raw):
        run = 1
        while i + run < len(raw) and run < 128 and raw[i + run] == raw[i]:
            run += 1
        if run > 2:
            out += bytes([257 - run, raw[i]])
            i += run
        else:
            chunk = raw[i:i + min(128, len(raw) - i)]
            out += bytes([len(chunk) - 1]) + chunk
            i += len(chunk)
    return bytes(out)


def _lzw(raw: bytes) -> bytes:
    """TIFF LZW: 9..12-bit MSB-first codes, the width growing when the next code reaches 2**bits
    (libtiff's "early change"), a clear code before the table would need 13 bits."""
    out, acc, nacc = bytearray(), 0, 0
    nbits = 9

    def emit(code: int) -> None:
        nonlocal acc, nacc
        acc, nacc = (acc << nbits) | code, nacc + nbits
        while nacc >= 8:
            nacc -= 8
            out.append((acc >> nacc) & 0xFF)
        acc &= (1 << nacc) - 1

    table = {bytes([i]): i for i in range(256)}
    nxt, w = 258, b""
    emit(256)
    for c in raw:
        wc = w + bytes([c])
        if wc in table:
            w = wc
            continue
        emit(table[w])
        table[wc], nxt = nxt, nxt + 1
        if nxt >= 4094:
            emit(256)
            table, nxt, nbits = {bytes([i]): i for i in range(256)}, 258, 9
        elif nxt == 1 << nbits:
            nbits += 1
        w = bytes([c])
    if w:
        emit(table[w])
        nxt += 1
        if nxt == 1 << nbits and nbits < 12:
            nbits += 1
    emit(257)
    if nacc:
        out.append((acc << (8 - nacc)) & 0xFF)
    return bytes(out)


def write_tiff(a: np.ndarray, photometric: int = 2, extra: int = 0, compression: int = 1,
               planar: int = 1, predictor: int = 1, rows: int | None = None,
               tile: tuple[int, int] | None = None, big_endian: bool = False, orientation: int = 1) -> bytes:
    """A baseline TIFF of the HWC uint8/uint16 array `a`; `extra`: the ExtraSamples value of the
    samples beyond the colour ones (0 unspecified, 2 unassociated alpha)."""
    e = ">" if big_endian else "<"
    h, w, c = a.shape
    bits = a.dtype.itemsize * 8
    arr = a.astype(a.dtype.newbyteorder(e))
    planes = [arr[..., s:s + 1] for s in range(c)] if planar == 2 else [arr]
    bh, bw = tile if tile else ((rows or h), w)
    blocks = []
    for p in planes:
        for y in range(0, h, bh):
            for x in range(0, w, bw):
                blk = p[y:y + bh, x:x + bw]
                if tile:  # tiles are whole: pad the edge ones
                    pad = np.zeros((bh, bw, p.shape[2]), p.dtype)
                    pad[:blk.shape[0], :blk.shape[1]] = blk
                    blk = pad
                if predictor == 2:
                    blk = blk.copy()
                    blk[:, 1:] = blk[:, 1:] - blk[:, :-1]
                raw = blk.tobytes()
                if compression == 8:
                    raw = zlib.compress(raw)
                elif compression == 5:
                    raw = _lzw(raw)
                elif compression == 32773:  # the spec packs each row on its own (libtiff relies on it)
                    raw = b"".join(_packbits(row.tobytes()) for row in blk)
                blocks.append(raw)
    data = b"".join(blocks)
    offsets, at = [], 8
    for blk in blocks:
        offsets.append(at)
        at += len(blk)
    spp_colour = 3 if photometric == 2 else 1
    tags: list[tuple[int, int, list[int]]] = [
        (256, 4, [w]), (257, 4, [h]), (258, 3, [bits] * c), (259, 3, [compression]),
        (262, 3, [photometric]), (274, 3, [orientation]), (277, 3, [c]), (284, 3, [planar]),
        (317, 3, [predictor]),
    ]
    if tile:
        tags += [(322, 4, [bw]), (323, 4, [bh]), (324, 4, offsets), (325, 4, [len(b) for b in blocks])]
    else:
        tags += [(273, 4, offsets), (278, 4, [bh]), (279, 4, [len(b) for b in blocks])]
    if c > spp_colour:
        tags.append((338, 3, [extra] * (c - spp_colour)))
    tags.sort()
    ifd_at = 8 + len(data) + (len(data) % 2)
    heap_at = ifd_at + 2 + 12 * len(tags) + 4
    ifd, heap = struct.pack(e + "H", len(tags)), b""
    for tag, typ, vals in tags:
        fmt = "H" if typ == 3 else "I"
        packed = struct.pack(f"{e}{len(vals)}{fmt}", *vals)
        if len(packed) <= 4:
            ifd += struct.pack(e + "HHI", tag, typ, len(vals)) + packed.ljust(4, b"\0")
        else:
            ifd += struct.pack(e + "HHII", tag, typ, len(vals), heap_at + len(heap))
            heap += packed
    ifd += struct.pack(e + "I", 0)
    head = (b"MM\x00*" if big_endian else b"II*\x00") + struct.pack(e + "I", ifd_at)
    return head + data + b"\0" * (len(data) % 2) + ifd + heap


_rng = np.random.default_rng(5)


def _img(h: int, w: int, c: int, dtype: type = np.uint8) -> np.ndarray:
    top = 256 if dtype == np.uint8 else 65536
    y, x = np.mgrid[0:h, 0:w]
    base = (x[..., None] * 5 + y[..., None] * 3 + np.arange(c) * 40) % top
    return np.clip(base + _rng.integers(0, top // 8, (h, w, c)), 0, top - 1).astype(dtype)


# name -> (the array written, write_tiff's keywords)
CASES: dict[str, tuple[np.ndarray, dict]] = {
    "rgb_6ch": (_img(20, 14, 6), {}),
    "rgb_5ch_deflate": (_img(17, 11, 5), {"compression": 8}),
    "rgb_8ch_strips": (_img(19, 13, 8), {"rows": 4}),
    "rgb_4ch_unspecified": (_img(12, 9, 4), {}),
    "rgb_6ch_planar": (_img(15, 10, 6), {"planar": 2, "rows": 6}),
    "rgb_6ch_packbits": (_img(16, 12, 6), {"compression": 32773}),
    "rgb_6ch_lzw": (_img(60, 50, 6), {"compression": 5, "rows": 25}),
    "rgb16_6ch_lzw_predictor": (_img(21, 17, 6, np.uint16), {"compression": 5, "predictor": 2}),
    "rgb_6ch_predictor": (_img(14, 10, 6), {"compression": 8, "predictor": 2}),
    "rgb_6ch_tiles": (_img(37, 21, 6), {"tile": (16, 16)}),
    "rgb_6ch_big_endian": (_img(11, 8, 6), {"big_endian": True}),
    "rgb_6ch_orientation6": (_img(10, 7, 6), {"orientation": 6}),
    "rgb16_6ch": (_img(13, 9, 6, np.uint16), {}),
    "rgb16_6ch_predictor_be": (_img(13, 9, 6, np.uint16), {"compression": 8, "predictor": 2, "big_endian": True}),
    "rgb16_3ch": (_img(12, 10, 3, np.uint16), {}),
    "rgb16_4ch_alpha": (_img(9, 7, 4, np.uint16), {"extra": 2}),
    "gray_3ch": (_img(10, 8, 3), {"photometric": 1}),
    "gray16_2ch": (_img(10, 8, 2, np.uint16), {"photometric": 1}),
    "gray16": (_img(9, 6, 1, np.uint16), {"photometric": 1, "compression": 8}),
    "gray_2ch_unspecified": (_img(8, 6, 2), {"photometric": 1}),
    "rgb_4ch_associated_alpha": (_img(7, 6, 4), {"extra": 1}),
    "gray_2ch_associated_alpha": (_img(7, 6, 2), {"photometric": 1, "extra": 1}),
}


def encoded(name: str) -> np.ndarray:
    a, kw = CASES[name]
    return np.frombuffer(write_tiff(a, **kw), np.uint8)


def main() -> None:  # pragma: no cover - runs under DALI's venv
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def

    def run(name: str, what):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return what(fn.external_source(source=lambda: [encoded(name)], batch=True))

        p = pipe()
        p.build()
        try:
            return np.asarray(p.run()[0][0])
        except RuntimeError as e:  # what DALI refuses: the error's last line
            return np.array(str(e).strip().splitlines()[-1])

    tables: dict[str, np.ndarray] = {}
    for n in CASES:
        tables[f"{n}/shape"] = run(n, fn.peek_image_shape)
        for ot in OUTPUT_TYPES:
            for dt in DTYPES:
                tables[f"{n}/{ot}/{dt}"] = run(n, lambda e, ot=ot, dt=dt: fn.decoders.image(
                    e, output_type=getattr(types, ot), dtype=getattr(types, dt)))
    np.savez_compressed(TABLES, **tables)
    print(f"wrote {len(tables)} arrays to {TABLES}")


if __name__ == "__main__":  # pragma: no cover
    main()
