"""Each standard augmentation of torch_dali.auto_aug alone, at fixed magnitude bins and signs,
against NVIDIA DALI 2.4's CPU output of the same augmentation on the same images (HWC, a ragged
batch, and FHWC videos): tests/reference/auto_aug_cases.py defines the cases, auto_aug_make.py
stored DALI's outputs, and the "live" variant runs DALI now when it is importable.

Tolerance: none, values, shape, dtype and layout exact for every augmentation, the resampling
ones (shear_x/y, translate_x/y, rotate) included: their points are walked along each row as DALI's
CPU warp does (before that, up to 2.1% of shear_y's values were 1 off, at bilinear ties)."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import torch_dali.auto_aug as auto_aug
from torch_dali import fn, pipeline_def, types
from tests.reference import auto_aug_cases as C



@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).parent / "reference" / C.TABLES) as z:
        return {k: z[k] for k in z.files}


@functools.lru_cache(maxsize=None)
def ours(name: str) -> dict[str, np.ndarray]:
    imgs, vids = C.images(), C.videos()

    @pipeline_def(batch_size=len(imgs), num_threads=2, device_id=None, seed=1234)
    def pipe():
        x = fn.external_source(source=lambda: imgs, batch=True, layout="HWC")
        v = fn.external_source(source=lambda: vids, batch=True, layout="FHWC")
        return tuple(C.graph(fn, types, auto_aug, name, x, v))

    p = pipe()
    p.build()
    out: dict[str, np.ndarray] = {}
    for (key, *_), tl in zip(C.plan(auto_aug, name), p.run()):
        for i in range(len(tl)):
            out[f"{key}/{i}"] = np.asarray(tl.at(i))
        out[f"{key}/layout"] = np.array(tl.layout())
    return out


def dali(source: str, name: str) -> dict[str, np.ndarray]:
    if source == "table":
        return stored()
    try:
        from tests.reference.auto_aug_dali import run_suite
    except Exception as e:  # not installed here (CI), or it cannot load
        pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({type(e).__name__}: {e})")
    return run_suite(name)


def check(key: str, aug: str, got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert str(got[f"{key}/layout"]) == str(want[f"{key}/layout"]), key
    for i in range(len(C.images())):
        a, b = got[f"{key}/{i}"], want[f"{key}/{i}"]
        assert a.shape == b.shape and a.dtype == b.dtype, (key, i, a.shape, a.dtype, b.shape, b.dtype)
        diff = np.abs(a.astype(np.int32) - b.astype(np.int32))
        assert diff.max() == 0, (key, aug, i, int(diff.max()), float((diff > 0).mean()))


@pytest.mark.parametrize("source", ["table", "live"])
@pytest.mark.parametrize("name", list(C.SUITES))
def test_each_augmentation_matches_dali(name: str, source: str) -> None:
    want = dali(source, name)
    got = ours(name)
    plan = C.plan(auto_aug, name)
    assert plan, name
    for key, aug, *_ in plan:
        check(key, aug, got, want)


def test_every_standard_augmentation_is_covered() -> None:
    """The cases reach every augmentation of the module, on images and on videos."""
    names = {aug for name in C.SUITES for _, aug, *_ in C.plan(auto_aug, name)}
    standard = {v.name for v in vars(auto_aug.augmentations).values() if isinstance(v, auto_aug.core.Augmentation)}
    assert standard - {"identity"} <= names, standard - names
    videos = {aug for name in C.SUITES for _, aug, _, _, kind in C.plan(auto_aug, name) if kind == "video"}
    assert videos >= standard - {"translate_x", "translate_y", "identity"}, standard - videos
