"""Fuzz targets for the data-file parsers of the readers (registered in tests/_fuzz.py's TARGETS):
LMDB databases, caffe Datum / caffe2 TensorProtos records, tf.train.Example records, .npy headers,
webdataset tars and their index files, FITS files, WAV audio and readers.coco's preprocessed
annotation folders. Each takes mutated bytes and checks, beyond "only the library's DataError",
that what the parser hands on lies inside the data: listed LMDB records and tar members within
the file, .npy data within it, arrays of the shapes their headers give."""
from __future__ import annotations

import functools
import io
import random
import re
import struct
import tarfile
import tempfile
import wave

import numpy as np
import torch

from torch_dali.errors import DataError
from torch_dali.io import caffe as C
from torch_dali.io import coco_preprocessed as CP
from torch_dali.io import fits as F
from torch_dali.io import lmdb as L
from torch_dali.io import npy
from torch_dali.io import tarindex as T
from torch_dali.io import tfexample as X
from torch_dali.io import wav as W


class Fail(AssertionError):
    """An oracle violation (the input is reported)."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Fail(what)


def _read(data: bytes):
    def read(offset: int, n: int) -> bytes:
        if offset < 0 or n < 0 or offset + n > len(data):
            raise DataError(f"fuzz: reading {n} bytes at byte {offset}: past the end ({len(data)})")
        return data[offset:offset + n]
    return read


def target_lmdb(data: bytes, rnd: random.Random) -> None:
    """Records listed lie inside the file; every value reads or is a DataError. Besides the generic
    edits (which favour the meta page), page headers and record pointers are hit."""
    b = bytearray(data)
    pages = len(b) // 4096
    for _ in range(rnd.choice((0, 1, 2, 4))):
        if pages:
            pos = rnd.randrange(pages) * 4096 + rnd.choice((rnd.randrange(24), rnd.randrange(4096)))
            if pos < len(b):
                b[pos] = rnd.randrange(256)
    data = bytes(b)
    try:
        e = L.list_entries(_read(data), len(data), "fuzz")
    except DataError:
        return
    ends = e.key_offset + e.key_size
    _check(bool((e.key_offset >= 0).all() and (ends <= len(data)).all()), "a key outside the file")
    small = ~e.big
    _check(bool((e.value_offset[small] + e.value_size[small] <= len(data)).all()), "a value outside the file")
    for i in range(len(e.key_offset)):
        try:
            v = L.read_value(_read(data), e, i, "fuzz")
            _check(len(v) == int(e.value_size[i]), "a value of another size than listed")
        except DataError:
            pass


def target_caffe(data: bytes, rnd: random.Random) -> None:
    """Datum and TensorProtos parses give outputs of their declared shapes, or DataErrors."""
    try:
        outs = C.datum(data, "fuzz", True, True)
        _check(len(outs) == 2 and outs[1].numel() <= 1, "a Datum label of more than one value")
    except DataError:
        pass
    try:
        outs = C.caffe2(data, "fuzz", rnd.random() < 0.7, rnd.choice((0, 2, 4)), rnd.randint(0, 2), rnd.random() < 0.3)
        for t in outs:
            _check(t.dim() in (1, 3), f"an output of {t.dim()} dimensions")
    except DataError:
        pass


def target_tfexample(data: bytes, rnd: random.Random) -> None:
    """Every feature's values parse (or a DataError); spans lie inside the record."""
    try:
        spans = X.feature_spans(data, "fuzz")
    except DataError:
        return
    for kind, lo, hi in spans.values():
        _check(0 <= lo <= hi <= len(data), f"a span {lo}..{hi} outside {len(data)} bytes")
        if kind:
            try:
                X.values(data, kind, lo, hi, "fuzz")
            except DataError:
                pass


def target_npy(data: bytes, rnd: random.Random) -> None:
    """A header read gives data inside the file and an array of its shape."""
    try:
        h = npy.read_header(_read(data), len(data), "fuzz")
    except DataError:
        return
    _check(h.data_offset + h.nbytes <= len(data), "the data runs past the file")
    a = npy.as_array(h, bytearray(data[h.data_offset:h.data_offset + h.nbytes]))
    _check(tuple(a.shape) == tuple(h.shape), f"array {tuple(a.shape)} for header {h.shape}")


