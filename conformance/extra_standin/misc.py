"""Smaller sets: db/sequence/frames (PNG frames in two streams), db/audio/wav (16 kHz mono WAVs),
db/3D/MRI/Knee/npy_2d_slices/STU00001 (int16 .npy slices in series folders)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import synth


def make(root: Path) -> None:
    rng = np.random.default_rng(606)
    frames = root / "db" / "sequence" / "frames"
    for stream, numbers in (("0", range(1, 11)), ("1", range(11, 17))):
        (frames / stream).mkdir(parents=True, exist_ok=True)
        for n in numbers:
            (frames / stream / f"{n:05d}.png").write_bytes(synth.encode(synth.picture(rng, 48, 32), "PNG"))

    wav = root / "db" / "audio" / "wav"
    wav.mkdir(parents=True, exist_ok=True)
    for i in range(12):
        (wav / f"237-134500-{i:04d}.wav").write_bytes(synth.wav(rng, 0.5 + 0.05 * i))

    npy = root / "db" / "3D" / "MRI" / "Knee" / "npy_2d_slices" / "STU00001"
    for s, count in enumerate((5, 9, 2, 6), 1):
        (npy / f"SER{s:05d}").mkdir(parents=True, exist_ok=True)
        for k in range(count):
            np.save(npy / f"SER{s:05d}" / f"{k}.npy", rng.integers(0, 4096, (32, 24)).astype(np.int16))
