"""A stand-in for DALI_extra (NVIDIA's test-data repository, not available here): synthetic files
generated with a fixed seed at the paths DALI's test files read, so the cases that need DALI_extra
run on both sides (`python -m conformance run --dali-extra DIR`). Values in DALI's tests that were
computed from the real files (hashes, exact sizes) cannot match; such cases fail on both sides and
are not counted. `python -m conformance.extra_standin DIR` writes it."""
from __future__ import annotations

from pathlib import Path

from . import data_sets, images, more_data


def make(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    images.make(root)
    data_sets.make(root)
    more_data.make(root)
