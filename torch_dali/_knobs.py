"""Tuning knobs read from the environment (for measuring; the defaults are the measured best)."""
from __future__ import annotations

import os


def env_int(name: str, default: int, low: int, high: int | None = None) -> int:
    """int(os.environ[name]) clamped to [low, high]; `default` when unset or not an integer."""
    try:
        v = max(low, int(os.environ.get(name, default)))
    except ValueError:
        return default
    return v if high is None else min(high, v)


# Batches the mixed stage (the decoder) works on at once, each on its own thread and CUDA stream;
# the GPU stage goes with them unless an op in it needs batches in order. On an H200 (16 cores,
# batch 256, q90 4:2:0) one lane gave ~20k images/s, two ~27k, three ~30k
# (bench/results/throughput_h200.json, bench/results/lanes_h200.json).
MIXED_LANES = 3


def mixed_lanes() -> int:
    """TORCH_DALI_MIXED_LANES, 1..8 (default MIXED_LANES)."""
    return env_int("TORCH_DALI_MIXED_LANES", MIXED_LANES, 1, 8)


def fusion() -> bool:
    """TORCH_DALI_FUSION (1 by default; 0 runs fusable op pairs, such as resize followed by
    crop_mirror_normalize on CUDA, one after the other: for measuring and for tests)."""
    return env_int("TORCH_DALI_FUSION", 1, 0, 1) == 1
