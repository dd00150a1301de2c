"""debayer cases, shared by the test (tests/test_ops_debayer.py) and the table generator.

`/work/dali-venv/bin/python -m tests.reference.debayer_ref` runs each case through DALI 2.4's CPU
backend once and writes debayer_tables.npz beside this file: per case and sample the image out, or
the error text of the cases DALI refuses. NumPy only at import.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

TABLES = Path(__file__).with_name("debayer_tables.npz")

_rng = np.random.default_rng(11)


def _smooth(h: int, w: int, dtype: type, top: int) -> np.ndarray:
    """A mosaic with some structure (a gradient, an edge and noise), not only noise."""
    y, x = np.mgrid[0:h, 0:w]
    v = (x * 7 + y * 3) % (top // 2) + (x > w // 2) * (top // 3) + _rng.integers(0, top // 8, (h, w))
    return np.clip(v, 0, top - 1).astype(dtype)


U8 = [_rng.integers(0, 256, (6, 8), dtype=np.uint8), _smooth(10, 14, np.uint8, 256),
      _rng.integers(0, 256, (4, 4), dtype=np.uint8), _rng.integers(0, 256, (2, 6), dtype=np.uint8)]
U16 = [_rng.integers(0, 65536, (8, 6), dtype=np.uint16), _smooth(12, 10, np.uint16, 65536)]
HWC = [_rng.integers(0, 256, (6, 10, 1), dtype=np.uint8), _rng.integers(0, 256, (8, 4, 1), dtype=np.uint8)]
FHW = [_rng.integers(0, 256, (3, 6, 8), dtype=np.uint8), _rng.integers(0, 256, (2, 4, 6), dtype=np.uint8)]

# name -> (samples, layout, args, per-sample blue_position or None)
CASES: dict[str, tuple[list[np.ndarray], str, dict[str, Any], list[list[int]] | None]] = {}
for _bp in ([0, 0], [0, 1], [1, 0], [1, 1]):
    _tag = f"{_bp[0]}{_bp[1]}"
    CASES[f"u8_{_tag}"] = (U8, "HW", {"blue_position": _bp}, None)
    CASES[f"u16_{_tag}"] = (U16, "HW", {"blue_position": _bp}, None)
    CASES[f"gray_u8_{_tag}"] = (U8, "HW", {"blue_position": _bp, "algorithm": "gray_ocv"}, None)
CASES["gray_u16"] = (U16, "HW", {"blue_position": [1, 0], "algorithm": "gray_ocv"}, None)
CASES["explicit_bilinear"] = (U8, "HW", {"blue_position": [0, 1], "algorithm": "bilinear_ocv"}, None)
CASES["scalar_position"] = (U8, "HW", {"blue_position": 1}, None)
CASES["hwc"] = (HWC, "HWC", {"blue_position": [1, 1]}, None)
CASES["no_layout_3d"] = (HWC, "", {"blue_position": [0, 1]}, None)
CASES["sequences"] = (FHW, "FHW", {}, [[0, 1], [1, 0]])
CASES["per_sample"] = (U8, "HW", {}, [[0, 0], [1, 1], [0, 1], [1, 0]])
for _bp in ([0, 0], [0, 1], [1, 0], [1, 1]):  # no new draws here: the arrays below stay as they were
    CASES[f"edge_u8_{_bp[0]}{_bp[1]}"] = (U8, "HW", {"blue_position": _bp, "algorithm": "edgeaware_ocv"}, None)
CASES["edge_u16"] = (U16, "HW", {"blue_position": [0, 1], "algorithm": "edgeaware_ocv"}, None)
CASES["edge_sequences"] = (FHW, "FHW", {"algorithm": "edgeaware_ocv"}, [[1, 1], [0, 0]])
CASES["default_algorithm"] = (U8, "HW", {"blue_position": [1, 0], "algorithm": "default"}, None)

# name -> (sample, layout, args): DALI refuses these
ERRORS: dict[str, tuple[np.ndarray, str, dict[str, Any]]] = {
    "odd_size": (_rng.integers(0, 256, (5, 8), dtype=np.uint8), "HW", {"blue_position": [0, 0]}),
    "float": (_rng.random((6, 8), dtype=np.float32), "HW", {"blue_position": [0, 0]}),
    "int16": (_rng.integers(0, 256, (6, 8)).astype(np.int16), "HW", {"blue_position": [0, 0]}),
    "three_channels": (_rng.integers(0, 256, (6, 8, 3), dtype=np.uint8), "HWC", {"blue_position": [0, 0]}),
    "chw": (_rng.integers(0, 256, (1, 6, 8), dtype=np.uint8), "CHW", {"blue_position": [0, 0]}),
    "position_2": (U8[0], "HW", {"blue_position": [2, 0]}),
    "position_3_values": (U8[0], "HW", {"blue_position": [0, 0, 1]}),
    "unknown_algorithm": (U8[0], "HW", {"blue_position": [0, 0], "algorithm": "nope"}),
    "npp_on_cpu": (U8[0], "HW", {"blue_position": [0, 0], "algorithm": "default_npp"}),
    "vng_u16": (U16[0], "HW", {"blue_position": [0, 0], "algorithm": "vng_ocv"}),
}

# vng_ocv: mosaics of 8 pixels and more (smaller ones are bilinear), wide enough for OpenCV's
# 8-pixel SIMD runs and its per-pixel tail (drawn after the arrays above, which stay as they were)
VNG = [_rng.integers(0, 256, (24, 40), dtype=np.uint8), _smooth(18, 34, np.uint8, 256),
       _rng.integers(100, 116, (16, 26), dtype=np.uint8), U8[1], U8[0]]
for _bp in ([0, 0], [0, 1], [1, 0], [1, 1]):
    CASES[f"vng_{_bp[0]}{_bp[1]}"] = (VNG, "HW", {"blue_position": _bp, "algorithm": "vng_ocv"}, None)
CASES["vng_sequences"] = ([np.stack([VNG[0][:16], VNG[0][8:]]), VNG[2][None]], "FHW", {"algorithm": "vng_ocv"},
                          [[0, 1], [1, 0]])


def _dali_run(samples: list[np.ndarray], layout: str, args: dict[str, Any],
              positions: list[list[int]] | None) -> list[np.ndarray]:
    from nvidia.dali import fn, pipeline_def

    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: samples, batch=True, layout=layout or None)
        kw = dict(args)
        if positions is not None:
            kw["blue_position"] = fn.external_source(source=lambda: [np.array(p, np.int32) for p in positions],
                                                     batch=True)
        return fn.debayer(x, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return [np.array(out[i]) for i in range(len(samples))]


def main() -> None:
    from .table_file import dali_error, save
    tables: dict[str, np.ndarray] = {}
    for name, (samples, layout, args, positions) in CASES.items():
        for i, t in enumerate(_dali_run(samples, layout, args, positions)):
            tables[f"{name}/{i}"] = t
    for name, (sample, layout, args) in ERRORS.items():
        try:
            _dali_run([sample], layout, args, None)
            msg = "no error"
        except (RuntimeError, ValueError) as e:
            msg = f"{type(e).__name__}: {dali_error(e)}"
        tables[f"error/{name}"] = np.frombuffer(msg.encode(), np.uint8)
    save(TABLES, tables, "tests.reference.debayer_ref")
    for k, v in tables.items():
        if k.startswith("error/"):
            print(k, bytes(v).decode())


if __name__ == "__main__":
    main()
