"""CPU/CUDA parity of the audio ops with a CUDA backend (skipped without CUDA): every case of
tests/reference/audio_cases.py for spectrogram, mel_filter_bank, mfcc, nonsilent_region and
audio_resample runs with the op on each device. Both refuse the same cases; shapes, types and
layouts agree; floats within 1e-5 of each sample's largest magnitude (cuFFT and CUDA matrix
products sum in another order); integers exactly, except audio_resample's, within 1 + 2e-6 of the
value (a float32 sum in another order may round across a tie). Not yet run on a GPU."""
from __future__ import annotations

import pytest
import torch

from reference import audio_cases as C
from reference.audio_check import assert_same, ours

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

GPU_OPS = ("spec_", "mel_", "mfcc_", "nsr_", "resample_")


@pytest.mark.parametrize("name", [n for n in C.CASES if n.startswith(GPU_OPS)])
def test_cpu_and_cuda_agree(name):
    cpu, gpu = ours(name, "cpu"), ours(name, "gpu")
    if name.startswith("resample_"):
        assert_same(cpu, gpu, 1e-5, int_tol=1, int_rtol=2e-6)
    else:
        assert_same(cpu, gpu, 1e-5)
