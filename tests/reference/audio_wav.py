"""Small WAV files made in memory for the decoders.audio / readers.nemo_asr cases (standard library
and NumPy only, so the same bytes are made in the DALI venv and in the test run)."""
from __future__ import annotations

import struct

import numpy as np

_EXT_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


def riff(tag: int, channels: int, rate: int, bits: int, data: bytes, extensible: bool = False,
         extra: bytes = b"") -> bytes:
    block = channels * bits // 8
    if extensible:
        fmt = struct.pack("<HHIIHHHHI", 0xFFFE, channels, rate, rate * block, block, bits, 22, bits, 0)
        fmt += struct.pack("<H", tag) + _EXT_GUID_TAIL
    else:
        fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + extra + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pcm(bits: int, channels: int, frames: int, rate: int, seed: int, extensible: bool = False) -> bytes:
    rng = np.random.default_rng(seed)
    if bits == 8:
        return riff(1, channels, rate, 8, rng.integers(0, 256, (frames, channels), dtype=np.uint8).tobytes(),
                    extensible)
    lim = 1 << (bits - 1)
    v = rng.integers(-lim, lim, (frames, channels))
    v[0, 0], v[1, 0] = -lim, lim - 1  # the extremes
    if bits == 24:
        raw = v.astype("<i4").view(np.uint8).reshape(frames, channels, 4)[:, :, :3].tobytes()
    else:
        raw = v.astype("<i2" if bits == 16 else "<i4").tobytes()
    return riff(1, channels, rate, bits, raw, extensible)


def floats(bits: int, channels: int, frames: int, rate: int, seed: int) -> bytes:
    v = np.random.default_rng(seed).standard_normal((frames, channels)) * 0.5
    v[0, 0], v[1, 0], v[2, 0] = 1.5, -0.5, 2.5  # beyond [-1, 1] and rounding ties
    return riff(3, channels, rate, bits, v.astype("<f4" if bits == 32 else "<f8").tobytes())


def as_sample(data: bytes) -> np.ndarray:
    return np.frombuffer(data, np.uint8).copy()


def aiff(channels: int, rate: int, frames: np.ndarray) -> bytes:
    """16-bit big-endian PCM AIFF (FORM/COMM/SSND) of int16 `frames` (frames, channels)."""
    exp, mant = 16383 + rate.bit_length() - 1, rate << (64 - rate.bit_length())  # 80-bit extended rate
    comm = struct.pack(">hIh", channels, frames.shape[0], 16) + struct.pack(">HQ", exp, mant)
    ssnd = struct.pack(">II", 0, 0) + frames.astype(">i2").tobytes()
    body = b"AIFF" + b"COMM" + struct.pack(">I", len(comm)) + comm + b"SSND" + struct.pack(">I", len(ssnd)) + ssnd
    return b"FORM" + struct.pack(">I", len(body)) + body
