"""A short, seeded run of every fuzz target (tests/_fuzz.py) in a child process: a crash or a
sanitizer-free out-of-bounds access (guard pages) fails this test instead of killing pytest, and
each oracle (C == Python headers, libjpeg's sizes, windows, PNG and TIFF sizes, mmap == pread,
C == Python crop windows and random_bbox_crop windows, the C warp, resize and crop_mirror_normalize == their spec) must hold.
`make fuzz` runs the same targets for longer, C helpers under ASan+UBSan."""
from __future__ import annotations

import pytest

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

SEED = 0
ITERATIONS = {"headers": 1500, "roi": 800, "png": 800, "tiff": 800, "recordio": 200, "crop_windows": 800, "bbox_crop": 600, "box_encoder": 1500, "warp": 2000, "cpu_image": 1500,
              "lmdb": 600, "caffe": 800, "fits": 800, "tfexample": 800, "npy": 800, "tar": 600,
              "wds_index": 800, "wav": 800, "coco_pre": 400}
NEEDS = {"lmdb": "lmdb"}  # a target whose seeds are written by a package


def _runnable() -> list[str]:
    import importlib.util
    return [n for n in ITERATIONS if n not in NEEDS or importlib.util.find_spec(NEEDS[n]) is not None]


@pytest.fixture(scope="module")
def results() -> dict:
    names = _runnable()
    reqs = [[name, SEED, ITERATIONS[name]] for name in names]
    return dict(zip(names, run_isolated("tests._fuzz:run_fixed", reqs, timeout=120)))


@pytest.mark.parametrize("target", list(ITERATIONS))
def test_fuzz_target(results, target):
    if target not in results:
        pytest.skip(f"the {target} target's seeds are written by {NEEDS[target]}, not installed here")
    got = results[target]
    replay = f"python -m tests._fuzz --targets {target} --seed {SEED} --iterations {ITERATIONS[target]}"
    assert not isinstance(got, Died), f"{got.reason}; replay with `{replay}`"
    assert got["iterations"] == ITERATIONS[target]
    assert got["failed"] == 0, f"{got['failures']}; replay with `{replay}`"
