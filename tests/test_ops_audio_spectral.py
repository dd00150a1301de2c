"""spectrogram, mel_filter_bank and mfcc against DALI 2.4's CPU output (tests/reference/audio_tables.npz,
made by tests/reference/audio_make.py): same shapes, layouts and refusals; values within 1e-5 of
each sample's largest magnitude (float32 FFTs sum in another order)."""
from __future__ import annotations

import pytest

from reference import audio_cases as C
from reference.audio_check import compare


@pytest.mark.parametrize("name", [n for n in C.CASES if n.startswith(("spec_", "mel_", "mfcc_"))])
def test_matches_dali(name):
    compare(name)
