"""The audio ops (spectrogram, mel_filter_bank, mfcc, nonsilent_region, audio_resample) against
DALI 2.4's CPU output (tests/reference/audio_tables.npz, made by tests/reference/audio_make.py):
same shapes, types, layouts and refusals; floats within 1e-5 of each sample's largest magnitude
(float32 FFTs and products sum in another order), integers exactly, except where they come from
resampling: within 1 + 2e-6 of the value (the float32 sum, in another order, differs in its last
bit, which int32 output scales to 2^8 and int16 output may round across a tie)."""
from __future__ import annotations

import pytest

from reference import audio_cases as C
from reference.audio_check import compare


@pytest.mark.parametrize("name", list(C.CASES))
def test_matches_dali(name):
    resampled = "resample" in name
    compare(name, int_tol=1 if resampled else 0, int_rtol=2e-6 if resampled else 0.0)
