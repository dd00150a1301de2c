"""The video cases compared with DALI 2.4's CPU backend (tests/test_ref_video.py).

The test videos are made with PyAV and stored, encoded, in `video_files.npz` (so the comparison does
not depend on the encoder's version): `python -m tests.reference.video_cases` (a Python with `av`)
rewrites them; then `/work/dali-venv/bin/python -m tests.reference.make_video_tables` writes DALI's
outputs for them to `video_tables.npz`. DALI's CPU backend decodes VP8, VP9 and MJPEG only, so the
compared videos use those codecs.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

FILES = "video_files.npz"
TABLES = "video_tables.npz"
HERE = Path(__file__).parent

# name -> (encoder, container format, frames, width, height, pixel format, stream colorspace or None)
VIDEOS: dict[str, tuple[str, str, int, int, int, str, int | None]] = {
    "a/vp8.webm": ("libvpx", "webm", 7, 48, 32, "yuv420p", None),
    "a/mjpeg.avi": ("mjpeg", "avi", 5, 40, 24, "yuvj420p", None),
    "b/vp9.webm": ("libvpx-vp9", "webm", 12, 32, 16, "yuv420p", None),
    "b/odd.mkv": ("mjpeg", "matroska", 4, 35, 21, "yuvj420p", None),
    "c/bt709.webm": ("libvpx-vp9", "webm", 4, 48, 32, "yuv420p", 1),
}


def pattern(i: int, w: int, h: int) -> np.ndarray:
    """Frame i of a test video: gradients that move from frame to frame (RGB, uint8)."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([(x * 5 + i * 20) % 256, (y * 7 + i * 10) % 256, ((x + y) * 3 + i * 30) % 256],
                    -1).astype(np.uint8)


def encode(codec: str, fmt: str, n: int, w: int, h: int, pix: str, colorspace: int | None = None,
           rate: int = 25) -> bytes:
    """A video of `n` pattern frames, encoded with PyAV."""
    import av
    buf = io.BytesIO()
    out = av.open(buf, "w", format=fmt)
    s = out.add_stream(codec, rate=rate)
    s.width, s.height, s.pix_fmt = w, h, pix
    if colorspace is not None:
        s.codec_context.colorspace = colorspace
        s.codec_context.color_range = 1
    if codec == "libx264":
        s.options = {"threads": "1"}
    for i in range(n):
        for p in s.encode(av.VideoFrame.from_ndarray(pattern(i, w, h), format="rgb24")):
            out.mux(p)
    for p in s.encode():
        out.mux(p)
    out.close()
    return buf.getvalue()


def load_files() -> dict[str, bytes]:
    with np.load(HERE / FILES) as z:
        return {k: z[k].tobytes() for k in z.files}


def write_tree(root: Path) -> dict[str, str]:
    """The stored videos as files under `root` (class folders a, b, c); name -> path."""
    out = {}
    for name, data in load_files().items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        out[name] = str(p)
    return out


# decoders.video: (video name, arguments)
DECODER_CASES: list[tuple[str, dict[str, Any]]] = [
    ("a/vp8.webm", {}), ("a/mjpeg.avi", {}), ("b/vp9.webm", {}), ("b/odd.mkv", {}), ("c/bt709.webm", {}),
    ("a/vp8.webm", {"frames": [0, 3, 1, 3, 9]}),
    ("a/vp8.webm", {"frames": [0, 9, -2], "pad_mode": "edge"}),
    ("a/vp8.webm", {"frames": [-2, 8], "pad_mode": "reflect"}),
    ("a/mjpeg.avi", {"start_frame": 1, "end_frame": 6, "stride": 2}),
    ("b/vp9.webm", {"start_frame": 2, "sequence_length": 4, "stride": 3, "fill_value": [7, 8, 9]}),
    ("a/vp8.webm", {"sequence_length": 10, "pad_mode": "symmetric"}),
    ("a/vp8.webm", {"sequence_length": 10, "stride": 2, "pad_mode": "none"}),
    ("a/mjpeg.avi", {"start_frame": -1, "sequence_length": 3}),
    ("a/mjpeg.avi", {"start_frame": 3, "end_frame": 9, "pad_mode": "none"}),
    ("a/vp8.webm", {"start_frame": 9}),                        # past the end: an error
    ("a/vp8.webm", {"frames": [0, 9], "pad_mode": "none"}),    # out of range with 'none': an error
]

# experimental.readers.video over the tree: (name, arguments; "filenames" are names in VIDEOS)
READER_CASES: dict[str, dict[str, Any]] = {
    "root": {"file_root": "", "sequence_length": 3, "enable_frame_num": True, "enable_timestamps": True},
    "names": {"filenames": ["a/vp8.webm", "b/vp9.webm"], "sequence_length": 2, "stride": 2, "step": 3,
              "enable_frame_num": "sequence"},
    "labels_pad": {"filenames": ["a/mjpeg.avi", "b/odd.mkv"], "labels": [4, 9], "sequence_length": 3,
                   "pad_mode": "constant", "fill_value": [200], "enable_frame_num": "sequence",
                   "enable_timestamps": True},
    "reflect": {"filenames": ["a/vp8.webm"], "sequence_length": 5, "stride": 2, "step": 2,
                "pad_mode": "reflect", "enable_timestamps": True},
    "uniform": {"filenames": ["a/vp8.webm", "a/mjpeg.avi"], "sequence_length": 9, "uniform_sample": True,
                "enable_frame_num": "sequence"},
    "shard": {"file_root": "", "sequence_length": 2, "num_shards": 3, "shard_id": 1, "enable_frame_num": True},
    "bt709": {"filenames": ["c/bt709.webm"], "sequence_length": 4, "enable_timestamps": True},
}


def reader_kwargs(case: str, root: Path) -> dict[str, Any]:
    kw = dict(READER_CASES[case])
    if "file_root" in kw:
        kw["file_root"] = str(root)
    if "filenames" in kw:
        kw["filenames"] = [str(root / n) for n in kw["filenames"]]
    return kw


def main() -> None:
    files = {name: np.frombuffer(encode(*spec), np.uint8) for name, spec in VIDEOS.items()}
    np.savez_compressed(HERE / FILES, **files)
    print(f"wrote {HERE / FILES}: " + ", ".join(f"{k} {len(v)} B" for k, v in files.items()))


if __name__ == "__main__":
    main()
