"""Regenerates tests/reference/audio_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.audio_make      # from the repository root

Every DALI expectation in tests/test_ops_audio_*.py and tests/test_readers_nemo_asr.py comes from this file's output. Needs a Python
with `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from . import audio_cases as C
from . import audio_nemo as N
from . import table_file


def run_case(name: str) -> dict:
    from nvidia.dali import fn, pipeline_def
    graph, data, layout = C.CASES[name]

    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():  # type: ignore[no-untyped-def]
        out = graph(fn, fn.external_source(source=lambda: data, batch=True, layout=layout))
        return tuple(out) if isinstance(out, (list, tuple)) else out

    try:
        p = pipe()
        p.build()
        outs = p.run()
    except Exception as e:  # noqa: BLE001 - DALI reports every refusal as a RuntimeError
        return {"error": table_file.dali_error(e)}
    return {"outputs": [[np.array(t) for t in o] for o in outs], "layouts": [o.layout() for o in outs]}


def main() -> None:
    from nvidia.dali import fn, pipeline_def
    tables: dict[str, np.ndarray] = {}
    for name in C.CASES:
        r = run_case(name)
        if "error" in r:
            tables[f"{name}/error"] = np.array(r["error"])
            continue
        tables[f"{name}/n_out"] = np.array(len(r["outputs"]))
        for k, (samples, layout) in enumerate(zip(r["outputs"], r["layouts"])):
            tables[f"{name}/{k}/layout"] = np.array(layout)
            for i, s in enumerate(samples):
                tables[f"{name}/{k}/{i}"] = s
    for name in N.CASES:
        with tempfile.TemporaryDirectory() as d:
            try:
                batches = N.run(fn, pipeline_def, d, name)
            except Exception as e:  # noqa: BLE001 - DALI reports every refusal as a RuntimeError
                tables[f"nemo_{name}/error"] = np.array(table_file.dali_error(e))
                continue
        tables[f"nemo_{name}/shape"] = np.array([len(batches), len(batches[0])])
        for b, outs in enumerate(batches):
            for k, samples in enumerate(outs):
                for i, s in enumerate(samples):
                    tables[f"nemo_{name}/{b}/{k}/{i}"] = s
    out = Path(__file__).with_name(C.TABLES)
    print(table_file.save(out, tables, "tests.reference.audio_make"))


if __name__ == "__main__":
    main()
