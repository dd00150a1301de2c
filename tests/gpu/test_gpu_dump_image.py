"""dump_image on the GPU writes the CPU's files and passes the GPU batch through. Run on the GPU machine."""
from __future__ import annotations

import numpy as np
import pytest
import torch

try:
    from tests.test_ops_dump_image import DALI_FILES, IMAGES, run
except ImportError:
    from test_ops_dump_image import DALI_FILES, IMAGES, run  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_gpu_writes_cpu_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run(IMAGES, device="gpu", suffix="dbg")
    assert all(np.array_equal(a, b) for a, b in zip(out, IMAGES))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == DALI_FILES
