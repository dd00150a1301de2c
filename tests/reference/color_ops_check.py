"""Test side of color_ops_cases: DALI's stored (or live) outputs, and ours for the same case."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from . import color_ops_cases as C

SOURCES = ("table", "live")  # "live" runs DALI now, or skips saying why


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).with_name(C.TABLES)) as z:
        return {k: z[k] for k in z.files}


def dali(source: str, name: str) -> tuple[list[np.ndarray], str]:
    """DALI's samples and output layout for case `name`."""
    if source == "live":
        try:
            from .color_ops_dali import run_case
        except Exception as e:  # not installed here (CI), or it cannot load
            pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({type(e).__name__}: {e})")
        *samples, layout = run_case(name)
        case = C.CASES[name]
        if case["op"].startswith("noise."):
            xs = C.inputs()[case["input"]]
            samples = [C.noise_stats(case, xs[i], s)[0] for i, s in enumerate(samples)]
        return samples, str(layout)
    t = stored()
    n = int(t[f"{name}/n"])
    return [t[f"{name}/{i}"] for i in range(n)], str(t[f"{name}/layout"])


def ours(name: str, device: str = "cpu", seed: int = 1234, case: dict[str, Any] | None = None) -> tuple[list[np.ndarray], str]:
    """torch_dali's samples and output layout for case `name` (or an explicit `case`)."""
    from torch_dali import fn, pipeline_def, types

    case = C.CASES[name] if case is None else case
    batch = C.inputs()[case["input"]]

    @pipeline_def(batch_size=len(batch), num_threads=2, device_id=None if device == "cpu" else 0, seed=seed)
    def pipe():
        out = C.graph(fn, types, {**case, "args": {**case.get("args", {}), "device": device}}, batch)
        return out

    p = pipe()
    p.build()
    out, = p.run()
    return [np.asarray(out.as_cpu().at(i)) for i in range(len(out))], out.layout()


def compare(got: list[np.ndarray], want: list[np.ndarray], atol: float = 0.0, int_tol: int = 0,
            max_frac: float = 0.0, rtol: float = 0.0) -> None:
    """Same shapes and types; floats within `atol`; integers within `int_tol` on at most `max_frac`
    of the values (exact with the defaults)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            d = np.abs(g.astype(np.int64) - w.astype(np.int64))
            assert d.max(initial=0) <= int_tol and (d > 0).mean() <= max_frac, (d.max(), (d > 0).sum())