_TYPES = b"0125xgLKSZ7"
_SIZES = (b"\xff" * 12, b"\xff" + ((-512) % (1 << 88)).to_bytes(11, "big"),
          b"\x80" + (1 << 40).to_bytes(11, "big"), b"77777777777\x00")


def _forge_header(b: bytearray, rnd: random.Random) -> None:
    """A member header's type flag or size field changed and its checksum made right again, so
    the edit reaches tarfile's handling of the member (random bytes fail the checksum first)."""
    heads = [k for k in range(0, len(b) - 511, 512) if b[k + 257:k + 262] == b"ustar"]
    if not heads:
        return
    k = rnd.choice(heads)
    if rnd.random() < 0.5:
        b[k + 156] = rnd.choice(_TYPES)
    else:
        b[k + 124:k + 136] = rnd.choice(_SIZES)
    b[k + 148:k + 156] = b" " * 8
    b[k + 148:k + 156] = b"%06o\x00 " % sum(b[k:k + 512])


def target_tar(data: bytes, rnd: random.Random) -> None:
    """Scanned members start on a block after a header and have a size; those that run past the
    end are the reader's to refuse (it checks every member against the file's size). Some inputs
    get a forged type flag or size with a valid checksum (a negative size once looped tarfile)."""
    if rnd.random() < 0.4:
        b = bytearray(data)
        for _ in range(rnd.randint(1, 3)):
            _forge_header(b, rnd)
        data = bytes(b)
    try:
        groups = T.scan_tar(io.BytesIO(data), "fuzz")
    except DataError:
        return
    for g in groups:
        for c in g:
            _check(c.offset >= T.BLOCK and c.offset % T.BLOCK == 0 and c.size >= 0,
                   f"member {c.name!r} at {c.offset}+{c.size}")


def target_fits(data: bytes, rnd: random.Random) -> None:
    """FITS files (plain and tile-compressed images): every listed HDU lies inside the file, and each
    image reads as an array of as many values as its header's axes give, or a DataError."""
    try:
        hdus = F.list_hdus(_read(data), len(data), "fuzz", 8)
    except DataError:
        return
    for h in hdus:
        _check(0 <= h.data_offset and h.data_offset + h.data_size <= len(data) + 2880,
               f"HDU data at {h.data_offset}+{h.data_size} past the file ({len(data)})")
        if h.kind not in ("PRIMARY", "IMAGE", "BINTABLE"):
            continue
        try:
            img = F.read_image(_read(data), h, "fuzz")
        except DataError:
            continue
        _check(isinstance(img, np.ndarray) and img.nbytes <= max(F.MAX_EXPANSION * len(data), 1 << 30),
               f"an image of {getattr(img, 'nbytes', '?')} bytes from a {len(data)}-byte file")


def target_wds_index(data: bytes, rnd: random.Random) -> None:
    """A webdataset index (text, as the reader decodes it, with Unicode look-alike digits mixed in
    at times): the samples its header counts, each component on a tar block, or a DataError."""
    text = data.decode("utf-8", "replace")
    if rnd.random() < 0.3:
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        if digits:
            i = rnd.choice(digits)
            text = text[:i] + rnd.choice("\u00b2\u0663\u2460\uff11") + text[i + 1:]
    try:
        samples = T.parse_index(text, "fuzz")
    except DataError:
        return
    count = re.match(r"[+-]?[0-9]+", text.split("\n")[0].split()[1])
    _check(count is not None and len(samples) == int(count.group()), f"{len(samples)} samples for {text[:30]!r}")
    for comps in samples:
        for c in comps:
            _check(c.offset >= 0 and c.offset % T.BLOCK == 0 and c.size >= 0, f"component {c}")


def target_wav(data: bytes, rnd: random.Random) -> None:
    """A WAV header read gives frames inside the file; decoding gives (frames, channels) samples."""
    try:
        info = W.parse(data, "fuzz")
    except DataError:
        return
    align = info.channels * info.bits // 8
    _check(info.data_offset + info.frames * align <= len(data), f"{info} runs past {len(data)} bytes")
    out = W.decode(data, info, rnd.choice([torch.float32, torch.int16, torch.int32]))
    _check(tuple(out.shape) == (info.frames, info.channels), f"{tuple(out.shape)} for {info}")


