"""Child side of tests/test_ops_morphology.py's endless-iterations test (run by tests/_isolate.py,
so a regression that runs for ever ends the child, not the test run)."""
from __future__ import annotations

from typing import Any

import numpy as np

from torch_dali import fn, pipeline_def


def cases() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    xs = [rng.integers(0, 256, (20, 31, 3), dtype=np.uint8), rng.standard_normal((9, 5, 1)).astype(np.float32)]
    xs[1][2, 3, 0] = np.nan
    return xs


def endless(req: Any) -> list[Any]:
    """experimental.`req[0]` with border `req[1]` and 2**62 iterations, on each of `cases()`."""
    op = getattr(fn.experimental, req[0])
    out = []
    for x in cases():
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return op(fn.external_source(source=lambda: [x], batch=True, layout="HWC"), iterations=2**62,
                      mask_size=[4, 2], anchor=[0, 1], border_mode=req[1])
        p = pipe()
        p.build()
        out.append(np.asarray(p.run()[0].at(0)).tolist())
    return out
