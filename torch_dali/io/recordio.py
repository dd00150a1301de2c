"""MXNet RecordIO (`.rec` + `.idx`), read and written without MXNet.

A `.rec` file is a sequence of frames: magic word 0xced7230a, a length word (top 3 bits: the
continuation flag, low 29 bits: the payload length), the payload, then zero padding to 4 bytes.
dmlc's writer never lets the magic word appear 4-aligned inside a payload: it cuts the payload
there (flag 1 = first part, 2 = middle, 3 = last) and drops the magic bytes, which a reader puts
back when joining the parts. A record's payload starts with MXNet's IRHeader (`<IfQQ`: flag,
label, id, id2); when flag > 0, `flag` float32 labels follow the header. The `.idx` file has one
`key\\toffset` line per record, offset being the byte position of the record's first frame.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np
import torch

from ..errors import DataError
from . import host_io
from .bounded_file import list_too_large
from .host_memory import BatchBuffers

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_FRAME = struct.Struct("<II")
_IR = struct.Struct("<IfQQ")
_LEN_MASK = (1 << 29) - 1
_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() takes '²', which int() then refuses
MAX_PART = 1 << 29  # a frame's length field has 29 bits

__all__ = ["MAGIC", "IRHeader", "pack", "unpack", "encode_record", "RecordIOWriter",
           "write_recordio", "read_index", "RecordFile", "iter_records", "build_index"]


class IRHeader(NamedTuple):
    """MXNet's image record header: `flag` > 0 means `flag` float32 labels follow the header."""

    flag: int
    label: float
    id: int
    id2: int


# -- records: header + labels + payload -------------------------------------------------------------

def pack(label: float | Sequence[float], payload: bytes, id: int = 0, id2: int = 0) -> bytes:
    """A record as MXNet's `recordio.pack` makes it: a number goes in the header (flag 0); a
    sequence (even of one value) sets flag to its length and is stored as float32 after it."""
    if isinstance(label, (int, float, np.number)) and not isinstance(label, bool):
        return _IR.pack(0, float(label), id, id2) + bytes(payload)
    labels = np.asarray(label, dtype="<f4").reshape(-1)
    return _IR.pack(labels.size, 0.0, id, id2) + labels.tobytes() + bytes(payload)


def unpack(record: bytes | memoryview, where: str = "record") -> tuple[IRHeader, np.ndarray, int]:
    """(header, labels as float32, offset of the payload) of one record's bytes."""
    if len(record) < _IR.size:
        raise DataError(f"{where}: record of {len(record)} bytes is shorter than its "
                        f"{_IR.size}-byte IRHeader")
    header = IRHeader(*_IR.unpack_from(record, 0))
    if header.flag == 0:
        return header, np.array([header.label], dtype=np.float32), _IR.size
    end = _IR.size + 4 * header.flag
    if end > len(record):
        raise DataError(f"{where}: IRHeader announces {header.flag} labels but the record has only "
                        f"{len(record) - _IR.size} bytes after its header")
    labels = np.frombuffer(record, dtype="<f4", count=header.flag, offset=_IR.size).astype(np.float32)
    return header, labels, end


# -- frames: writing ----------------------------------------------------------------------------------

def _frame(cflag: int, part: bytes | memoryview) -> bytes:
    pad = (-len(part)) % 4
    return _FRAME.pack(MAGIC, (cflag << 29) | len(part)) + bytes(part) + b"\0" * pad


def encode_record(data: bytes) -> bytes:
    """One record framed exactly as dmlc's RecordIOWriter frames it (split at 4-aligned magic)."""
    if len(data) >= MAX_PART:
        raise DataError(f"RecordIO: a record must be smaller than 2**29 bytes, got {len(data)}")
    view = memoryview(data)
    out: list[bytes] = []
    start = 0
    pos = data.find(_MAGIC_BYTES)
    while pos != -1:
        if pos % 4 == 0 and pos + 4 <= (len(data) // 4) * 4:
            out.append(_frame(1 if start == 0 else 2, view[start:pos]))
            start = pos + 4
            pos = data.find(_MAGIC_BYTES, start)
        else:
            pos = data.find(_MAGIC_BYTES, pos + 1)
    out.append(_frame(3 if start else 0, view[start:]))
    return b"".join(out)


class RecordIOWriter:
    """Writes a `.rec` and its `.idx` as MXNet's `MXIndexedRecordIO` does (`key\\toffset` lines)."""

    def __init__(self, rec_path: str | os.PathLike, idx_path: str | os.PathLike) -> None:
        self._rec = open(rec_path, "wb")
        self._idx = open(idx_path, "w", encoding="ascii", newline="\n")
        self.count = 0

    def write_record(self, key: int | str, record: bytes) -> None:
        """Appends one record (already packed) under `key`."""
        self._idx.write(f"{key}\t{self._rec.tell()}\n")
        self._rec.write(encode_record(record))
        self.count += 1

    def write(self, label: float | Sequence[float], payload: bytes, key: int | None = None) -> None:
        """Packs and appends `payload` with `label`; key and IRHeader id default to the count."""
        k = self.count if key is None else key
        self.write_record(k, pack(label, payload, id=int(k)))

    def close(self) -> None:
        self._rec.close()
        self._idx.close()

    def __enter__(self) -> "RecordIOWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_recordio(rec_path: str | os.PathLike, idx_path: str | os.PathLike,
                   items: Iterable[tuple[float | Sequence[float], bytes]]) -> int:
    """Writes `(label, payload)` items as a RecordIO pair (keys 0, 1, ...); returns the count."""
    with RecordIOWriter(rec_path, idx_path) as w:
        for label, payload in items:
            w.write(label, payload)
        return w.count


