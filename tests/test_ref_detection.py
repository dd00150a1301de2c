"""Detection ops and readers.coco against DALI 2.4's CPU backend, on tests/reference/detection_cases.py.

Tables: tests/reference/detection_tables.npz (`python -m tests.reference.make_detection_tables` in a
DALI venv); the "live" variants run DALI now when it imports.
- readers.coco, bb_flip, bbox_paste, box_encoder: exact (same values, shapes, dtypes, sample order).
- random_bbox_crop, ssd_random_crop: DALI draws from mt19937 streams we do not reproduce, so the
  windows for a seed differ; their distributions must not: each of anchor x, y, shape w, h and the
  number of boxes kept passes a two-sample Kolmogorov-Smirnov test against DALI's 1200 windows at
  alpha = 0.001 (our draws are seeded, so the test is deterministic).
"""
from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np
import pytest

from reference import detection_cases as C
from reference import detection_ours as O

SOURCES = ("table", "live")


@functools.lru_cache(maxsize=1)
def _stored() -> dict[str, np.ndarray]:
    with np.load(Path(C.__file__).with_name(C.TABLES)) as z:
        return {k: z[k] for k in z.files}


@functools.lru_cache(maxsize=1)
def _dali() -> tuple[ModuleType | None, str]:
    try:
        from reference import detection_dali
    except Exception as e:  # not installed here (CI), or it cannot load
        return None, f"{type(e).__name__}: {e}"
    return detection_dali, ""


def _live(fn: Callable[[ModuleType], Any]) -> Any:
    mod, why = _dali()
    if mod is None:
        pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({why}); the stored tables "
                    "were compared instead")
    return fn(mod)


def assert_same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=what)


# -- readers.coco -------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", list(C.COCO_CASES))
def test_coco_reader(case, source, tmp_path):
    got = O.coco(case, tmp_path / "ours")
    if source == "live":
        want = _live(lambda d: d.coco(case, tmp_path / "dali"))
    else:
        t = _stored()
        n = int(t[f"coco/{case}/n"])
        want = [{k.rsplit("/", 1)[1]: v for k, v in t.items() if k.startswith(f"coco/{case}/{i}/")} for i in range(n)]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert sorted(g) == sorted(w), (i, sorted(g), sorted(w))
        for name in w:
            assert_same(g[name], w[name], f"{case} sample {i} {name}")


# -- deterministic box ops ----------------------------------------------------------------------------

def _box_samples(args: dict[str, Any]) -> list[np.ndarray]:
    return C.BOX_SAMPLES if args["ltrb"] else C.XYWH_SAMPLES


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("i", range(len(C.FLIP_CASES)), ids=[str(a) for a in C.FLIP_CASES])
def test_bb_flip(i, source):
    from torch_dali import fn
    args, samples = C.FLIP_CASES[i], _box_samples(C.FLIP_CASES[i])
    got = O.run(lambda b: fn.bb_flip(b, **args), [samples], len(samples))[0]
    want = (_live(lambda d: d.bb_flip(args, samples)) if source == "live"
            else [_stored()[f"bb_flip/{i}/{k}"] for k in range(len(samples))])
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"sample {k}")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("i", range(len(C.PASTE_CASES)), ids=[str(a) for a in C.PASTE_CASES])
def test_bbox_paste(i, source):
    from torch_dali import fn
    args, samples = C.PASTE_CASES[i], _box_samples(C.PASTE_CASES[i])
    got = O.run(lambda b: fn.bbox_paste(b, **args), [samples], len(samples))[0]
    want = (_live(lambda d: d.bbox_paste(args, samples)) if source == "live"
            else [_stored()[f"bbox_paste/{i}/{k}"] for k in range(len(samples))])
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"sample {k}")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("i", range(len(C.ENCODER_CASES)), ids=[str(a) for a in C.ENCODER_CASES])
def test_box_encoder(i, source):
    from torch_dali import fn
    args = C.ENCODER_CASES[i]
    enc, lab = O.run(lambda b, la: tuple(fn.box_encoder(b, la, anchors=C.anchors(), **args)),
                     [C.BOX_SAMPLES, C.ENCODER_LABELS], len(C.BOX_SAMPLES))
    if source == "live":
        w_enc, w_lab = _live(lambda d: d.box_encoder(args))
    else:
        n = len(C.BOX_SAMPLES)
        w_enc = [_stored()[f"box_encoder/{i}/{k}/boxes"] for k in range(n)]
        w_lab = [_stored()[f"box_encoder/{i}/{k}/labels"] for k in range(n)]
    for k in range(len(C.BOX_SAMPLES)):
        assert_same(lab[k], w_lab[k], f"labels of sample {k}")
        assert_same(enc[k], w_enc[k], f"boxes of sample {k}")


# -- random crops: distributions --------------------------------------------------------------------

def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance between the two samples' empirical distribution functions."""
    a, b = np.sort(a), np.sort(b)
    x = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, x, "right") / len(a) - np.searchsorted(b, x, "right") / len(b)).max())


def ks_critical(n: int, m: int, alpha: float = 0.001) -> float:
    return float(np.sqrt(-np.log(alpha / 2) / 2) * np.sqrt((n + m) / (n * m)))


def assert_same_distribution(ours: np.ndarray, dali: np.ndarray, names: list[str]) -> None:
    crit = ks_critical(len(ours), len(dali))
    stats = {name: ks_statistic(ours[:, k], dali[:, k]) for k, name in enumerate(names)}
    assert all(s <= crit for s in stats.values()), (stats, crit)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", list(C.CROP_CASES))
def test_random_bbox_crop_distribution(case, source):
    dali = _live(lambda d: d.crop_windows(case)) if source == "live" else _stored()[f"crop/{case}"]
    assert_same_distribution(O.crop_windows(case), dali, ["anchor x", "anchor y", "width", "height", "boxes kept"])


@pytest.mark.parametrize("source", SOURCES)
def test_ssd_random_crop_distribution(source):
    dali = _live(lambda d: d.ssd_crop_windows()) if source == "live" else _stored()["ssd_crop"]
    assert_same_distribution(O.ssd_crop_windows(), dali, ["height", "width", "boxes kept"])


def test_ks_check_can_fail():
    """The distribution check rejects a window distribution DALI does not have (a guard on the test)."""
    other = O.crop_windows("no_nocrop")
    with pytest.raises(AssertionError):
        assert_same_distribution(other, _stored()["crop/scaling"], ["x", "y", "w", "h", "n"])
