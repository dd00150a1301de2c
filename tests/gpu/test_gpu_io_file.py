"""io.file.read runs on the CPU only (as in DALI); its bytes moved to the GPU in the pipeline (.gpu())
arrive unchanged. Run on the GPU machine."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_file_bytes_to_gpu(tmp_path):
    blob = bytes(range(256)) * 9
    (tmp_path / "b.bin").write_bytes(blob)
    path = np.frombuffer(str(tmp_path / "b.bin").encode(), np.uint8).copy()

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        data = fn.io.file.read(fn.external_source(source=lambda: [torch.from_numpy(path)] * 2, batch=True))
        return data, data.gpu()

    p = pipe()
    p.build()
    cpu, gpu = p.run()
    for c, g in zip(cpu, gpu):
        assert g.is_cuda and torch.equal(g.cpu(), c) and c.numpy().tobytes() == blob
