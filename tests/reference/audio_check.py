"""Runs an audio case (tests/reference/audio_cases.py) on torch_dali and compares it with DALI's
recorded output (audio_tables.npz)."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from . import audio_cases as C


@functools.lru_cache(maxsize=1)
def tables() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).with_name(C.TABLES)) as t:
        return {k: t[k] for k in t.files}


def expected(name: str) -> dict[str, Any]:
    t = tables()
    if f"{name}/error" in t:
        return {"error": str(t[f"{name}/error"])}
    n_out = int(t[f"{name}/n_out"])
    n = len(C.CASES[name][1])
    return {"outputs": [[t[f"{name}/{k}/{i}"] for i in range(n)] for k in range(n_out)],
            "layouts": [str(t[f"{name}/{k}/layout"]) for k in range(n_out)]}


def ours(name: str, device: str = "cpu") -> dict[str, Any]:
    """The case on torch_dali, the op on `device` ("cpu" or "gpu"); {"error": ...} where it refuses."""
    from torch_dali import fn, pipeline_def
    graph, data, layout = C.CASES[name]

    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None if device == "cpu" else 0)
    def pipe():  # type: ignore[no-untyped-def]
        src = fn.external_source(source=lambda: data, batch=True, layout=layout)
        out = graph(fn, src.gpu() if device == "gpu" else src)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    try:
        p = pipe()
        p.build()
        outs = p.run()
    except RuntimeError as e:
        return {"error": str(e)}
    return {"outputs": [[np.asarray(o.as_cpu()[i] if device == "gpu" else o[i]) for i in range(len(data))]
                        for o in outs],
            "layouts": [o.layout() for o in outs]}


def compare(name: str, rtol: float = 1e-5, int_tol: int = 0, int_rtol: float = 0.0) -> None:
    """Our output against DALI's (`assert_same`)."""
    assert_same(expected(name), ours(name), rtol, int_tol, int_rtol)


def assert_same(exp: dict[str, Any], got: dict[str, Any], rtol: float = 1e-5, int_tol: int = 0,
                int_rtol: float = 0.0) -> None:
    """Two runs of a case agree: same refusals, layouts, shapes, types; floats within `rtol` of
    each sample's largest magnitude in `exp`, integers within `int_tol` + `int_rtol` * |exp|."""
    assert ("error" in exp) == ("error" in got), (exp.get("error"), got.get("error"))
    if "error" in exp:
        return
    assert got["layouts"] == exp["layouts"]
    for e_out, g_out in zip(exp["outputs"], got["outputs"]):
        for e, g in zip(e_out, g_out):
            assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
            if e.dtype.kind == "f":
                np.testing.assert_allclose(g, e, rtol=0, atol=rtol * max(1.0, float(np.abs(e).max(initial=0))))
            else:
                np.testing.assert_allclose(g.astype(np.int64), e.astype(np.int64), rtol=int_rtol, atol=int_tol)
