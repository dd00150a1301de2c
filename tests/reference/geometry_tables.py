"""DALI's outputs for geometry_cases: from the stored table, or from DALI now ("live") when it
imports here. Also the torch_dali side of a case, run with the same `run_case`."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch

from . import geometry_cases as G
from .tables import dali_or_skip

SOURCES = ("table", "live")


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).with_name(G.TABLES)) as z:
        return {k: z[k] for k in z.files}


def _from_table(name: str) -> list[list[np.ndarray]] | str:
    t = stored()
    if f"{name}/error" in t:
        return bytes(t[f"{name}/error"]).decode()
    outs: list[list[np.ndarray]] = []
    k = 0
    while f"{name}/{k}/stack" in t:
        outs.append(list(t[f"{name}/{k}/stack"]))
        k += 1
    while f"{name}/{k}/0" in t:
        samples, i = [], 0
        while f"{name}/{k}/{i}" in t:
            samples.append(t[f"{name}/{k}/{i}"])
            i += 1
        outs.append(samples)
        k += 1
    if not outs:
        raise KeyError(f"{name} is not in {G.TABLES}: regenerate it (geometry_make_tables.py)")
    return outs


def dali(source: str, name: str) -> list[list[np.ndarray]] | str:
    """DALI's outputs of case `name`, or the reason DALI refused it."""
    if source == "table":
        return _from_table(name)
    dali_or_skip()
    from .geometry_make_tables import run_dali
    from .table_file import dali_error
    try:
        return run_dali(G.CASES[name])
    except Exception as e:
        return dali_error(e)


def ours(name: str, device: str = "cpu") -> list[list[np.ndarray]]:
    """torch_dali's outputs of case `name` (device "cpu", "gpu" or, for decoders, "mixed")."""
    from torch_dali import fn, pipeline_def, types
    return G.run_case(G.CASES[name], fn, pipeline_def, types, device=device,
                      to_input=lambda a: torch.from_numpy(np.ascontiguousarray(a)))


def check_refused(name: str, want: str) -> None:
    """DALI refused the case; torch_dali must refuse it too (with one of its own errors)."""
    from torch_dali.errors import TorchDaliError
    with pytest.raises((TorchDaliError, ValueError, TypeError)):
        ours(name)


def check_case(name: str, source: str, compare: Callable[[np.ndarray, np.ndarray], None]) -> None:
    """Case `name` against DALI's outputs from `source`: refused where DALI refused it, else the same
    outputs and samples, each pair held to `compare(ours, dali)`."""
    want = dali(source, name)
    if isinstance(want, str):
        check_refused(name, want)
        return
    got = ours(name)
    assert len(got) == len(want)
    for g_out, w_out in zip(got, want):
        assert len(g_out) == len(w_out)
        for g, w in zip(g_out, w_out):
            compare(g, w)
