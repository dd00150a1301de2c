"""Test side of tensor_cases: DALI's stored (or live) results, and torch_dali's for the same case."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from . import tensor_cases as C

SOURCES = ("table", "live")  # "live" runs DALI now, or skips saying why


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).with_name(C.TABLES)) as z:
        return {k: z[k] for k in z.files}


def decode(name: str, t: dict[str, np.ndarray]) -> dict[str, Any]:
    if f"{name}/error" in t:
        return {"error": str(t[f"{name}/error"])}
    outs, layouts = [], []
    for k in range(int(t[f"{name}/n_out"])):
        stack = t.get(f"{name}/{k}/stack")
        outs.append(list(stack) if stack is not None else [t[f"{name}/{k}/{i}"] for i in range(int(t[f"{name}/{k}/n"]))])
        layouts.append(str(t[f"{name}/{k}/layout"]))
    return {"outputs": outs, "layouts": layouts}


def dali(source: str, name: str) -> dict[str, Any]:
    """DALI's result for case `name`: {"outputs", "layouts"} or {"error"}."""
    if source == "live":
        try:
            from .tensor_dali import run_case
        except Exception as e:  # not installed here (CI), or it cannot load
            pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({type(e).__name__}: {e})")
        return run_case(name)
    return decode(name, stored())


def ours(name: str, device: str = "cpu", seed: int = 1234) -> dict[str, Any]:
    """torch_dali's result for case `name`, in the same form (errors as {"error": message})."""
    from torch_dali import fn, pipeline_def, types

    case = C.all_cases()[name]
    feeds = C.inputs_for(case)

    @pipeline_def(batch_size=C.batch_size(case), num_threads=2, device_id=None if device == "cpu" else 0,
                  seed=seed)
    def pipe():
        ins = C.graph(_OnDevice(fn, device), types, case, feeds)
        return tuple(ins) if isinstance(ins, (list, tuple)) else ins

    try:
        p = pipe()
        p.build()
        outs = p.run()
    except (ValueError, TypeError, RuntimeError, IndexError) as e:
        return {"error": str(e)}
    outs = outs if isinstance(outs, tuple) else (outs,)
    return {"outputs": [[np.asarray(o.as_cpu().at(i)) for i in range(len(o))] for o in outs],
            "layouts": [o.layout() for o in outs]}


class _OnDevice:
    """torch_dali's `fn` with every op but the sources placed on `device` (the GPU parity runs)."""

    def __init__(self, fn: Any, device: str, path: str = "") -> None:
        self._fn, self._device, self._path = fn, device, path

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._fn, name)
        if not callable(target) or isinstance(target, type(self._fn)) or hasattr(target, "__path__"):
            return _OnDevice(target, self._device, f"{self._path}.{name}")
        if name == "external_source" or self._device == "cpu":
            return target
        return lambda *a, **k: target(*[x.gpu() if hasattr(x, "gpu") else x for x in a], device="gpu", **k)


def compare(got: dict[str, Any], want: dict[str, Any], atol: float = 0.0, rtol: float = 0.0) -> None:
    """Both refused, or the same number of outputs, layouts, shapes and types; values exact, floats
    within atol/rtol."""
    if "error" in want:
        assert "error" in got, f"DALI refuses this case ({want['error']}); torch_dali returned a result"
        return
    assert "error" not in got, got["error"]
    assert got["layouts"] == want["layouts"]
    assert len(got["outputs"]) == len(want["outputs"])
    for g_out, w_out in zip(got["outputs"], want["outputs"]):
        assert len(g_out) == len(w_out)
        for g, w in zip(g_out, w_out):
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, atol=atol, rtol=rtol)
            else:
                np.testing.assert_array_equal(g, w)
