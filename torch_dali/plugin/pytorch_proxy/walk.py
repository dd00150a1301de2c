"""produce_data's walk: replaces the batch references anywhere in what a loader returned (lists,
tuples, named tuples, dicts, objects' attributes; cycles allowed) by the data."""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np
import torch

# leaves: never looked into (a tensor's or an array's contents are data, not references)
_LEAVES = (str, bytes, bytearray, int, float, complex, bool, type(None), torch.Tensor, np.ndarray, np.generic, type,
           types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _children(obj: Any) -> Any:
    if isinstance(obj, _LEAVES):
        return ()
    if isinstance(obj, (list, tuple)):
        return obj
    if isinstance(obj, dict):
        return obj.values()
    return getattr(obj, "__dict__", {}).values()


def replace_refs(obj: Any, ref_type: type, fetch: Callable[[Any], Any]) -> Any:
    holds: dict[int, bool] = {}  # id -> whether a reference is reachable from it
    done: dict[int, Any] = {}  # id -> what replaced it (a cycle meets it again)

    def has_ref(o: Any) -> bool:
        key = id(o)
        if key not in holds:
            holds[key] = isinstance(o, ref_type)  # False while visiting: a cycle back here adds nothing
            if not holds[key]:
                holds[key] = any([has_ref(c) for c in list(_children(o))])
        return holds[key]

    def swap(o: Any) -> Any:
        key = id(o)
        if key in done:
            return done[key]
        if not has_ref(o):
            return o
        if isinstance(o, ref_type):
            done[key] = fetch(o)
        elif isinstance(o, list):
            done[key] = o
            o[:] = [swap(c) for c in o]
        elif isinstance(o, tuple):
            items = [swap(c) for c in o]
            done[key] = o._replace(**dict(zip(o._fields, items))) if hasattr(o, "_fields") else type(o)(items)
        elif isinstance(o, dict):
            done[key] = o
            for k in list(o):
                o[k] = swap(o[k])
        else:
            done[key] = o
            for name, value in list(vars(o).items()):
                setattr(o, name, swap(value))
        return done[key]

    return swap(obj)
