"""torch_dali.auto_aug: DALI 2.4's public surface (signatures, suites, policies, magnitude
parameters) and the behaviour of AutoAugment, RandAugment and TrivialAugment: which augmentation
each sample gets, with which probability and magnitude, on which data; seeds.

The choices are checked two ways: with marker augmentations (each writes its index or its
magnitude into the sample, so the output says what was applied: the frequencies are compared with
the policy's probabilities), and with the standard suites (every output sample must equal the
output of one of the suite's augmentations, or sequence of them, applied alone to that sample:
those are checked against DALI in test_auto_aug_ops.py)."""
from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from typing import Any, Callable

import numpy as np
import pytest

import torch_dali.auto_aug as auto_aug
from torch_dali import fn, pipeline_def, types
from torch_dali.auto_aug import augmentations as a
from torch_dali.auto_aug import auto_augment as aa
from torch_dali.auto_aug import rand_augment as ra
from torch_dali.auto_aug import trivial_augment as ta
from torch_dali.auto_aug.core import Policy, augmentation, select, signed_bin
from tests.reference import auto_aug_api as API


# -- DALI's surface ------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["table", "live"])
def test_api_matches_dali(source: str) -> None:
    """Names, signatures and defaults; every augmentation's magnitude range, sign, device and the
    parameter of each bin; the suites and the four policies (sub-policies, probabilities, bins)."""
    if source == "live":
        try:
            import nvidia.dali.auto_aug as dali_auto_aug
        except Exception as e:  # not installed here (CI)
            pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({type(e).__name__}: {e})")
        want = json.loads(json.dumps(API.describe(dali_auto_aug), sort_keys=True))
    else:
        want = json.loads(API.STORED.read_text())
    got = json.loads(json.dumps(API.describe(auto_aug), sort_keys=True))
    assert got.keys() == want.keys()
    for part in want:
        for k in want[part]:
            assert got[part].get(k) == want[part][k], (part, k)


# -- running things --------------------------------------------------------------------------------------

def run(graph: Callable[[Any], Any], batch: list[np.ndarray], layout: str = "HWC", seed: int = 7,
        threads: int = 2, iterations: int = 1) -> list[list[np.ndarray]]:
    """Outputs of `graph(data)` (a DataNode or a tuple) per iteration: [[output, ...] per sample]."""
    @pipeline_def(batch_size=len(batch), num_threads=threads, device_id=None, seed=seed)
    def pipe():
        out = graph(fn.external_source(source=lambda: batch, batch=True, layout=layout))
        return out if isinstance(out, tuple) else (out,)

    p = pipe()
    p.build()
    res = []
    for _ in range(iterations):
        outs = p.run()
        res.append([[np.asarray(o.at(i)) for o in outs] for i in range(len(batch))])
    return res


def zeros(n: int) -> list[np.ndarray]:
    return [np.zeros((1, 1, 1), np.int32) for _ in range(n)]


def marker(k: int) -> Any:
    """An augmentation that appends digit k + 1 (base 16) to each sample: a sequence of markers
    leaves its order in the value."""
    def mark(data: Any, _: Any) -> Any:
        return data * 16 + (k + 1)
    return augmentation(mark, name=f"mark{k}")


@augmentation(mag_range=(0, 30), randomly_negate=True)
def magnitude_marker(data: Any, parameter: Any) -> Any:
    """Writes its (signed) magnitude: with 31 bins the magnitude of bin b is b."""
    return data * 0 + fn.cast(parameter * 100, dtype=types.INT32)


def assert_frequencies(counts: Counter, probabilities: dict[Any, float], n: int) -> None:
    """Each outcome's count within 5 standard deviations of its expectation; no other outcome."""
    assert set(counts) <= set(probabilities), set(counts) - set(probabilities)
    for outcome, p in probabilities.items():
        sd = math.sqrt(n * p * (1 - p)) or 1
        assert abs(counts[outcome] - n * p) <= 5 * sd, (outcome, counts[outcome], n * p)


