"""The batched size and window rules (what the GPU paths use) against the per-sample spec, and the
mixed random-crop decoder's batched windows against its per-sample draws."""
from __future__ import annotations

import random

import numpy as np
import pytest

from torch_dali.rng import SampleRNG
from torch_dali.functional.batch_sizes import crop_windows, output_sizes
from torch_dali.functional.crop import crop_window
from torch_dali.functional.crop_window import random_crop_window
from torch_dali.ops.fast.windows import random_crop_window_array
from torch_dali.functional.resize import output_size


def _resize_cases(rng: random.Random, n: int) -> tuple[dict, str]:
    kind = rng.choice(["xy", "x", "y", "shorter", "longer", "size", "size1", "per_sample", "none"])
    mode = rng.choice(["default", "stretch", "not_larger", "not_smaller"])
    if kind == "xy":
        return dict(resize_x=rng.uniform(1, 600), resize_y=rng.choice([rng.uniform(1, 600), 224])), mode
    if kind == "x":
        return dict(resize_x=rng.choice([224, rng.uniform(1, 600)])), mode
    if kind == "y":
        return dict(resize_y=rng.choice([224, rng.uniform(1, 600)])), mode
    if kind == "shorter":
        return dict(resize_shorter=rng.choice([256, rng.uniform(1, 600)])), "default"
    if kind == "longer":
        return dict(resize_longer=rng.choice([256, rng.uniform(1, 600)])), "default"
    if kind == "size":
        return dict(size=[rng.choice([0, 224, rng.uniform(1, 500)]), rng.choice([0, 224, rng.uniform(1, 500)])]), mode
    if kind == "size1":
        return dict(size=[rng.uniform(1, 500)]), mode
    if kind == "per_sample":  # some samples without a size: they fall through to resize_x
        return dict(resize_shorter=[rng.choice([0, rng.uniform(256, 480)]) for _ in range(n)],
                    resize_x=rng.choice([0, 100])), "default"
    return {}, mode


def test_output_sizes_equal_the_per_sample_rule():
    rng = random.Random(0)
    for _ in range(1500):
        n = rng.randint(1, 6)
        hw = np.array([[rng.randint(1, 900), rng.randint(1, 900)] for _ in range(n)])
        kw, mode = _resize_cases(rng, n)
        max_size = rng.choice([None, 300, [200, 500], [0, 400], [350]])
        got = output_sizes(hw, max_size=max_size, mode=mode, **kw)
        for i in range(n):
            one = {k: (v[i] if isinstance(v, list) and k != "size" else v) for k, v in kw.items()}
            want = output_size(int(hw[i, 0]), int(hw[i, 1]), max_size=max_size, mode=mode, **one)
            assert tuple(got[i]) == tuple(want), (hw[i], one, mode, max_size)


def test_output_sizes_round_half_away_at_ties():
    # 3 * 5 / 2 = 7.5 rounds to 8 (C's round), where Python's round() would give 8 too but 2.5 -> 2
    got = output_sizes(np.array([[2, 4], [4, 2]]), resize_shorter=5)
    assert got.tolist() == [[5, 10], [10, 5]]
    assert output_sizes(np.array([[4, 10]]), resize_y=5).tolist() == [[5, 13]]  # 12.5 -> 13


def test_crop_windows_equal_the_per_sample_rule():
    rng = random.Random(1)
    for _ in range(1500):
        n = rng.randint(1, 6)
        hw = np.array([[rng.randint(1, 900), rng.randint(1, 900)] for _ in range(n)])
        ch, cw = rng.choice([0, 224, rng.uniform(1, 300)]), rng.choice([0, 224, rng.uniform(1, 300)])
        py, px, rounding = [rng.random() for _ in range(n)], rng.random(), rng.choice(["round", "truncate"])
        got = crop_windows(hw, ch, cw, py, px, rounding)
        for i in range(n):
            assert tuple(got[i]) == crop_window(int(hw[i, 0]), int(hw[i, 1]), ch, cw, py[i], px, rounding)


@pytest.mark.parametrize("area,ratio", [((0.08, 1.0), (3 / 4, 4 / 3)), ((0.5, 0.6), (2.0, 3.0))])
def test_batched_random_crop_windows_equal_per_sample_draws(area, ratio):
    """The mixed decoder draws a batch's windows in one call; sample i must get the window the
    per-sample path (SampleRNG(seed, iteration, i)) draws, so CPU and GPU crop alike."""
    rng = random.Random(2)
    sizes = np.array([[rng.randint(20, 600), rng.randint(20, 600)] for _ in range(64)])
    got = random_crop_window_array(77, 5, sizes, area, ratio, 10)
    for i, (h, w) in enumerate(sizes.tolist()):
        assert tuple(got[i]) == random_crop_window(SampleRNG(77, 5, i), h, w, area, ratio, 10)
