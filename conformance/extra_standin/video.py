"""db/video/vfr/test_1.mp4 and test_2.mp4: small VP9 MP4s with variable frame timing (one frame in
three lasts twice as long), 60 frames each. VP9 because DALI 2.4's CPU video decoder takes it
(H.264 and MPEG-4 are GPU-only there). Written with PyAV; skipped, with a note, where PyAV is not
installed (DALI's CPU video cases then stay not runnable)."""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np


def _write(path: Path, seed: int, frames: int = 60, w: int = 64, h: int = 48) -> None:
    import av
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, 3)
    with av.open(str(path), "w") as c:
        s = c.add_stream("libvpx-vp9", rate=25, options={"threads": "1", "deadline": "good", "cpu-used": "8"})
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        s.time_base = Fraction(1, 1000)
        t = 0
        for i in range(frames):
            img = np.empty((h, w, 3), np.uint8)
            img[...] = (base + 4 * i) % 256
            img[:, (3 * i) % w] = 255  # a moving bar: every frame differs
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts, f.time_base = t, Fraction(1, 1000)
            t += 80 if i % 3 == 2 else 40
            for p in s.encode(f):
                c.mux(p)
        for p in s.encode():
            c.mux(p)


def make(root: Path) -> None:
    try:
        import av  # noqa: F401
    except ImportError:
        print("extra_standin: PyAV is not installed; db/video/vfr not written", file=sys.stderr)
        return
    folder = root / "db" / "video" / "vfr"
    folder.mkdir(parents=True, exist_ok=True)
    for i in (1, 2):
        _write(folder / f"test_{i}.mp4", 800 + i)