# -- which augmentation, how often ------------------------------------------------------------------------

def test_select_applies_the_chosen_augmentation_per_sample() -> None:
    idx = [3, 0, 2, 2, 1, 0]
    out, = run(lambda x: select([marker(k) for k in range(4)], fn.external_source(
        source=lambda: [np.int32(i) for i in idx], batch=True), x), zeros(len(idx)))
    assert [int(s[0].item()) for s in out] == [k + 1 for k in idx]


def test_trivial_augment_draws_op_and_magnitude_uniformly_and_independently() -> None:
    n = 1200
    augs = [marker(0), marker(1), magnitude_marker]
    out, = run(lambda x: ta.apply_trivial_augment(augs, x, num_magnitude_bins=31, seed=5), zeros(n))
    values = [int(s[0].item()) for s in out]
    ops = Counter(v if v in (1, 2) else "mag" for v in values)
    assert_frequencies(ops, {1: 1 / 3, 2: 1 / 3, "mag": 1 / 3}, n)
    mags = [v for v in values if v not in (1, 2)]  # the magnitude marker writes multiples of 100
    m = len(mags)
    signs = Counter(v < 0 for v in mags if v != 0)
    assert_frequencies(signs, {True: 0.5, False: 0.5}, sum(signs.values()))
    bins = Counter(abs(v) // 100 for v in mags)
    assert_frequencies(bins, {b: 1 / 31 for b in range(31)}, m)
    # with a seed given, DALI draws the op and the bin from one stream (bin ~ op); here they are
    # independent: the samples that chose the last op still get low bins as often as high ones
    low = sum(1 for v in mags if abs(v) // 100 < 15)
    assert 0.35 < low / m < 0.6, low / m


def test_rand_augment_applies_n_ops_in_sequence_at_magnitude_m() -> None:
    n = 1000
    augs = [marker(0), marker(1), marker(2)]
    out, = run(lambda x: ra.apply_rand_augment(augs, x, n=2, m=4, num_magnitude_bins=5, seed=3), zeros(n))
    pairs = Counter(divmod(int(s[0].item()), 16) for s in out)
    assert_frequencies(pairs, {(i, j): 1 / 9 for i in (1, 2, 3) for j in (1, 2, 3)}, n)
    # magnitude bin m, with a sign drawn per step
    out, = run(lambda x: ra.apply_rand_augment([magnitude_marker], x, n=1, m=17, num_magnitude_bins=31), zeros(400))
    signs = Counter(int(s[0].item()) for s in out)
    assert_frequencies(signs, {1700: 0.5, -1700: 0.5}, 400)


def test_auto_augment_applies_a_sub_policy_stage_by_stage_with_its_probabilities() -> None:
    n = 2000
    m0, m1, m2 = marker(0), marker(1), marker(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a well-formed policy warns about nothing
        policy = Policy("test", 31, [[(m0, 0.3, None), (m1, 0.8, None)], [(m2, 1.0, None)],
                                     [(magnitude_marker, 1.0, 12)]])
    out, = run(lambda x: aa.apply_auto_augment(policy, x, seed=11), zeros(n))
    got = Counter(int(s[0].item()) for s in out)
    want = {3: 1 / 3, 0: 0.7 * 0.2 / 3, 1: 0.3 * 0.2 / 3, 2: 0.7 * 0.8 / 3, 18: 0.3 * 0.8 / 3,
            1200: 1 / 6, -1200: 1 / 6}
    assert_frequencies(got, want, n)


def test_auto_augment_runs_each_stage_as_the_policy_says() -> None:
    """Probability 0 never runs, 1 always; shorter sub-policies end early."""
    with pytest.warns(UserWarning, match="probability 0"):
        policy = Policy("p", 3, [[(marker(0), 0.0, None), (marker(1), 1.0, None)], [(marker(2), 1.0, None)]])
    out, = run(lambda x: aa.apply_auto_augment(policy, x), zeros(300))
    assert Counter(int(s[0].item()) for s in out).keys() == {2, 3}


# -- the standard suites: every output is one of the candidates ------------------------------------------

def images(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (int(rng.integers(6, 11)), int(rng.integers(6, 11)), 3), dtype=np.uint8)
            for _ in range(n)]


def sign(s: int) -> Any:
    return types.Constant(np.int32(s), device="cpu")


def alone(aug: Any, data: Any, b: int | None, s: int, bins: int) -> Any:
    mbin = None if aug.mag_range is None else signed_bin(b, random_sign=sign(s)) if aug.randomly_negate else b
    return aug(data, magnitude_bin=mbin, num_magnitude_bins=bins)


def variants(aug: Any, bins: int) -> list[tuple[int | None, int]]:
    if aug.mag_range is None:
        return [(None, 0)]
    return [(b, s) for b in range(bins) for s in ((0, 1) if aug.randomly_negate else (0,))]


def assert_each_is_a_candidate(result: list[list[np.ndarray]], names: list[str]) -> Counter:
    """Sample i's output (first) equals one of its candidates (the rest); returns what matched."""
    seen: Counter = Counter()
    for i, (got, *cands) in enumerate(result):
        hits = {names[k].split("/")[0] for k, c in enumerate(cands) if c.shape == got.shape and np.array_equal(c, got)}
        assert hits, f"sample {i}: the output is none of the suite's augmentations"
        seen.update(hits)
    return seen


def test_trivial_augment_wide_outputs_are_single_augmentations() -> None:
    bins = 3
    suite = ta.get_trivial_augment_wide_suite()
    names = [f"{aug.name}/{b}/{s}" for aug in suite for b, s in variants(aug, bins)]

    def graph(x: Any) -> tuple:
        cands = [alone(aug, x, b, s, bins) for aug in suite for b, s in variants(aug, bins)]
        return (ta.trivial_augment_wide(x, num_magnitude_bins=bins, seed=2), *cands)

    seen = Counter()
    for it in run(graph, images(16), iterations=3):
        seen += assert_each_is_a_candidate(it, names)
    assert len(seen) >= 8, seen  # 48 samples spread over the 14 augmentations


def test_rand_augment_outputs_are_sequences_of_two_augmentations() -> None:
    bins, m = 5, 4
    keep = ("rotate", "solarize", "equalize", "color")
    suite = [aug for aug in ra.get_rand_augment_suite() if aug.name in keep]
    excluded = [aug.name for aug in ra.get_rand_augment_suite() if aug.name not in keep]
    steps = [(aug, s) for aug in suite for s in ((0, 1) if aug.randomly_negate else (0,))]
    names = [f"{a1.name}+{a2.name}" for a1, _ in steps for a2, _ in steps]

    def graph(x: Any) -> tuple:
        cands = [alone(a2, alone(a1, x, m, s1, bins), m, s2, bins) for a1, s1 in steps for a2, s2 in steps]
        return (ra.rand_augment(x, n=2, m=m, num_magnitude_bins=bins, excluded=excluded, seed=4), *cands)

    seen = assert_each_is_a_candidate(run(graph, images(24, 1))[0], names)
    assert len(seen) >= 6, seen


def test_auto_augment_outputs_follow_the_policy() -> None:
    shear = a.shear_x.augmentation((0, 0.3), True)
    poster = a.posterize.augmentation((0, 4), False, a.poster_mask_uint8)
    policy = Policy("small", 11, [[(shear, 0.5, 7), (poster, 0.5, 2)], [(a.invert, 0.5, None)]])
    names, cands_of = [], []
    for label, make in (("none", lambda x: x), ("invert", lambda x: alone(a.invert, x, None, 0, 11)),
                        ("poster", lambda x: alone(poster, x, 2, 0, 11))):
        names.append(label)
        cands_of.append(make)
    for s in (0, 1):
        names += [f"shear{s}", f"shear{s}+poster"]
        cands_of += [lambda x, s=s: alone(shear, x, 7, s, 11),
                     lambda x, s=s: alone(poster, alone(shear, x, 7, s, 11), 2, 0, 11)]

    def graph(x: Any) -> tuple:
        return (aa.apply_auto_augment(policy, x, seed=9), *[c(x) for c in cands_of])

    seen = assert_each_is_a_candidate(run(graph, images(40, 2))[0], names)
    assert {"none", "invert", "shear0", "shear1", "poster"} & set(seen), seen


# -- data: layouts, videos, ragged batches, devices of the parameters --------------------------------------

@pytest.mark.parametrize("make", [
    lambda x: aa.auto_augment(x, seed=1),
    lambda x: aa.auto_augment(x, "reduced_cifar10", shape=x.shape()[:2], max_translate_rel=0.5),
    lambda x: aa.auto_augment(x, "svhn", fill_value=None, interp_type=types.INTERP_NN),
    lambda x: aa.auto_augment(x, "reduced_image_net"),
    lambda x: ra.rand_augment(x, n=3, m=20),
    lambda x: ra.rand_augment(x, n=1, m=5, monotonic_mag=False, max_translate_abs=(5, 10)),
    lambda x: ta.trivial_augment_wide(x, excluded=["equalize"]),
], ids=["aa", "aa-cifar-shape", "aa-svhn", "aa-reduced-imagenet", "ra", "ra-non-monotonic", "ta"])
def test_shapes_dtypes_layouts(make: Callable[[Any], Any]) -> None:
    imgs = images(6, 3)
    out, = run(make, imgs, iterations=1)
    for img, (o,) in zip(imgs, out):
        assert o.shape == img.shape and o.dtype == np.uint8


@pytest.mark.parametrize("make", [lambda x: aa.auto_augment(x), lambda x: ra.rand_augment(x, n=2, m=9),
                                  lambda x: ta.trivial_augment_wide(x)], ids=["aa", "ra", "ta"])
def test_videos(make: Callable[[Any], Any]) -> None:
    vids = [np.stack([im, 255 - im]) for im in images(4, 4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def pipe():
        return make(fn.external_source(source=lambda: vids, batch=True, layout="FHWC"))

    p = pipe()
    p.build()
    out, = p.run()
    assert out.layout() == "FHWC"
    assert [tuple(s) for s in out.shape()] == [v.shape for v in vids]


# -- seeds ---------------------------------------------------------------------------------------------

def test_same_seed_same_augmentations_whatever_the_threads() -> None:
    imgs = images(12, 5)

    def graph(x: Any) -> tuple:
        return aa.auto_augment(x), ra.rand_augment(x, n=2, m=15), ta.trivial_augment_wide(x)

    one = run(graph, imgs, seed=21, threads=1, iterations=2)
    four = run(graph, imgs, seed=21, threads=4, iterations=2)
    other = run(graph, imgs, seed=22, threads=1, iterations=2)
    same = all(np.array_equal(x, y) for it1, it4 in zip(one, four) for s1, s4 in zip(it1, it4) for x, y in zip(s1, s4))
    assert same
    differs = [not np.array_equal(x, y) for it1, it2 in zip(one, other) for s1, s2 in zip(it1, it2)
               for x, y in zip(s1, s2)]
    assert sum(differs) > len(differs) // 3
    # iterations differ from each other
    assert any(not np.array_equal(x, y) for x, y in zip(one[0][0], one[1][0]))


def test_explicit_seed_fixes_the_choices_whatever_the_pipeline_seed() -> None:
    imgs = images(10, 6)
    r1 = run(lambda x: ta.trivial_augment_wide(x, seed=99), imgs, seed=1)
    r2 = run(lambda x: ta.trivial_augment_wide(x, seed=99), imgs, seed=2)
    assert all(np.array_equal(x[0], y[0]) for x, y in zip(r1[0], r2[0]))
