"""Regenerates tests/reference/readers_tables.npz: DALI 2.4's CPU readers on the data sets of
readers_cases.py (written to a temporary folder, as the tests write them).

    /work/dali-venv/bin/python -m tests.reference.readers_make_tables     # from the repository root

Needs a Python with `nvidia.dali` and NumPy, and the tools that write some of the data (`lmdb`,
`tfrecord`, `webdataset`: the cases of a missing one are left out of the tables); never imports
torch_dali.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from . import readers_cases as C
from . import table_file


def dali_case(case: str, root: str) -> dict[str, np.ndarray]:
    import nvidia.dali.tfrecord as tfrecord
    from nvidia.dali import fn, pipeline_def, types
    return C.run_case(case, root, fn, pipeline_def, tfrecord, types, lambda tl, s: np.array(tl.at(s)))


def main() -> None:
    tables: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as root:
        C.build(root)
        for case in C.CASES:
            for key, arr in dali_case(case, root).items():
                tables[f"{case}/{key}"] = arr
    out = Path(__file__).with_name(C.TABLES)
    meta = table_file.save(out, tables, "tests.reference.readers_make_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
