"""Smaller sets: db/sequence/frames (50 PNG frames in two streams), db/audio/wav (16 kHz mono WAVs),
db/3D/MRI/Knee/npy_2d_slices/STU00001 (int16 .npy slices in series folders)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import synth


def make(root: Path) -> None:
    rng = np.random.default_rng(606)
    frames = root / "db" / "sequence" / "frames"
    # 42 sequences of 5: the checkpointing tests want at least 3 per shard, 6 shards
    for stream, numbers in (("0", range(1, 31)), ("1", range(31, 51))):
        (frames / stream).mkdir(parents=True, exist_ok=True)
        for n in numbers:
            (frames / stream / f"{n:05d}.png").write_bytes(synth.encode(synth.picture(rng, 48, 32), "PNG"))

    wav = root / "db" / "audio" / "wav"
    wav.mkdir(parents=True, exist_ok=True)
    for i in range(40):  # the nemo_asr checkpointing test reads 0.3 + i/100 s from the i-th
        (wav / f"237-134500-{i:04d}.wav").write_bytes(synth.wav(rng, 0.8))

    npy = root / "db" / "3D" / "MRI" / "Knee" / "npy_2d_slices" / "STU00001"
    for s, count in enumerate((5, 9, 2, 12, 2, 12, 2, 4), 1):
        (npy / f"SER{s:05d}").mkdir(parents=True, exist_ok=True)
        for k in range(count):
            np.save(npy / f"SER{s:05d}" / f"{k}.npy", rng.integers(0, 4096, (32, 24)).astype(np.int16))