# -- reading --------------------------------------------------------------------------------------------

def read_index(idx_path: str | os.PathLike, rec_size: int | None = None,
               on_bad: Callable[[str, int, str], None] | None = None) -> list[tuple[str, int]]:
    """(key, offset) per line of an `.idx` file, in file order; offsets checked against `rec_size`.

    A bad line raises DataError; with `on_bad`, `on_bad(message, line number, reason)` is called
    instead and the line left out."""
    path = os.fspath(idx_path)
    why = list_too_large(path)
    try:  # never blocks on a FIFO
        lines = [] if why else bytes(host_io.read_file(path).numpy()).decode("utf-8", "replace").splitlines()
    except OSError as e:
        raise DataError(f"RecordIO index {path}: cannot be read ({e.strerror or e})") from None
    except MemoryError:
        why = "not enough memory to read it"
    if why:
        raise DataError(f"RecordIO index {path}: {why}")
    out: list[tuple[str, int]] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) == 2 and _DIGITS.fullmatch(parts[1]):
            parts[1] = parts[1].lstrip("0") or "0"
        if len(parts) != 2 or not _DIGITS.fullmatch(parts[1]):
            why = f"expected 'key<TAB>offset', got {line!r}"
        elif len(parts[1]) > 19:  # int() of 4300+ digits raises ValueError
            why = f"offset of {len(parts[1])} digits does not fit 64 bits"
        elif rec_size is not None and int(parts[1]) + _FRAME.size > rec_size:
            why = f"offset {parts[1]} is beyond the end of the record file ({rec_size} bytes)"
        else:
            out.append((parts[0], int(parts[1])))
            continue
        message = f"RecordIO index {path}, line {no}: {why}"
        if on_bad is None:
            raise DataError(message)
        on_bad(message, no, why)
    return out


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


