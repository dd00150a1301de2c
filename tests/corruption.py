"""The bad-data corpus: one small dataset per kind of damage, built from generated images.

Each `Case` is a dataset of `GOOD` good images around one item under test, so a run shows both what
happens to the bad item and that the good ones around it still arrive (in order, batches full).
Items that are unusual but valid (CMYK, grayscale, progressive, a PNG named .jpg, a name that is not
UTF-8) must decode with either `on_error`.
"""
from __future__ import annotations

import io
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from torch_dali.io.recordio import read_index, write_recordio

GOOD = 4  # good samples in every case's dataset
H, W = 24, 32


@dataclass
class Case:
    """One corpus item and how to read it."""

    name: str  # the README row
    reader: str  # "file" or "mxnet"
    reader_kw: dict[str, Any]
    sources: list[str]  # every sample the reader should hand out with on_error="skip", in order
    bad: tuple[str, ...] = ()  # what the error / skip log must name (empty: the item is valid)
    reason: str | None = None  # what the error / skip log must say is wrong
    at_build: bool = False  # the problem is found while listing the dataset
    decoded_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # source -> HWC
    # the item can crash or hang a process (when the fix regresses): run it in a child process
    isolate: bool = False
    # done to the data after the pipeline is built (listed / mapped), undone before the next build:
    # ("fifo", path) replaces the file by a FIFO, ("shrink", path, size) truncates it
    damage: tuple[Any, ...] = ()
    found_by: str = ""  # the op that reports it (default: the decoder, or the reader at build)


