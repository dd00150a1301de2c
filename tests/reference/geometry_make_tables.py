"""Regenerates tests/reference/geometry_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.geometry_make_tables      # from the repository root

Each case of geometry_cases.py runs through DALI; its outputs are stored per sample
(`name/output/sample`), or, when DALI refuses the case, its error's first line (`name/error`).
Needs a Python with `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import geometry_cases as G
from . import table_file


def run_dali(case: G.Case) -> list[list[np.ndarray]]:
    from nvidia.dali import fn, pipeline_def, types
    return G.run_case(case, fn, pipeline_def, types)


def build() -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    for name, case in G.CASES.items():
        try:
            outs = run_dali(case)
        except Exception as e:  # DALI refuses: the tests check torch_dali refuses too
            msg = table_file.dali_error(e)
            t[f"{name}/error"] = np.frombuffer(msg.encode(), np.uint8)
            continue
        for k, samples in enumerate(outs):
            if name.startswith("dist/"):  # many small draws: one stacked array per output
                t[f"{name}/{k}/stack"] = np.stack(samples)
                continue
            for i, a in enumerate(samples):
                t[f"{name}/{k}/{i}"] = a
    return t


def main() -> None:
    out = Path(__file__).with_name(G.TABLES)
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.geometry_make_tables")
    errors = sorted(k[:-6] for k in tables if k.endswith("/error"))
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays); refused by DALI: {errors}")


if __name__ == "__main__":
    main()
