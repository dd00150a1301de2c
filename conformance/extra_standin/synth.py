"""Small deterministic payloads for the data sets: JPEG/PNG bytes of smooth synthetic pictures (a
gradient plus a few shapes: they compress to a few KB, and decoders agree on them), WAV bytes."""
from __future__ import annotations

import io
import struct

import numpy as np
from PIL import Image


def picture(rng: np.random.Generator, w: int, h: int, channels: int = 3) -> np.ndarray:
    """An HxWxC uint8 picture: a random linear gradient per channel and a few flat rectangles."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((h, w, channels), np.float32)
    for c in range(channels):
        a, b, k = rng.uniform(-1, 1, 3)
        img[..., c] = 128 + 100 * (a * x / max(w, 1) + b * y / max(h, 1)) * k
    for _ in range(int(rng.integers(1, 4))):
        x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
        x1, y1 = x0 + int(rng.integers(1, w // 2 + 2)), y0 + int(rng.integers(1, h // 2 + 2))
        img[y0:y1, x0:x1] = rng.integers(0, 256, channels)
    return np.clip(img, 0, 255).astype(np.uint8)


def encode(img: np.ndarray, fmt: str = "JPEG", quality: int = 90) -> bytes:
    pil = Image.fromarray(img[..., 0] if img.shape[-1] == 1 else img)
    buf = io.BytesIO()
    if fmt == "JPEG":
        pil.save(buf, format="JPEG", quality=quality)
    else:
        pil.save(buf, format=fmt)
    return buf.getvalue()


def jpeg(rng: np.random.Generator, w: int, h: int, channels: int = 3) -> bytes:
    return encode(picture(rng, w, h, channels))


def wav(rng: np.random.Generator, seconds: float, rate: int = 16000) -> bytes:
    """A mono 16-bit PCM WAV: a few sines and a little noise."""
    t = np.arange(int(seconds * rate)) / rate
    sig = sum(rng.uniform(0.1, 0.3) * np.sin(2 * np.pi * rng.uniform(100, 2000) * t) for _ in range(3))
    sig = sig + rng.normal(0, 0.01, t.shape)
    pcm = (np.clip(sig, -1, 1) * 32767).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
            + b"data" + struct.pack("<I", len(pcm)) + pcm)


def pad_jpeg(data: bytes, extra: int) -> bytes:
    """`data` (a JPEG) grown by exactly `extra` bytes of COM segments after SOI: decoders skip them,
    so the picture is unchanged. Used to place records at the byte offsets DALI's tests expect."""
    if extra == 0:
        return data
    if extra < 4:
        raise ValueError("a COM segment takes at least 4 bytes")
    segs = []
    while extra:
        take = min(extra, 65537)
        if 0 < extra - take < 4:  # keep the remainder a whole segment
            take -= 4
        segs.append(b"\xff\xfe" + struct.pack(">H", take - 2) + b"\0" * (take - 4))
        extra -= take
    return data[:2] + b"".join(segs) + data[2:]