# -- seeds ------------------------------------------------------------------------------------------

def _unpack_folder(data: bytes) -> dict[str, bytes] | None:
    """A folder packed as (name length u8, name, size u32, bytes)*; None where the packing broke."""
    files, p = {}, 0
    while p < len(data):
        n = data[p]
        name = data[p + 1:p + 1 + n].decode("ascii", "replace")
        if p + 5 + n > len(data) or not re.fullmatch(r"[a-z_]+\.dat", name):
            return None
        size = struct.unpack_from("<I", data, p + 1 + n)[0]
        files[name] = data[p + 5 + n:p + 5 + n + size]
        p += 5 + n + size
    return files


def target_coco_pre(data: bytes, rnd: random.Random) -> None:
    """A preprocessed COCO folder (packed): its samples' objects, polygons and masks stay inside
    what the folder stores, or it is a DataError."""
    files = _unpack_folder(data)
    if not files:  # the packing broke: a seed folder, edited below
        files = _unpack_folder(rnd.choice(coco_pre_seeds()))
        assert files is not None
    for _ in range(rnd.choice((0, 1, 1, 2, 3))):  # edits inside files, where the generic ones rarely land
        name = rnd.choice(sorted(files))
        b = bytearray(files[name])
        edit = rnd.randrange(4)
        if edit == 0 and b:
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        elif edit == 1:
            b = b[:rnd.randrange(len(b) + 1)]
        elif len(b) >= 8:  # a count, offset or size set to an extreme
            width = rnd.choice((4, 8))
            pos = rnd.randrange(0, max(1, len(b) - width + 1), width if edit == 2 else 1)
            v = rnd.choice((0, 1, -1, 2**31 - 1, -2**31, 2**32 - 1, 2**40, 2**63 - 1))
            b[pos:pos + width] = (v & (2**(8 * width) - 1)).to_bytes(width, "little")
        files[name] = bytes(b)
    with tempfile.TemporaryDirectory() as d:
        for name, b in files.items():
            with open(f"{d}/{name}", "wb") as f:
                f.write(b)
        try:
            samples = CP.load(d, True, True, rnd.random() < 0.5)
        except DataError:
            return
    for s in samples:
        n = len(s.labels)
        _check(s.boxes.shape == (n, 4), f"boxes {s.boxes.shape} for {n} labels")
        if len(s.polygons):
            _check(bool((s.polygons[:, 0] >= 0).all() and (s.polygons[:, 0] < n).all()), "polygon object")
            _check(bool((s.polygons[:, 1] <= s.polygons[:, 2]).all() and (s.polygons[:, 2] <= len(s.vertices)).all()),
                   "polygon vertices")
        for obj, h, w, runs in s.rles:
            _check(0 <= obj < n and 0 < h * w <= CP.MAX_MASK_PIXELS, f"mask {obj} {w}x{h}")


@functools.lru_cache(maxsize=1)
def _coco_pre_seeds() -> tuple[bytes, ...]:
    from pathlib import Path
    out = []
    for case in ("pixelwise", "polygons_ltrb_ratio"):
        folder = Path(__file__).with_name("reference") / "coco_preprocessed" / case
        blob = b""
        for f in sorted(folder.glob("*.dat")):
            b = f.read_bytes()
            blob += bytes([len(f.name)]) + f.name.encode() + struct.pack("<I", len(b)) + b
        out.append(blob)
    return tuple(out)


def coco_pre_seeds() -> list[bytes]:
    return list(_coco_pre_seeds())


def lmdb_seeds() -> list[bytes]:
    """Databases written by liblmdb (the `lmdb` package): small and overflow values, branch pages."""
    from tests.reference import readers_lmdb as R
    out = []
    with tempfile.TemporaryDirectory() as d:
        for k, sizes in enumerate(((3, 40, 900), (10, 5000, 20))):
            R.write_lmdb(f"{d}/{k}", [(b"%03d" % i, R.datum(bytes(sizes[i % 3] + i), i, True)) for i in range(90)],
                         map_size=1 << 22)
            with open(f"{d}/{k}/data.mdb", "rb") as f:
                out.append(f.read())
    return out


