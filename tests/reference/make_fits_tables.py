"""Regenerates tests/reference/fits_tables.npz (see fits_cases.py for what it holds and why).

    PYTHONPATH=<a folder with astropy> /work/dali-venv/bin/python -m tests.reference.make_fits_tables

Needs `nvidia.dali` and astropy; never imports torch_dali.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from astropy.io import fits
from nvidia.dali import fn, pipeline_def, types

from . import fits_cases as C
from . import table_file


def dali(files: list[str], **kw) -> list[np.ndarray] | str:
    if isinstance(kw.get("dtypes"), str):
        kw["dtypes"] = [getattr(types, t) for t in kw["dtypes"].split(",")]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        outs = fn.experimental.readers.fits(files=files, **kw)
        return tuple(outs) if isinstance(outs, (list, tuple)) else (outs,)

    try:
        p = pipe()
        p.build()
        return [np.array(o.at(0)) for o in p.run()]
    except Exception as e:  # noqa: BLE001 - the case's outcome is DALI's error
        return table_file.dali_error(e)


def build() -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in C.IMAGES:
            path = root / f"{name}.fits"
            C.write_file(path, name)
            t[f"file/{name}"] = np.frombuffer(path.read_bytes(), np.uint8)
            with fits.open(path) as hl:
                for k in (2, 3):
                    t[f"astropy/{name}/{k}"] = np.array(hl[k - 1].data).astype(
                        hl[k - 1].data.dtype.newbyteorder("="))
            got = dali([str(path)], hdu_indices=[2, 3])
            if isinstance(got, str):
                t[f"dali_error/{name}"] = np.frombuffer(got.encode(), np.uint8)
            else:
                for k, a in zip((2, 3), got):
                    t[f"dali/{name}/{k}"] = a
        special = C.write_special(root)
        for name, path in special.items():
            t[f"file/{name}"] = np.frombuffer(path.read_bytes(), np.uint8)
        for case, (file, kw) in C.ERRORS.items():
            got = dali([str(special.get(file, root / file))], **kw)
            assert isinstance(got, str), case
            t[f"dali_error/{case}"] = np.frombuffer(got.encode(), np.uint8)
    return t


def main() -> None:
    out = C.HERE / C.TABLES
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.make_fits_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