def image(seed: int, mode: str = "RGB", fmt: str = "JPEG", **save: Any) -> bytes:
    """A smooth random H x W image in `mode`, encoded as `fmt`."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    rgb = Image.fromarray(base).resize((W, H), Image.BILINEAR)
    buf = io.BytesIO()
    rgb.convert(mode).save(buf, fmt, **save)
    return buf.getvalue()


def huge_header_jpeg(width: int = 60000, height: int = 60000) -> bytes:
    """A tiny valid JPEG whose frame header (SOF0) claims `width` x `height` pixels."""
    b = bytearray(image(99))
    sof = b.find(b"\xff\xc0")
    struct.pack_into(">HH", b, sof + 5, height, width)
    return bytes(b)


def stray_byte_jpeg(width: int = 20000, height: int = 20000) -> bytes:
    """huge_header_jpeg with one 0x00 after SOI: libjpeg skips it (a warning) and decodes the
    declared size; our header parse once gave up there and let the image past `max_pixels`."""
    b = huge_header_jpeg(width, height)
    return b[:2] + b"\x00" + b[2:]


def _entropy(bits: str) -> bytes:
    """Entropy-coded bytes of a bit string: padded with 1s, each 0xFF followed by a stuffed 0x00."""
    bits += "1" * (-len(bits) % 8)
    out = bytearray()
    for i in range(0, len(bits), 8):
        v = int(bits[i:i + 8], 2)
        out += bytes([v, 0]) if v == 0xFF else bytes([v])
    return bytes(out)


def _seg(marker: int, body: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(body) + 2) + body


def _one_code_jpeg(sof: int, height: int, width: int, components: int, ac_symbol: int) -> bytes:
    """SOI, a flat quantisation table, the frame header and two Huffman tables of one code word
    ('0') each: DC category 0 (no change) and AC `ac_symbol`."""
    one_code = bytes([1] + [0] * 15)
    comps = b"".join(bytes([c, 0x11, 0]) for c in range(1, components + 1))
    return (b"\xff\xd8" + _seg(0xDB, b"\x00" + b"\x01" * 64)
            + _seg(sof, struct.pack(">BHHB", 8, height, width, components) + comps)
            + _seg(0xC4, b"\x00" + one_code + b"\x00") + _seg(0xC4, b"\x10" + one_code + bytes([ac_symbol])))


def many_scans_jpeg(scans: int, width: int = 64, height: int = 64) -> bytes:
    """A valid gray progressive JPEG (width, height multiples of 8): a DC scan, then `scans - 1`
    AC scans coding every block as part of an end-of-band run: a few bytes each, yet each is a
    pass of libjpeg over the whole image (1,000 scans of 4096x4096: 68 kB, seconds to decode)."""
    blocks = (width // 8) * (height // 8)
    out = _one_code_jpeg(0xC2, height, width, 1, 0xE0)  # AC: EOB run class 14 (2**14 + 14 bits)
    out += _seg(0xDA, b"\x01\x01\x00\x00\x00\x00") + _entropy("0" * blocks)
    run = "0" + "1" * 14  # one end-of-band run of 32767 blocks
    ac = _seg(0xDA, b"\x01\x01\x00\x01\x3f\x00") + _entropy(run * -(-blocks // 32767))
    return out + ac * (scans - 1) + b"\xff\xd9"


def multi_scan_baseline_jpeg(scans: int, width: int = 64, height: int = 64) -> bytes:
    """A sequential (SOF0) colour JPEG whose scans each code one component (width, height multiples
    of 8): the first scan leaves the others to later scans, so libjpeg keeps every coefficient and
    each of the `scans` scans (cycling over the three components) is a pass over the image. Every
    block is coded as DC category 0 then end-of-block (two bits)."""
    out = _one_code_jpeg(0xC0, height, width, 3, 0x00)  # AC: end of block
    data = _entropy("00" * ((width // 8) * (height // 8)))
    for k in range(scans):
        out += _seg(0xDA, bytes([1, k % 3 + 1, 0x00, 0, 63, 0])) + data
    return out + b"\xff\xd9"


def _png_chunks(b: bytes) -> list[tuple[bytes, bytes]]:
    out, pos = [], 8
    while pos + 12 <= len(b):
        n, kind = struct.unpack_from(">I4s", b, pos)
        out.append((kind, b[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def _png(chunks: list[tuple[bytes, bytes]], bad_crc: bytes = b"") -> bytes:
    """A PNG of these chunks, each with its CRC (wrong for the chunk type `bad_crc`)."""
    out = [b"\x89PNG\r\n\x1a\n"]
    for kind, body in chunks:
        crc = zlib.crc32(kind + body) ^ (0xFFFF if kind == bad_crc else 0)
        out.append(struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc))
    return b"".join(out)


def corrupt_png(damage: str, seed: int = 13) -> bytes:
    """A PNG made undecodable: "idat-crc" (IDAT's CRC wrong), "ihdr-crc", "zlib-checksum" (the
    zlib stream's Adler-32 wrong, CRCs right), "zlib-data" (a byte of the compressed data
    flipped), "filter" (a row filter type 9), "no-iend" (cut after the IDAT, CRCs right),
    "truncated" (cut inside the IDAT). torchvision 0.29's decode_png SIGSEGVs on the first five."""
    chunks = _png_chunks(image(seed, fmt="PNG"))
    k = next(i for i, (kind, _) in enumerate(chunks) if kind == b"IDAT")
    body = chunks[k][1]
    if damage in ("idat-crc", "ihdr-crc"):
        return _png(chunks, bad_crc=damage[:4].upper().encode())
    if damage == "zlib-checksum":
        body = body[:-1] + bytes([body[-1] ^ 0xFF])
    elif damage == "zlib-data":
        body = body[:len(body) // 2] + bytes([body[len(body) // 2] ^ 0x55]) + body[len(body) // 2 + 1:]
    elif damage == "filter":
        raw = bytearray(zlib.decompress(body))
        raw[(len(raw) // H) * (H // 2)] = 9  # the filter byte of the middle row
        body = zlib.compress(bytes(raw))
    elif damage == "no-iend":
        return _png(chunks[:k + 1])
    elif damage == "truncated":
        return _png(chunks)[: len(_png(chunks[:k])) + 8 + len(body) // 2]
    else:
        raise ValueError(damage)
    return _png(chunks[:k] + [(b"IDAT", body)] + chunks[k + 1:])


def _write(path: Path | bytes, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _image_case(root: Path, name: str, bad_name: bytes, bad_data: bytes, *, bad: bool,
                reason: str | None = None, shape: tuple[int, ...] = (H, W, 3), **extra: Any) -> Case:
    """file_root/<name>/cls/: a0, a1, <the item>, c0, c1 (sorted in that order)."""
    folder = root / name / "cls"
    folder.mkdir(parents=True)
    goods = [b"a0.jpg", b"a1.jpg", b"c0.jpg", b"c1.jpg"]
    for k, g in enumerate(goods):
        _write(os.fsencode(folder) + b"/" + g, image(k))
    _write(os.fsencode(folder) + b"/" + bad_name, bad_data)
    names = [os.fsdecode(n) for n in goods[:2] + [bad_name] + goods[2:]]
    shown = [str(folder / n).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
             for n in names]
    item = shown[2]
    sources = [s for s in shown if s != item] if bad else shown
    return Case(name, "file", {"file_root": str(root / name)}, sources, (item,) if bad else (),
                reason, decoded_shapes={} if bad else {item: shape}, **extra)


def _fifo_case(root: Path, name: str) -> Case:
    """A good image when the reader lists the folder, replaced by a FIFO before it is read (a
    blocking open() of it once hung the on_error="skip" path)."""
    case = _image_case(root, name, b"b.jpg", image(5), bad=True, reason="not a regular file",
                       isolate=True, found_by="FileReader")
    path = str(root / name / "cls" / "b.jpg")
    _write(path + ".orig", image(5))
    case.damage = ("fifo", path)
    return case


def _file_list_case(root: Path, name: str, line: str, bad: str, reason: str) -> Case:
    folder = root / name
    folder.mkdir(parents=True)
    lines = []
    for k in range(GOOD):
        _write(folder / f"g{k}.jpg", image(k))
        lines.append(f"g{k}.jpg {k}")
    lines.insert(2, line)
    (folder / "list.txt").write_text("\n".join(lines) + "\n")
    return Case(name, "file", {"file_list": str(folder / "list.txt")},
                [str(folder / f"g{k}.jpg") for k in range(GOOD)], (bad.format(folder=folder),), reason,
                at_build=True)


def _recordio(root: Path, name: str, extra: int = 1, pad: int = 0) -> tuple[Path, Path, list[int]]:
    """GOOD + extra records of image(k) (with a `pad`-byte JPEG comment: bigger records)."""
    folder = root / name
    folder.mkdir(parents=True)
    rec, idx = folder / "data.rec", folder / "data.idx"
    save = {"comment": b"x" * pad} if pad else {}
    write_recordio(rec, idx, [(float(k), image(k, **save)) for k in range(GOOD + extra)])
    return rec, idx, [off for _, off in read_index(idx)]


def _shrunk_record_case(root: Path, name: str) -> Case:
    """Records of ~3.7 kB; after the reader has mapped the file it is cut 100 bytes into the last
    record, leaving mapped pages past the new end (reading them was a SIGBUS)."""
    rec, idx, offsets = _recordio(root, name, pad=3000)
    _write(str(rec) + ".orig", rec.read_bytes())
    return Case(name, "mxnet", {"path": str(rec), "index_path": str(idx)},
                [f"{rec}#record {k}" for k in range(GOOD)], (str(rec), f"record {GOOD}"),
                "the file shrank while being read", isolate=True,
                damage=("shrink", str(rec), offsets[GOOD] + 100))


def _record_case(root: Path, name: str, damage: str) -> Case:
    rec, idx, offsets = _recordio(root, name)
    b = bytearray(rec.read_bytes())
    if damage == "magic":
        b[offsets[2]:offsets[2] + 4] = b"BAD!"
        reason = "bad magic"
    else:  # the length word of record 2 claims more bytes than the file has
        struct.pack_into("<I", b, offsets[2] + 4, (1 << 29) - 1)
        reason = "runs past the end"
    rec.write_bytes(bytes(b))
    sources = [f"{rec}#record {k}" for k in range(GOOD + 1) if k != 2]
    return Case(name, "mxnet", {"path": str(rec), "index_path": str(idx)}, sources,
                (str(rec), "record 2"), reason)


def build(root: str | os.PathLike) -> list[Case]:
    """Writes every corpus item under `root`; returns the cases in README order."""
    root = Path(root)
    good = image(7)
    _write(root / "outside.jpg", image(6))  # a readable file outside every case's folder
    cases = [
        _image_case(root, "truncated JPEG", b"b.jpg", good[: len(good) // 2], bad=True,
                    reason="truncated"),
        _image_case(root, "garbage bytes named .jpg", b"b.jpg",
                    b"\x00garbage" + np.random.default_rng(3).bytes(500), bad=True,
                    reason="not an image"),
        _image_case(root, "zero-byte file", b"b.jpg", b"", bad=True, reason="empty (0 bytes)"),
        _image_case(root, "JPEG declaring 60000x60000 pixels", b"b.jpg", huge_header_jpeg(),
                    bad=True, reason="declares 60000x60000 pixels; more than the limit `max_pixels`"),
        _image_case(root, "JPEG declaring 20000x20000 pixels after a stray 0x00 byte", b"b.jpg",
                    stray_byte_jpeg(), bad=True,
                    reason="declares 20000x20000 pixels; more than the limit `max_pixels`", isolate=True),
        _image_case(root, "progressive JPEG of 1,000 scans (15 kB, 1024x1024)", b"b.jpg",
                    many_scans_jpeg(1000, 1024, 1024), bad=True, reason="more than 256 scans"),
        _image_case(root, "PNG named .jpg", b"b.jpg", image(8, fmt="PNG"), bad=False),
        _image_case(root, "CMYK JPEG", b"b.jpg", image(9, "CMYK"), bad=False),
        _image_case(root, "grayscale JPEG", b"b.jpg", image(10, "L"), bad=False),
        _image_case(root, "progressive JPEG", b"b.jpg", image(11, progressive=True), bad=False),
        _image_case(root, "non-UTF-8 file name", b"b_caf\xe9.jpg", image(12), bad=False),
        _image_case(root, "non-UTF-8 file name, truncated", b"b_caf\xe9.jpg", good[:100], bad=True,
                    reason="truncated"),
        _image_case(root, "corrupt PNG (bad IDAT CRC)", b"b.png", corrupt_png("idat-crc"), bad=True,
                    reason="fails its CRC check", isolate=True),
        _image_case(root, "corrupt PNG (bad zlib checksum)", b"b.png", corrupt_png("zlib-checksum"),
                    bad=True, reason="broken data stream", isolate=True),
        _fifo_case(root, "file replaced by a FIFO after listing"),
        _file_list_case(root, "file_list naming a missing file", "missing.jpg 9",
                        "{folder}/missing.jpg", "does not exist"),
        _file_list_case(root, "file_list label not a number", "g0.jpg cat", "list.txt, line 3",
                        "label must be a non-negative integer, got 'cat'"),
        _file_list_case(root, "file_list label '²' (a digit to str.isdigit, not to int)", "g0.jpg ²",
                        "list.txt, line 3", "label must be a non-negative integer, got '²'"),
        _file_list_case(root, "file_list label 3000000000 (past int32)", "g0.jpg 3000000000",
                        "list.txt, line 3", "does not fit the int32 label output"),
        _file_list_case(root, "file_list entry outside its folder ('../')", "../outside.jpg 1",
                        "list.txt, line 3", "'../outside.jpg' is outside the file_list's folder"),
        _record_case(root, "RecordIO bad magic number", "magic"),
        _record_case(root, "RecordIO record length past the end", "length"),
        _shrunk_record_case(root, "RecordIO file shrunk while memory-mapped"),
    ]
    rec, idx, _ = _recordio(root, "RecordIO .idx offset beyond the file", extra=0)
    with open(idx, "a") as f:
        f.write(f"{GOOD}\t1000000\n")
    cases.append(Case("RecordIO .idx offset beyond the file", "mxnet",
                      {"path": str(rec), "index_path": str(idx)},
                      [f"{rec}#record {k}" for k in range(GOOD)], (f"{idx}, line {GOOD + 1}",),
                      "offset 1000000 is beyond the end", at_build=True))
    return cases
