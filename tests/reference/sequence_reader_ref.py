"""readers.sequence cases, shared by the test (tests/test_readers_sequence.py) and the generator.

`/work/dali-venv/bin/python -m tests.reference.sequence_reader_ref` writes a small stream tree
(PNG frames of noise, made with PIL), runs each case through DALI 2.4 once and stores in
sequence_reader_tables.npz the tree's files (their bytes, so the test rebuilds the very same tree),
DALI's batches and reader_meta, and the errors of the cases DALI refuses.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

TABLES = Path(__file__).with_name("sequence_reader_tables.npz")

# stream -> number of frames (size 5 x 6); "d" holds a text file and a nested folder too; a
# frame directly under the root is not part of any stream
STREAMS = {"b": 4, "a": 7, "c": 2, "d": 3}

# name -> (reader args, batch size, batches)
CASES: dict[str, tuple[dict[str, Any], int, int]] = {
    "len3": ({"sequence_length": 3}, 3, 4),
    "step_stride": ({"sequence_length": 2, "step": 2, "stride": 2}, 4, 2),
    "gray": ({"sequence_length": 2, "image_type": "GRAY"}, 5, 2),
    "bgr_step3": ({"sequence_length": 1, "step": 3, "image_type": "BGR"}, 2, 3),
    "shard_1_of_2": ({"sequence_length": 2, "num_shards": 2, "shard_id": 1}, 3, 3),
    "padded_shards": ({"sequence_length": 3, "num_shards": 3, "shard_id": 2, "pad_last_batch": True}, 2, 3),
}
ERRORS: dict[str, dict[str, Any]] = {
    "length_0": {"sequence_length": 0},
    "stride_0": {"sequence_length": 2, "stride": 0},
    "step_negative": {"sequence_length": 2, "step": -1},
    "too_long": {"sequence_length": 8},
    "ycbcr": {"sequence_length": 2, "image_type": "YCbCr"},
}


def make_tree_files() -> dict[str, bytes]:
    """Relative path -> bytes of the stream tree (PIL-encoded PNGs)."""
    from PIL import Image
    rng = np.random.default_rng(5)
    files: dict[str, bytes] = {}
    for s, n in STREAMS.items():
        for k in range(n):
            buf = io.BytesIO()
            Image.fromarray(rng.integers(0, 256, (5, 6, 3), dtype=np.uint8)).save(buf, "PNG")
            files[f"{s}/{k:03d}.png"] = buf.getvalue()
    files["d/notes.txt"] = b"not a frame"
    files["d/nested/000.png"] = files["a/000.png"]
    files["top.png"] = files["a/001.png"]
    return files


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def main() -> None:
    import tempfile

    from nvidia.dali import fn, pipeline_def, types

    from .table_file import dali_error, save
    files = make_tree_files()
    tables: dict[str, np.ndarray] = {"files": np.frombuffer(json.dumps(
        {k: v.hex() for k, v in files.items()}).encode(), np.uint8)}
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(Path(tmp), files)

        def pipe_for(args: dict[str, Any], bs: int):
            kw = dict(args)
            if "image_type" in kw:
                kw["image_type"] = getattr(types, kw["image_type"])

            @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
            def pipe():
                return fn.readers.sequence(file_root=tmp, name="r", **kw)
            p = pipe()
            p.build()
            return p

        for name, (args, bs, batches) in CASES.items():
            p = pipe_for(args, bs)
            tables[f"{name}/meta"] = np.frombuffer(json.dumps(p.reader_meta("r")).encode(), np.uint8)
            for b in range(batches):
                (out,) = p.run()
                assert out.layout() == "FHWC"
                for i in range(len(out)):
                    tables[f"{name}/{b}/{i}"] = np.array(out[i])
        for name, args in ERRORS.items():
            try:
                pipe_for(args, 2).run()
                msg = "no error"
            except RuntimeError as e:
                msg = dali_error(e)
            tables[f"error/{name}"] = np.frombuffer(msg.encode(), np.uint8)
    save(TABLES, tables, "tests.reference.sequence_reader_ref")
    for k, v in tables.items():
        if k.startswith("error/") or k.endswith("/meta"):
            print(k, bytes(v).decode())


if __name__ == "__main__":
    main()
