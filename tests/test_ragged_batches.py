"""On CUDA, a batch of variable-size images runs through the per-step ops as one batched call
(`ops.batching`, `functional.ragged`) instead of a call per sample. Here on CPU tensors, forcing
that path: every sample comes out bit for bit as the per-sample path gives it (the same float32
operations in the same order; tests/gpu/test_gpu_ragged.py checks the CUDA side)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali.functional import ragged

from ragged_cases import CASES, HW_CASES, images, run

BATCHES = {
    "similar": images(5, 9, 30),
    "varied": images(7, 8, 70, seed=1),  # several size groups
    "tiny": images(6, 1, 6, seed=2),  # 1-pixel axes: borders fold onto themselves
}
NEEDS_CROP = ("crop_mirror_normalize",)  # 5x7 windows: images at least that large


def _same(a: list[list[np.ndarray]], b: list[list[np.ndarray]]) -> None:
    assert len(a) == len(b)
    for oa, ob in zip(a, b):
        assert len(oa) == len(ob)
        for i, (x, y) in enumerate(zip(oa, ob)):
            assert x.shape == y.shape and x.dtype == y.dtype, (i, x.shape, y.shape, x.dtype, y.dtype)
            np.testing.assert_array_equal(x, y, err_msg=f"sample {i}")


def _check(build, data, monkeypatch, layout="HWC") -> None:
    from torch_dali.io import decode
    monkeypatch.setattr(decode, "jpeg_round_trip", lambda image, quality: None)  # CPU: libjpeg, not the torch steps
    made = []
    init = ragged.Flat.__init__

    def counting(self, *a, **k):
        made.append(1)
        init(self, *a, **k)

    per_sample = run(build, data, False, monkeypatch, layout=layout)
    assert not made  # the CPU default: sample by sample
    monkeypatch.setattr(ragged.Flat, "__init__", counting)
    batched = run(build, data, True, monkeypatch, layout=layout)
    assert made, "the batched path did not run"
    _same(per_sample, batched)


@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("name", list(CASES))
def test_batched_path_gives_the_per_sample_values(name, batch, monkeypatch):
    if batch == "tiny" and name.startswith(NEEDS_CROP):
        pytest.skip("windows larger than the images")
    _check(CASES[name], BATCHES[batch], monkeypatch)


@pytest.mark.parametrize("name", list(HW_CASES))
def test_single_channel_images(name, monkeypatch):
    data = images(6, 1, 40, seed=3, channels=None)
    _check(HW_CASES[name], data, monkeypatch, layout="HW")


def test_outputs_are_views_of_one_buffer_the_next_op_reads_without_a_copy():
    samples = [torch.randint(0, 255, (h, 5, 3), dtype=torch.uint8) for h in (3, 7, 2)]
    flat = ragged.Flat(samples, inner=1)
    assert flat.data.data_ptr() not in [s.data_ptr() for s in samples]  # a copy: not adjacent
    outs = flat.split(flat.items() + 1)
    again = ragged.Flat(outs, inner=1)
    assert again.data.data_ptr() == outs[0].data_ptr()  # adjacent: a view
    assert torch.equal(again.data, torch.cat([o.reshape(-1) for o in outs]))
    assert [tuple(o.shape) for o in outs] == [(3, 5, 3), (7, 5, 3), (2, 5, 3)]
    assert again.ids().tolist() == [0] * 15 + [1] * 35 + [2] * 10


def test_size_groups_bound_the_padding():
    hw = [(400, 420), (380, 440), (30, 40), (410, 400), (32, 41), (4000, 10)]
    groups = ragged.size_groups(hw, max_waste=1.6)
    assert sorted(i for g in groups for i in g) == list(range(len(hw)))
    for g in groups:
        box = max(hw[i][0] for i in g) * max(hw[i][1] for i in g)
        assert len(g) == 1 or len(g) * box <= 1.6 * sum(hw[i][0] * hw[i][1] for i in g)
    assert any(set(g) == {0, 1, 3} for g in groups)  # the similar large ones together
    assert len(ragged.size_groups([(400, 420)] * 8)) == 1


@pytest.mark.parametrize("border", ragged.BORDERS)
def test_border_map_is_the_filters_border_per_extent(border):
    from torch_dali.functional.filters import border_indices
    for n in (1, 2, 5):
        i = torch.arange(-9, n + 9)
        got = ragged.border_map(i, torch.full_like(i, n), border)
        assert torch.equal(got, border_indices(n, 9, 9, border)), (border, n)


def test_batched_host_math_is_the_per_sample_math():
    """Matrices computed for the whole batch at once (rotate's, hsv's) equal those of one sample
    computed alone with the former per-sample formulas."""
    import math

    from torch_dali.functional import affine as A
    from torch_dali.functional import color as K
    g = np.random.default_rng(4)
    ins, outs = g.integers(1, 900, (500, 2)).tolist(), g.integers(1, 900, (500, 2)).tolist()
    rads = [float(A.deg2rad(a)) for a in g.uniform(-400, 400, 500)]
    f = np.float32  # composed in float32, as DALI composes it

    def mul(a, b):  # float32 products summed left to right, each rounded (no fused multiply-add)
        out = np.zeros((3, 3), f)
        for r in range(3):
            for col in range(3):
                acc = f(a[r, 0] * b[0, col])
                for k in (1, 2):
                    acc = f(acc + f(a[r, k] * b[k, col]))
                out[r, col] = acc
        return out

    def one(i, o, r):
        c, s = f(math.cos(float(f(r)))), f(math.sin(float(f(r))))
        t_in = np.array([[1, 0, 0.5 * i[0]], [0, 1, 0.5 * i[1]], [0, 0, 1]], f)
        t_out = np.array([[1, 0, -0.5 * o[0]], [0, 1, -0.5 * o[1]], [0, 0, 1]], f)
        return mul(mul(t_in, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], f)), t_out)[:-1]
    np.testing.assert_array_equal(A.rotate_matrices(ins, outs, rads), np.stack([one(*a) for a in zip(ins, outs, rads)]))
    hue, sat, val = g.uniform(-180, 180, 300).tolist(), g.uniform(0, 3, 300).tolist(), g.uniform(0, 2, 300).tolist()
    # the color matrix: DALI's float32 composition (test_color_matrix_float32), sample by sample
    ref = [K.hsv_matrix(h, s, v) for h, s, v in zip(hue, sat, val)]
    assert torch.equal(K.hsv_matrices64(hue, sat, val).float(), torch.stack(ref).float())


MIXED_CHANNELS = ["gaussian_blur_sigma", "laplacian", "median_blur", "dilate", "flip", "erase", "noise_gaussian",
                  "water", "warp_affine_fixed"]


@pytest.mark.parametrize("name", MIXED_CHANNELS)
def test_a_batch_of_mixed_channel_counts_runs_sample_by_sample(name, monkeypatch):
    """DALI's tests feed HWC batches whose samples have 1, 2 or 3 channels: the flat form keeps a
    pixel's channels together, so such a batch takes the per-sample path (it used to fail on CUDA:
    "the samples' last 1 dimensions differ")."""
    g = np.random.default_rng(4)
    data = [g.integers(0, 256, (int(g.integers(8, 30)), int(g.integers(8, 30)), c)).astype(np.uint8)
            for c in (1, 2, 3, 2, 1)]
    _same(run(CASES[name], data, False, monkeypatch), run(CASES[name], data, True, monkeypatch))
