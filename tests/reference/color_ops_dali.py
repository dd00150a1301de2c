"""Runs a case of color_ops_cases through NVIDIA DALI's CPU backend (needs `nvidia.dali`); used by
color_ops_make.py to write the stored tables and by the tests' live comparisons. DALI and NumPy
only, never torch_dali."""
from __future__ import annotations

import numpy as np
from nvidia.dali import fn, pipeline_def, types

from . import color_ops_cases as C


def run_case(name: str, seed: int = 1234) -> list[np.ndarray]:
    """DALI's output samples for case `name`."""
    case = C.CASES[name]
    batch = C.inputs()[case["input"]]

    @pipeline_def(batch_size=len(batch), num_threads=1, device_id=None, seed=seed)
    def pipe():
        return C.graph(fn, types, case, batch)

    p = pipe()
    p.build()
    out, = p.run()
    return [np.array(out.at(i)) for i in range(len(out))] + [np.array(out.layout())]
