"""Runs the suites of auto_aug_cases through NVIDIA DALI's CPU backend (needs `nvidia.dali`):
used by auto_aug_make.py for the stored tables and by the tests' live comparisons. DALI and
NumPy only, never torch_dali."""
from __future__ import annotations

import numpy as np
import nvidia.dali.auto_aug as auto_aug
import nvidia.dali.auto_aug.auto_augment  # noqa: F401 - the submodules the cases reach through auto_aug
import nvidia.dali.auto_aug.core  # noqa: F401
import nvidia.dali.auto_aug.rand_augment  # noqa: F401
import nvidia.dali.auto_aug.trivial_augment  # noqa: F401
from nvidia.dali import fn, pipeline_def, types

from . import auto_aug_cases as C


def run_suite(name: str) -> dict[str, np.ndarray]:
    """key/sample index -> DALI's output sample, and key/layout, for every output of suite `name`."""
    imgs, vids = C.images(), C.videos()

    @pipeline_def(batch_size=len(imgs), num_threads=1, device_id=None, seed=1234)
    def pipe():
        x = fn.external_source(source=lambda: imgs, batch=True, layout="HWC")
        v = fn.external_source(source=lambda: vids, batch=True, layout="FHWC")
        return tuple(C.graph(fn, types, auto_aug, name, x, v))

    p = pipe()
    p.build()
    outs = p.run()
    tables: dict[str, np.ndarray] = {}
    for (key, *_), out in zip(C.plan(auto_aug, name), outs):
        for i in range(len(out)):
            tables[f"{key}/{i}"] = np.array(out.at(i))
        tables[f"{key}/layout"] = np.array(out.layout())
    return tables
