"""readers.sequence reads on the CPU (as in DALI); its FHWC sequences moved to the GPU (.gpu()) and
through a GPU op that keeps values (flip with no flip) equal the CPU's. Run on the GPU machine."""
from __future__ import annotations

import json

import pytest
import torch

from torch_dali import fn, pipeline_def

try:
    from tests.reference import sequence_reader_ref as R
except ImportError:
    from reference import sequence_reader_ref as R  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_sequences_to_gpu(tmp_path):
    import numpy as np
    with np.load(R.TABLES) as z:
        files = {k: bytes.fromhex(v) for k, v in json.loads(bytes(z["files"]).decode()).items()}
    R.write_tree(tmp_path, files)

    @pipeline_def(batch_size=3, num_threads=1, device_id=0)
    def pipe():
        seq = fn.readers.sequence(file_root=str(tmp_path), sequence_length=3)
        return seq, fn.flip(seq.gpu(), horizontal=0, vertical=0)

    p = pipe()
    p.build()
    for _ in range(3):
        cpu, gpu = p.run()
        assert gpu.layout() == "FHWC"
        for c, g in zip(cpu, gpu):
            assert g.is_cuda and torch.equal(g.cpu(), c)
