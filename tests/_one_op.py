"""Runs one op of `fn` on one sample fed through external_source (CPU, batch of one): what the
tests that compare single outputs with DALI 2.4's values share."""
from __future__ import annotations

import numpy as np

from torch_dali import fn, pipeline_def


def run_one(x: np.ndarray, layout: str, op: str, **kw) -> np.ndarray:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return getattr(fn, op)(fn.external_source(source=lambda: [x], batch=True, layout=layout), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0))
