"""WAV parsing with the standard library only (RIFF, little-endian): PCM 8 (unsigned), 16, 24 and 32
bits, IEEE float 32 and 64 bits, plain or WAVE_FORMAT_EXTENSIBLE. Untrusted bytes: every field is
checked and every failure is a DataError naming `where`; nothing is read past the buffer and the
output is never larger than the data the buffer holds.

`decode` returns the samples as DALI 2.4 (through libsndfile) reads them: float32 in [-1, 1)
(x / 2^(bits-1); 8-bit is unsigned, centered at 128; float files as stored), or int16/int32 where
PCM is shifted to the width (truncating) and float files are rounded to the nearest integer
without scaling.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import torch

from ..errors import DataError

PCM, FLOAT, EXTENSIBLE = 1, 3, 0xFFFE


@dataclass(frozen=True)
class WavInfo:
    fmt: int  # PCM or FLOAT
    channels: int
    rate: int
    bits: int
    data_offset: int
    frames: int


class UnsupportedEncoding(DataError):
    """A well-formed WAV whose samples are not PCM or IEEE float (A-law, mu-law, ADPCM...): libsndfile,
    where installed (`soundfile`), reads these."""

    def __init__(self, message: str, tag: int) -> None:
        super().__init__(message)
        self.tag = tag


def container(raw: bytes) -> str:
    """'wav', 'flac', 'ogg' or '' from the first bytes."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WAVE":
        return "wav"
    if raw[:4] == b"fLaC":
        return "flac"
    if raw[:4] == b"OggS":
        return "ogg"
    return ""


def parse(raw: bytes, where: str) -> WavInfo:
    if container(raw) != "wav":
        raise DataError(f"{where}: not a WAV file (no RIFF/WAVE header)")
    pos, fmt_chunk, data = 12, None, None
    while pos + 8 <= len(raw) and data is None:
        cid, size = raw[pos:pos + 4], struct.unpack_from("<I", raw, pos + 4)[0]
        body = pos + 8
        if cid == b"fmt ":
            if size < 16 or body + size > len(raw):
                raise DataError(f"{where}: the WAV 'fmt ' chunk is {size} bytes; it needs 16 and must fit in the file")
            fmt_chunk = raw[body:body + size]
        elif cid == b"data":
            if fmt_chunk is None:
                raise DataError(f"{where}: the WAV 'data' chunk comes before any 'fmt ' chunk")
            data = (body, min(size, len(raw) - body))  # a truncated file keeps the frames it holds
        pos = body + size + (size & 1)
    if fmt_chunk is None or data is None:
        raise DataError(f"{where}: the WAV file has no {'fmt ' if fmt_chunk is None else 'data'} chunk")
    tag, channels, rate, _, align, bits = struct.unpack_from("<HHIIHH", fmt_chunk)
    if tag == EXTENSIBLE:
        if len(fmt_chunk) < 40:
            raise DataError(f"{where}: the WAV extensible 'fmt ' chunk is {len(fmt_chunk)} bytes, not 40")
        tag = struct.unpack_from("<H", fmt_chunk, 24)[0]
    if tag not in (PCM, FLOAT):
        raise UnsupportedEncoding(f"{where}: WAV encoding {tag:#06x} is not supported (only PCM and IEEE float)", tag)
    ok_bits = (8, 16, 24, 32) if tag == PCM else (32, 64)
    if bits not in ok_bits:
        raise DataError(f"{where}: {bits}-bit {'PCM' if tag == PCM else 'float'} WAV is not supported")
    if not 1 <= channels <= 1024 or rate <= 0:
        raise DataError(f"{where}: the WAV header says {channels} channels at {rate} Hz")
    if align != channels * bits // 8:
        raise DataError(f"{where}: the WAV block align is {align}, {channels} channels of {bits} bits need "
                        f"{channels * bits // 8}")
    return WavInfo(tag, channels, rate, bits, data[0], data[1] // align)


def _samples(raw: bytes, info: WavInfo) -> np.ndarray:
    """The stored values as int64 (PCM, 8-bit centered) or float64 (float), shape (frames, channels)."""
    n = info.frames * info.channels
    buf = np.frombuffer(raw, np.uint8, count=n * info.bits // 8, offset=info.data_offset)
    if info.fmt == FLOAT:
        with np.errstate(invalid="ignore"):  # NaNs stored in the file are kept, without a warning
            v = buf.view("<f4" if info.bits == 32 else "<f8").astype(np.float64)
    elif info.bits == 8:
        v = buf.astype(np.int64) - 128
    elif info.bits == 24:
        b = buf.reshape(-1, 3).astype(np.int64)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
    else:
        v = buf.view("<i2" if info.bits == 16 else "<i4").astype(np.int64)
    return v.reshape(info.frames, info.channels)


def decode(raw: bytes, info: WavInfo, dtype: torch.dtype) -> torch.Tensor:
    """(frames, channels) samples of `dtype` (float32, int16 or int32), read as libsndfile reads them."""
    if dtype == torch.float32 and info.fmt != FLOAT and info.bits in (8, 16):
        # straight to float32: these values and their power-of-two scaling are exact there, so the
        # same numbers as through int64 / float64 at a fraction of the time and memory
        n = info.frames * info.channels
        if info.bits == 16:
            f = np.frombuffer(raw, "<i2", count=n, offset=info.data_offset).astype(np.float32)
        else:
            f = np.frombuffer(raw, np.uint8, count=n, offset=info.data_offset).astype(np.float32) - 128
        f *= np.float32(1.0 / (1 << (info.bits - 1)))
        return torch.from_numpy(f.reshape(info.frames, info.channels))
    v = _samples(raw, info)
    if dtype == torch.float32:
        out = v if info.fmt == FLOAT else v / float(1 << (info.bits - 1))
        return torch.from_numpy(np.ascontiguousarray(out, np.float32))
    width = 16 if dtype == torch.int16 else 32
    if info.fmt == FLOAT:
        lim = float(1 << (width - 1))
        r = np.clip(np.rint(np.nan_to_num(v)), -lim, lim - 1)
    else:
        shift = width - info.bits
        r = v << shift if shift >= 0 else v >> -shift
    return torch.from_numpy(np.ascontiguousarray(r, np.int16 if width == 16 else np.int32))
