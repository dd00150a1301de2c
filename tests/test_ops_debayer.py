"""debayer against DALI 2.4's CPU backend: tests/reference/debayer_tables.npz (made once by
`/work/dali-venv/bin/python -m tests.reference.debayer_ref`) holds DALI's output for each case of
tests/reference/debayer_ref.py (bilinear_ocv, edgeaware_ocv, vng_ocv, gray_ocv and `default`, all
four patterns, uint8 and uint16, HW / HWC / FHW, per-sample positions) and what DALI refuses."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch

from reference import debayer_ref as R
from torch_dali import fn, pipeline_def


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, np.ndarray]:
    with np.load(R.TABLES) as z:
        return {k: z[k] for k in z.files}


def run(samples: list[np.ndarray], layout: str, args: dict[str, Any], positions: list[list[int]] | None = None,
        device: str = "cpu", name: str = "debayer", per_frame: bool = False) -> tuple[list[np.ndarray], str]:
    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None if device == "cpu" else 0)
    def pipe():
        x = fn.external_source(source=lambda: [torch.from_numpy(s) for s in samples], batch=True,
                               layout=layout or None)
        if device == "gpu":
            x = x.gpu()
        kw = dict(args)
        if positions is not None:
            pos = fn.external_source(source=lambda: [np.array(p, np.int32) for p in positions], batch=True)
            kw["blue_position"] = fn.per_frame(pos) if per_frame else pos
        op = fn.experimental.debayer if name == "experimental" else fn.debayer
        return op(x, device=device, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return [t.cpu().numpy() for t in out], out.layout()


@pytest.mark.parametrize("name", list(R.CASES))
def test_matches_dali(name):
    samples, layout, args, positions = R.CASES[name]
    got, lay = run(samples, layout, args, positions)
    assert lay == ("FHWC" if layout.startswith("F") else "HWC")
    for i, g in enumerate(got):
        want = _tables()[f"{name}/{i}"]
        assert g.dtype == want.dtype and g.shape == want.shape, (name, i, g.shape, want.shape)
        np.testing.assert_array_equal(g, want, err_msg=f"{name} sample {i}")


@pytest.mark.parametrize("name", list(R.ERRORS))
def test_refuses_what_dali_refuses(name):
    sample, layout, args = R.ERRORS[name]
    kind = bytes(_tables()[f"error/{name}"]).decode().split(":")[0]
    assert kind in ("RuntimeError", "ValueError")
    with pytest.raises(ValueError if kind == "ValueError" else RuntimeError):
        run([sample], layout, args)


def test_experimental_alias_and_per_frame():
    samples, layout, _, _ = R.CASES["sequences"]
    want = [_tables()[f"sequences/{i}"] for i in range(len(samples))]
    got, _ = run(samples, layout, {}, [[0, 1], [1, 0]], name="experimental")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # one position per frame, all frames of a sample alike: the same output
    frames = [[[0, 1]] * samples[0].shape[0], [[1, 0]] * samples[1].shape[0]]
    got, lay = run(samples, layout, {}, frames, per_frame=True)
    assert lay == "FHWC"
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_vng_column_rule_is_pinned(monkeypatch):
    """The VNG tables hold pixels where OpenCV's SIMD scale (0.5f / 7) and its per-pixel table
    (0.0714286f) round differently: taking either for every pixel breaks the match."""
    from torch_dali.ops import debayer_vng
    for every in (True, False):
        monkeypatch.setattr(debayer_vng, "_simd_columns",
                            lambda h, w, by, bx, dev, every=every: torch.full((h, w), every, device=dev))
        differs = False
        for tag in ("00", "01", "10", "11"):
            samples, layout, args, _ = R.CASES[f"vng_{tag}"]
            got, _ = run(samples, layout, args)
            differs |= any(not np.array_equal(g, _tables()[f"vng_{tag}/{i}"]) for i, g in enumerate(got))
        assert differs, f"the tables do not tell the column rule from all-{'SIMD' if every else 'table'}"


def _npp_by_pixel(m: np.ndarray, by: int, bx: int) -> np.ndarray:
    """NPP's bilinear demosaic (DALI's GPU default_npp), one pixel at a time: floored means of the
    nearest samples of each missing colour; green at a red or blue site along the axis where that
    colour changes less (both on a tie); the mosaic mirrored about its edge samples."""
    h, w = m.shape

    def v(y: int, x: int) -> int:
        y, x = abs(y), abs(x)  # mirror about sample 0 ...
        y, x = (2 * (h - 1) - y if y >= h else y), (2 * (w - 1) - x if x >= w else x)  # ... and the last
        return int(m[y, x])

    out = np.zeros((h, w, 3), np.int64)
    for y in range(h):
        for x in range(w):
            red_row, red_col = y % 2 == by, x % 2 == bx
            c = v(y, x)
            horiz = (v(y, x - 1) + v(y, x + 1)) // 2
            vert = (v(y - 1, x) + v(y + 1, x)) // 2
            diag = (v(y - 1, x - 1) + v(y - 1, x + 1) + v(y + 1, x - 1) + v(y + 1, x + 1)) // 4
            if red_row and red_col or not red_row and not red_col:  # a red or a blue site
                dh = abs(c - (v(y, x - 2) + v(y, x + 2)) // 2)
                dv = abs(c - (v(y - 2, x) + v(y + 2, x)) // 2)
                four = (v(y, x - 1) + v(y, x + 1) + v(y - 1, x) + v(y + 1, x)) // 4
                g = horiz if dh < dv else vert if dh > dv else four
                out[y, x] = (c, g, diag) if red_row else (diag, g, c)
            else:  # green: the other two colours from its row and its column
                out[y, x] = (horiz, c, vert) if red_row else (vert, c, horiz)
    return out.astype(m.dtype)


@pytest.mark.parametrize("pos", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_npp_kernel(pos):
    from torch_dali.ops.debayer import demosaic_npp
    rng = np.random.default_rng(5)
    # noise, structured mosaics (where the axis choice matters) and 2-wide edge cases
    for m in (*R.U8, *R.U16, rng.integers(0, 256, (2, 2), dtype=np.uint8), R.U8[1].T.copy()):
        got = demosaic_npp(torch.from_numpy(m)[None], *pos)[0].numpy()
        np.testing.assert_array_equal(got, _npp_by_pixel(m, *pos), err_msg=f"{m.shape} {m.dtype}")
    seq = R.FHW[0]  # frames of a sequence one by one
    got = demosaic_npp(torch.from_numpy(seq), *pos).numpy()
    for f in range(seq.shape[0]):
        np.testing.assert_array_equal(got[f], _npp_by_pixel(seq[f], *pos))