def caffe_seeds() -> list[bytes]:
    from tests.reference import readers_lmdb as R
    return [R.datum(b"\xff\xd8jpeg", 3, True), R.datum(bytes(12), 1, False, (3, 2, 2), [0.5]),
            R.protos(R.tensor(R.STRING, strings=[b"img"]), R.tensor(R.INT32, int32s=[4]),
                     R.tensor(R.FLOAT, floats=[1, 2]), R.tensor(R.INT64, int64s=[-1, 2 ** 40]),
                     R.tensor(R.INT32, int32s=[1, 2, 3, 4])),
            R.protos(R.tensor(R.BYTE, dims=[2, 3, 1], raw=bytes(6)), R.tensor(None, floats=[0.5] * 3))]


def tfexample_seeds() -> list[bytes]:
    from tests.reference import readers_formats as W
    feats = {"img": ("bytes", [b"abc", b"d"]), "label": ("int64", [5, -7]), "box": ("float", [0.5] * 8)}
    return [W.encode_example(feats), W.encode_example(feats, packed=False)]


def npy_seeds() -> list[bytes]:
    out = []
    for arr in (np.arange(12, dtype=np.int16).reshape(3, 4), np.asfortranarray(np.ones((2, 3, 2), np.float32)),
                np.array(3.5), np.zeros((0, 4), np.uint8)):
        f = io.BytesIO()
        np.save(f, arr)
        out.append(f.getvalue())
    return out


def tar_seeds() -> list[bytes]:
    out = []
    for fmt in (tarfile.USTAR_FORMAT, tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        f = io.BytesIO()
        with tarfile.open(fileobj=f, mode="w", format=fmt) as tf:
            for i in range(4):
                info = tarfile.TarInfo(f"d/s{i}.{'x' * (120 if fmt != tarfile.USTAR_FORMAT and i == 2 else 1)}")
                payload = struct.pack("<I", i) * (i + 1)
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
        out.append(f.getvalue())
    return out


def fits_seeds() -> list[bytes]:
    """Files astropy wrote (tests/reference/fits_tables.npz): plain, RICE_1 and GZIP_2 images."""
    from pathlib import Path
    tables = np.load(Path(__file__).parent / "reference" / "fits_tables.npz")
    return [tables[f"file/{n}"].tobytes() for n in ("i16", "f32", "rice_i16", "gzip2_i32", "tiles_i16")]


def wds_index_seeds() -> list[bytes]:
    return [b"v1.1 3\njpg 512 100 cls 1024 1\njpg 2048 30 cls 2560 1\npng 3072 7\n",
            b"v1.2 2\njpg 0 700 a.jpg cls 1024 2 a.cls\njpg 1536 9 b.jpg\n"]


def wav_seeds() -> list[bytes]:
    """PCM 8/16/24-bit WAVs written by the standard library, and a 32-bit float one."""
    out = []
    for width, channels in ((1, 1), (2, 2), (3, 1)):
        f = io.BytesIO()
        with wave.open(f, "wb") as w:
            w.setnchannels(channels)
            w.setsampwidth(width)
            w.setframerate(8000)
            w.writeframes(bytes(range(256))[: 12 * width * channels])
        out.append(f.getvalue())
    pcm = np.linspace(-1, 1, 10, dtype=np.float32).tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, 16000, 64000, 4, 32)
    out.append(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(pcm)) + b"WAVE" + b"fmt " +
               struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm)
    return out


TARGETS = {
    "fits": (target_fits, fits_seeds),
    "lmdb": (target_lmdb, lmdb_seeds),
    "caffe": (target_caffe, caffe_seeds),
    "tfexample": (target_tfexample, tfexample_seeds),
    "npy": (target_npy, npy_seeds),
    "tar": (target_tar, tar_seeds),
    "wds_index": (target_wds_index, wds_index_seeds),
    "wav": (target_wav, wav_seeds),
    "coco_pre": (target_coco_pre, coco_pre_seeds),
}
