"""Regenerates tests/reference/video_input_tables.npz: what DALI 2.4's CPU backend gives for
fn.experimental.inputs.video fed the stored videos (video_files.npz, see video_cases.py).

    /work/dali-venv/bin/python -m tests.reference.make_video_input_tables   # from the repository root

Needs `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

import numpy as np
from nvidia.dali import fn, pipeline_def

from . import table_file
from . import video_cases as C
from .video_input_cases import CASES, TABLES

def run(videos: tuple[str, ...], bs: int, length: int, policy: str,
        files: dict[str, bytes]) -> tuple[list[list[np.ndarray]], str]:
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, exec_pipelined=False,
                  exec_async=False, prefetch_queue_depth=1)
    def pipe():
        return fn.experimental.inputs.video(name="V", sequence_length=length,
                                            last_sequence_policy=policy, blocking=False)
    p = pipe()
    p.build()
    for v in videos:
        p.feed_input("V", np.array([[np.frombuffer(files[v], np.uint8)]]))
    its: list[list[np.ndarray]] = []
    while True:
        try:
            (out,) = p.run()
        except Exception as e:  # noqa: BLE001 - the end: DALI's error when no video is left
            return its, table_file.dali_error(e)
        its.append([np.array(out.at(i)) for i in range(len(out))])


def build() -> dict[str, np.ndarray]:
    files = C.load_files()
    t: dict[str, np.ndarray] = {}
    for c, case in enumerate(CASES):
        its, err = run(*case, files)
        t[f"{c}/n"] = np.array(len(its))
        t[f"{c}/end_error"] = np.frombuffer(err.encode(), np.uint8)
        for i, batch in enumerate(its):
            t[f"{c}/{i}/n"] = np.array(len(batch))
            for s, seq in enumerate(batch):
                t[f"{c}/{i}/{s}"] = seq
    return t


def main() -> None:
    out = C.HERE / TABLES
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.make_video_input_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
