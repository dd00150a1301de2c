"""warp_affine(inverse_map=False) inverts a 2D matrix as DALI 2.4 does: in float32, det = a d - b c,
each linear entry divided by det, the translation -A' t summed left to right. torch_dali inverted
in float64 and rounded once; the last bit moved NN and linear pixels (here 3 of 15,360 values
each; on 48 random matrices 43 linear values in 13 samples). Found running DALI's warp notebook
(reconstructed) against DALI 2.4 CPU. Expected: DALI 2.4 CPU's outputs (sha256 of the bytes, and
the values where the float64 inversion differed).
"""
from __future__ import annotations

import hashlib

import numpy as np

from torch_dali import fn, pipeline_def, types
from torch_dali.functional.affine import invert_affine

IMG = np.random.default_rng(0).integers(0, 256, (64, 80, 3), dtype=np.uint8)
M = [0.8, 0.3, -20.0, -0.2, 1.1, 15.0]
DALI_SHA = {"nn": "7426d10d96e73db03af26cd22c4c07fdccd5a1e7fc2cceb1c81e22acbdb9055c",
            "linear": "481c9795b331b96854624f7f10b22a4559d50303040b2f12956aefa9b9361632"}
DALI_AT = {"nn": {(15, 1, 0): 104, (15, 1, 1): 234, (15, 1, 2): 10},
           "linear": {(5, 28, 0): 165, (15, 1, 2): 50, (26, 4, 2): 113}}


def _run(matrix_as_input: bool) -> dict[str, np.ndarray]:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: [IMG], layout="HWC")
        m = fn.external_source(lambda: [np.array(M, np.float32).reshape(2, 3)]) if matrix_as_input else None
        outs = []
        for it in (types.INTERP_NN, types.INTERP_LINEAR):
            kw = dict(inverse_map=False, interp_type=it, fill_value=0)
            outs.append(fn.warp_affine(x, m, **kw) if matrix_as_input else fn.warp_affine(x, matrix=M, **kw))
        return tuple(outs)

    p = pipe()
    p.build()
    nn, lin = p.run()
    return {"nn": np.ascontiguousarray(np.asarray(nn[0])), "linear": np.ascontiguousarray(np.asarray(lin[0]))}


def test_inverse_map_false_equals_dali():
    for as_input in (False, True):
        got = _run(as_input)
        for k, out in got.items():
            assert {idx: int(out[idx]) for idx in DALI_AT[k]} == DALI_AT[k], (as_input, k)
            assert hashlib.sha256(out.tobytes()).hexdigest() == DALI_SHA[k], (as_input, k)


def test_invert_affine_2d_is_float32_division():
    m = np.array(M, np.float32).reshape(2, 3)
    inv = invert_affine(m)
    f = np.float32
    det = f(f(m[0, 0] * m[1, 1]) - f(m[0, 1] * m[1, 0]))
    assert inv.dtype == np.float32
    assert inv[0, 0] == f(m[1, 1] / det) and inv[0, 1] == f(-m[0, 1] / det)
    assert inv[0, 2] == f(f(-inv[0, 0] * m[0, 2]) + f(-inv[0, 1] * m[1, 2]))
    np.testing.assert_allclose(np.vstack([inv, [0, 0, 1]]) @ np.vstack([m, [0, 0, 1]]), np.eye(3), atol=1e-5)
