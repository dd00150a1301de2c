"""Regenerates tests/reference/dali_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.make_dali_tables     # from the repository root

Every "DALI" expectation in the tests comes from this file's output; nothing is typed in by hand.
Needs a Python with `nvidia.dali` (and NumPy, Pillow); never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import cases as C
from . import table_file
from . import dali_ops as D


def build() -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    for name, case in C.RESIZE_CASES.items():
        t[f"resize/{name}"] = D.resize(case)
    for i, args in enumerate(C.SIZE_ARGS):
        t[f"size/{i}"] = D.output_sizes(args)
    for i, args in enumerate(C.CROP_CASES):
        t[f"crop/{i}"] = D.crop(args)
    for i, args in enumerate(C.FLIP_CASES):
        t[f"flip/{i}"] = D.flip(args)
    for i, args in enumerate(C.CMN_CASES):
        t[f"cmn/{i}"] = D.crop_mirror_normalize(args)
    for i, args in enumerate(C.BC_CASES):
        t[f"bc/{i}"] = D.brightness_contrast(args)
    for i, (kind, args) in enumerate(C.BC_TYPED_CASES):
        t[f"bc_typed/{i}"] = D.brightness_contrast(args, C.BC_TYPED_IMGS[kind])
    for i, args in enumerate(C.HSV_CASES):
        t[f"hsv/{i}"] = D.hsv(args, C.COLOR_IMG)
        t[f"hsv_float/{i}"] = D.hsv(args, C.COLOR_FLOAT_IMG)
    for i, args in enumerate(C.TWIST_CASES):
        t[f"twist/{i}"] = D.color_twist(args, C.COLOR_IMG)
        t[f"twist_float/{i}"] = D.color_twist(args, C.COLOR_FLOAT_IMG)
    for dt in C.CAST_TYPES:
        t[f"cast/{dt}"] = D.cast(dt)
    for name, (kind, args) in C.RANDOM_CASES.items():
        t[f"random/{name}"] = D.random_draws(kind, args)
        t[f"random_shape/{name}"] = np.array(D.random_sample_shape(kind, args), np.int64)
    for name, expr in C.ARITH_CASES.items():
        t[f"arith/{name}"] = D.arithmetic(expr)
    for name, data in C.decode_inputs().items():
        raw = np.frombuffer(data, np.uint8)
        t[f"decode_input/{name}"] = raw
        for ot in C.DECODE_TYPES:
            if (name, ot) not in C.DECODE_SKIP:
                t[f"decode/{name}/{ot}"] = D.decode(raw, ot)
        t[f"decode/{name}/RGB_float"] = D.decode(raw, "RGB", "float")
    for name in C.WINDOW_CASES:
        t[f"windows/{name}"] = D.rrc_windows(name)
    t["windows/decoder"] = D.decoder_windows()
    return t


def main() -> None:
    out = Path(__file__).with_name(C.TABLES)
    tables = build()
    meta = table_file.save(out, tables, "tests.reference.make_dali_tables")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
