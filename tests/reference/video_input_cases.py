"""The experimental.inputs.video cases compared with DALI 2.4's CPU backend (tests/test_video_input.py);
make_video_input_tables.py writes DALI's outputs for them to `video_input_tables.npz`. The videos
are video_cases.py's stored ones."""
from __future__ import annotations

TABLES = "video_input_tables.npz"

# (videos fed in order, batch_size, sequence_length, last_sequence_policy)
CASES: list[tuple[tuple[str, ...], int, int, str]] = [
    (("b/vp9.webm",), 2, 5, "partial"),
    (("b/vp9.webm",), 2, 5, "pad"),
    (("b/vp9.webm",), 3, 4, "partial"),
    (("a/vp8.webm", "b/vp9.webm"), 3, 4, "pad"),
    (("a/mjpeg.avi",), 1, 3, "partial"),
    (("b/odd.mkv", "a/vp8.webm"), 4, 1, "partial"),
]
