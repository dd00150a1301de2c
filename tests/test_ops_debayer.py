"""debayer against DALI 2.4's CPU backend: tests/reference/debayer_tables.npz (made once by
`/work/dali-venv/bin/python -m tests.reference.debayer_ref`) holds DALI's output for each case of
tests/reference/debayer_ref.py (bilinear_ocv and gray_ocv, all four patterns, uint8 and uint16,
HW / HWC / FHW, per-sample positions) and what DALI refuses."""
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


def test_algorithms_we_lack_are_refused():
    for alg in ("edgeaware_ocv", "vng_ocv"):
        with pytest.raises(RuntimeError, match="not implemented"):
            run(R.U8[:1], "HW", {"blue_position": [0, 0], "algorithm": alg})
