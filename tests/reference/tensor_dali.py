"""Runs a case of tensor_cases through NVIDIA DALI's CPU backend (needs `nvidia.dali`); used by
tensor_make.py to write the stored tables and by the tests' live comparisons. DALI and NumPy only,
never torch_dali."""
from __future__ import annotations

from typing import Any

import numpy as np
from nvidia.dali import fn, pipeline_def, types

from . import tensor_cases as C


def run_case(name: str, seed: int = 1234) -> dict[str, Any]:
    """{"outputs": [[sample, ...] per output], "layouts": [...]} or {"error": DALI's message}."""
    case = C.all_cases()[name]
    feeds = C.inputs_for(case)

    @pipeline_def(batch_size=C.batch_size(case), num_threads=1, device_id=None, seed=seed)
    def pipe():
        out = C.graph(fn, types, case, feeds)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    try:
        p = pipe()
        p.build()
        outs = p.run()
    except Exception as e:  # noqa: BLE001 - DALI raises RuntimeError/ValueError/IndexError/TypeError
        text = str(e)
        at = text.find("encountered:")
        return {"error": (text[at + 12:] if at >= 0 else text).strip().splitlines()[0][:400]}
    return {"outputs": [[np.array(o.at(i)) for i in range(len(o))] for o in outs],
            "layouts": [o.layout() for o in outs]}
