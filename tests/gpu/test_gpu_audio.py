"""CPU/CUDA parity of the audio ops with a CUDA backend (skipped without CUDA): every case of
tests/reference/audio_cases.py for spectrogram, mel_filter_bank, mfcc, nonsilent_region and
audio_resample runs with the op on each device. Both refuse the same cases; shapes, types and
layouts agree; floats within 1e-5 of each sample's largest magnitude (cuFFT and CUDA matrix
products sum in another order); integers exactly, except audio_resample's, within 1 + 2e-6 of the
value (a float32 sum in another order may round across a tie). Not yet run on a GPU."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from reference import audio_cases as C
from reference.audio_check import ours

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

GPU_OPS = ("spec_", "mel_", "mfcc_", "nsr_", "resample_")


@pytest.mark.parametrize("name", [n for n in C.CASES if n.startswith(GPU_OPS)])
def test_cpu_and_cuda_agree(name):
    cpu, gpu = ours(name, "cpu"), ours(name, "gpu")
    assert ("error" in cpu) == ("error" in gpu), (cpu.get("error"), gpu.get("error"))
    if "error" in cpu:
        return
    assert cpu["layouts"] == gpu["layouts"]
    for c_out, g_out in zip(cpu["outputs"], gpu["outputs"]):
        for c, g in zip(c_out, g_out):
            assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
            if c.dtype.kind == "f":
                np.testing.assert_allclose(g, c, rtol=0, atol=1e-5 * max(1.0, float(np.abs(c).max(initial=0))))
            elif name.startswith("resample_"):
                np.testing.assert_allclose(g.astype(np.int64), c.astype(np.int64), rtol=2e-6, atol=1)
            else:
                np.testing.assert_array_equal(g, c)
