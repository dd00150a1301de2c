"""PyTorch data loading with the dynamic mode (DALI 2.4's `ndd.pytorch`): `ndd.pytorch.nodes`,
torchdata.nodes building blocks (a reader as a node, a mapper, conversion to torch tensors).
As in DALI, `nodes` exists only where the torchdata package is installed."""
from __future__ import annotations

import importlib
import importlib.util

__all__ = ["nodes"] if importlib.util.find_spec("torchdata") is not None else []


def __getattr__(name: str) -> object:
    if name == "nodes":
        if importlib.util.find_spec("torchdata") is None:
            raise AttributeError("ndd.pytorch.nodes needs the torchdata package (pip install torchdata)")
        return importlib.import_module(f"{__name__}.nodes")  # imported on first use: torchdata is not light
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
