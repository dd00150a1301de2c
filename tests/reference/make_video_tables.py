"""Regenerates tests/reference/video_tables.npz from NVIDIA DALI 2.4's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.make_video_tables     # from the repository root

Reads the stored videos (video_files.npz; see video_cases.py). Needs `nvidia.dali`; never imports
torch_dali.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from nvidia.dali import fn, pipeline_def

from . import table_file
from . import video_cases as C


def decoder(name: str, kw: dict, files: dict[str, bytes]) -> dict[str, np.ndarray]:
    data = np.frombuffer(files[name], np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.video(fn.external_source(source=lambda: [data], batch=True), **kw)

    try:
        p = pipe()
        p.build()
        return {"video": np.array(p.run()[0].at(0))}
    except Exception as e:  # noqa: BLE001 - the case's expected outcome is DALI's error
        return {"error": np.frombuffer(table_file.dali_error(e).encode(), np.uint8)}


def reader(case: str, root: Path) -> list[dict[str, np.ndarray]]:
    kw = C.reader_kwargs(case, root)
    names = ["video"]
    if "file_root" in kw or "labels" in kw:
        names.append("label")
    if kw.get("enable_frame_num"):
        names.append("frame_num")
    if kw.get("enable_timestamps"):
        names.append("timestamps")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=3)
    def pipe():
        outs = fn.experimental.readers.video(name="R", device="cpu", **kw)
        return tuple(outs) if isinstance(outs, (list, tuple)) else (outs,)

    p = pipe()
    p.build()
    rows = []
    for _ in range(p.epoch_size("R")):
        out = p.run()
        rows.append({n: np.array(t.at(0)) for n, t in zip(names, out)})
    return rows


def build() -> dict[str, np.ndarray]:
    files = C.load_files()
    t: dict[str, np.ndarray] = {}
    for i, (name, kw) in enumerate(C.DECODER_CASES):
        for k, v in decoder(name, kw, files).items():
            t[f"decoder/{i}/{k}"] = v
    with tempfile.TemporaryDirectory() as tmp:
        C.write_tree(Path(tmp))
        for case in C.READER_CASES:
            rows = reader(case, Path(tmp))
            t[f"reader/{case}/n"] = np.array(len(rows))
            for i, row in enumerate(rows):
                for k, v in row.items():
                    t[f"reader/{case}/{i}/{k}"] = v
    return t


def main() -> None:
    out = C.HERE / C.TABLES
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.make_video_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