class RecordFile:
    """One `.rec` file opened for random access, read with pread, never memory-mapped: records
    handed out as views of a map (zero-copy) ended the process with SIGBUS when touched after
    another process truncated the file; pread makes a shrink a DataError naming the record, and
    what was read before stays valid."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self._fd = -1
        self._buffers = BatchBuffers(keep=4)
        try:
            self._fd = host_io.open_regular(self.path)  # never blocks on a FIFO
        except OSError as e:
            raise DataError(f"RecordIO file {self.path}: cannot be opened ({e.strerror or e})") from None
        self.size = self.opened_size = os.fstat(self._fd).st_size

    def read_ahead(self) -> None:
        """DALI's `read_ahead`: the kernel starts reading the whole file into the page cache now."""
        if self.size > 0 and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self._fd, 0, 0, os.POSIX_FADV_WILLNEED)

    def _check_size(self) -> None:
        """Before each record or batch: a file that shrank gets its new size (one fstat, ~1 us),
        so records past its end are refused saying that it shrank."""
        self.size = min(self.size, os.fstat(self._fd).st_size)

    def _past_end(self, what: str) -> str:
        """"<what> runs past the end of the file (N bytes)", saying so first if the file shrank."""
        if self.size < self.opened_size:
            return (f"the file shrank while being read ({self.opened_size} bytes when opened, "
                    f"{self.size} now): {what} runs past its end")
        return f"{what} runs past the end of the file ({self.size} bytes)"

    def _read(self, start: int, n: int) -> bytearray:
        data = bytearray(n)
        with memoryview(data) as view:
            got = host_io.pread_into(self._fd, view, start)
        if got != n:  # shrank since the size check
            self.size = min(self.size, os.fstat(self._fd).st_size)
            raise DataError(f"{self.path}: {self._past_end(f'reading {n} bytes at byte {start}')}")
        return data

    def simple_records(self, offsets: np.ndarray) -> tuple[torch.Tensor, np.ndarray, np.ndarray, np.ndarray] | None:
        """For records at `offsets` (int64), each in one frame with a flag-0 IRHeader (one label,
        the usual case): (buffer, payload offsets in it, payload sizes, labels), read in two C
        calls (headers, then payloads) instead of Python per record. None when any record is
        otherwise (multi-part, several labels, corrupt, past the end, shrunk away meanwhile):
        `record` then reads them one by one and says what is wrong."""
        self._check_size()
        n = len(offsets)
        if n == 0:
            return None
        off = np.asarray(offsets, dtype=np.int64)
        if (off < 0).any() or (off + _FRAME.size + _IR.size > self.size).any():
            return None
        head = torch.empty(n * 16, dtype=torch.uint8)  # frame (magic, lrec), IRHeader flag, label
        if (host_io.pread_ranges(self._fd, off, np.full(n, 16), head, np.arange(n) * 16) != 16).any():
            return None
        words = head.numpy().view("<u4").reshape(n, 4)
        lrec = words[:, 1].astype(np.int64)
        length = lrec & _LEN_MASK
        start = off + _FRAME.size
        if (words[:, 0] != MAGIC).any() or (lrec >> 29 != 0).any() or (length < _IR.size).any() \
                or (start + length > self.size).any() or (words[:, 2] != 0).any():
            return None
        labels = words[:, 3].copy().view("<f4").astype(np.float32)
        sizes = length - _IR.size
        dst = np.zeros(n, dtype=np.int64)
        np.cumsum(sizes[:-1], out=dst[1:])
        try:
            # a block used before, once its batch is gone (huge pages, no page faults per batch)
            buf = self._buffers.empty((int(sizes.sum()),), torch.uint8)
        except (RuntimeError, MemoryError):  # a batch of records near 2^29 bytes each: per record
            return None
        if (host_io.pread_ranges(self._fd, start + _IR.size, sizes, buf, dst) != sizes).any():
            return None
        return buf, dst, sizes, labels

    def spans(self, offset: int, where: str) -> list[_Span]:
        """Byte ranges of one record's parts, starting at the frame at `offset`."""
        self._check_size()
        spans: list[_Span] = []
        pos = offset
        while True:
            if pos + _FRAME.size > self.size:
                raise DataError(f"{where}: file is truncated: "
                                f"{self._past_end(f'the frame header at byte {pos}')}")
            magic, lrec = _FRAME.unpack(self._read(pos, _FRAME.size))
            if magic != MAGIC:
                raise DataError(f"{where}: bad magic 0x{magic:08x} at byte {pos} (expected "
                                f"0x{MAGIC:08x}); the file or its .idx offset is corrupt")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            start = pos + _FRAME.size
            if start + length > self.size:
                raise DataError(f"{where}: {self._past_end(f'record length {length} at byte {pos}')}")
            spans.append(_Span(start, start + length))
            if cflag in (0, 3):
                if (cflag == 3) != (len(spans) > 1):
                    raise DataError(f"{where}: continuation flag {cflag} at byte {pos} does not "
                                    "match the record's parts")
                return spans
            if cflag == 1 and len(spans) > 1 or cflag == 2 and len(spans) == 1:
                raise DataError(f"{where}: unexpected continuation flag {cflag} at byte {pos}")
            pos = start + length + (-length) % 4

    def record(self, offset: int, where: str = "") -> bytearray:
        """The bytes of the record whose first frame is at `offset`, in a new buffer."""
        spans = self.spans(offset, where or f"{self.path}@{offset}")
        if len(spans) == 1:
            return self._read(spans[0].start, spans[0].end - spans[0].start)
        joined = bytearray()
        for k, s in enumerate(spans):
            if k:
                joined += _MAGIC_BYTES
            joined += self._read(s.start, s.end - s.start)
        return joined

    def next_offset(self, offset: int) -> int:
        """Offset of the frame after the record starting at `offset`."""
        last = self.spans(offset, f"{self.path}@{offset}")[-1]
        return last.end + (-(last.end - last.start)) % 4

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass

    def __enter__(self) -> "RecordFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_records(rec_path: str | os.PathLike) -> Iterable[tuple[int, bytes]]:
    """(offset, record bytes) for every record of a `.rec` file, in order, without an index."""
    with RecordFile(rec_path) as f:
        pos = 0
        while pos < f.size:
            yield pos, bytes(f.record(pos, f"RecordIO file {f.path}, record at byte {pos}"))
            pos = f.next_offset(pos)


def build_index(rec_path: str | os.PathLike, idx_path: str | os.PathLike) -> int:
    """Writes the `.idx` of a `.rec` by scanning it (keys 0, 1, ...; as DALI's rec2idx)."""
    n = 0
    with open(idx_path, "w", encoding="ascii", newline="\n") as out:
        for offset, _ in iter_records(rec_path):
            out.write(f"{n}\t{offset}\n")
            n += 1
    return n
