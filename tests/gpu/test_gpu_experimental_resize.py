"""experimental.resize (DALI: GPU only) on the GPU gives its CPU output here within resize's GPU
tolerance (ties of float32 rounding: values off by at most 1). Run on the GPU machine."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types

try:
    from tests.reference import cases as C
except ImportError:
    from reference import cases as C  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _run(device: str, **kw) -> np.ndarray:
    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: [torch.from_numpy(C.RESIZE_IMG)] * 2, batch=True, layout="HWC")
        return fn.experimental.resize(x.gpu() if device == "gpu" else x, device=device, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return np.stack([t.cpu().numpy() for t in out])


@pytest.mark.parametrize("kw", [dict(size=[9, 13]), dict(size=[30, 45], interp_type=types.INTERP_CUBIC),
                                dict(resize_shorter=17, antialias=False)])
def test_gpu_matches_cpu(kw):
    cpu, gpu = _run("cpu", **kw), _run("gpu", **kw)
    assert cpu.shape == gpu.shape and cpu.dtype == gpu.dtype
    assert np.abs(cpu.astype(np.int64) - gpu.astype(np.int64)).max() <= 1
