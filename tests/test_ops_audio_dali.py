"""The audio ops (spectrogram, mel_filter_bank, mfcc, nonsilent_region, audio_resample) against
DALI 2.4's CPU output (tests/reference/audio_tables.npz, made by tests/reference/audio_make.py):
same shapes, types, layouts and refusals; floats within 1e-5 of each sample's largest magnitude
(float32 FFTs and products sum in another order), integers exactly but audio_resample's, within 1
(a float32 sum in another order lands on the other side of a rounding tie)."""
from __future__ import annotations

import pytest

from reference import audio_cases as C
from reference.audio_check import compare


@pytest.mark.parametrize("name", list(C.CASES))
def test_matches_dali(name):
    compare(name, int_tol=1 if name.startswith("resample_") else 0)
