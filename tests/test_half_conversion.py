"""Conversion to FLOAT16 as DALI 2.4's CPU backend does it: a value halfway between two float16
values goes to the one farther from zero (torch and IEEE's default go to the even one), other
values to the nearest; float64 and integer sources go through float32 first. Outputs of DALI 2.4
(CPU) on the same inputs, for fn.cast and for ops that write FLOAT16 (crop_mirror_normalize, crop,
pad's fill value, lookup_table's values)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.functional.half import to_half

H = types.FLOAT16
F32 = np.array([1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 2049, -2049, 4098, 2**-25, 3 * 2**-25, 65519, 65520,
                0.5 + 2**-12], np.float32)
F64 = np.array([1 + 2**-11 - 2**-40, 1 + 2**-11 + 2**-40, 2049.0, 2**-25], np.float64)
I32 = np.array([2049, 2051, -2049, 4097, 4098, 65520, 8194], np.int32)
U16 = np.array([2049, 2051, 4098, 65519, 65535], np.uint16)
INF = float("inf")

CASES = {  # name: (sample, layout, op, DALI 2.4's float16 output as float64 values)
    "cast_f32": (F32, "", lambda x: fn.cast(x, dtype=H),
                 [1.0009765625, 1.001953125, -1.0009765625, 2050.0, -2050.0, 4100.0, 2**-24, 2**-23, 65504.0, INF,
                  0.50048828125]),
    # 1 + 2**-11 - 2**-40 is a tie once rounded to float32: up, as DALI goes through float32
    "cast_f64": (F64, "", lambda x: fn.cast(x, dtype=H), [1.0009765625, 1.0009765625, 2050.0, 2**-24]),
    "cast_i32": (I32, "", lambda x: fn.cast(x, dtype=H), [2050.0, 2052.0, -2050.0, 4096.0, 4100.0, INF, 8192.0]),
    "cast_u16": (U16, "", lambda x: fn.cast(x, dtype=H), [2050.0, 2052.0, 4100.0, 65504.0, INF]),
    "cmn": (F32[:8].reshape(2, 4, 1).copy(), "HWC", lambda x: fn.crop_mirror_normalize(x, dtype=H, output_layout="HWC"),
            [1.0009765625, 1.001953125, -1.0009765625, 2050.0, -2050.0, 4100.0, 2**-24, 2**-23]),
    "crop_u16": (U16[:4].reshape(2, 2, 1).copy(), "HWC", lambda x: fn.crop(x, crop=(2, 2), dtype=H),
                 [2050.0, 2052.0, 4100.0, 65504.0]),
    "pad_fill": (np.zeros(2, np.float16), "", lambda x: fn.pad(x, fill_value=2049, shape=[3]), [0.0, 0.0, 2050.0]),
    "lut": (np.arange(4, dtype=np.uint8), "",
            lambda x: fn.lookup_table(x, keys=[0, 1, 2, 3], values=[2049, 1 + 2**-11, 4098, -2049], dtype=H),
            [2050.0, 1.0009765625, 4100.0, -2050.0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_outputs_as_dali(name):
    sample, layout, op, expected = CASES[name]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: [sample], layout=layout))

    p = pipe()
    p.build()
    out = np.asarray(p.run()[0][0])
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.astype(np.float64).ravel(), np.array(expected))


def test_ties_and_random_values_bit_for_bit():
    # 20,000 exact ties (both signs, subnormals to the largest finite) and 20,000 ordinary values:
    # the sha256 of DALI 2.4's fn.cast output; 9,997 of them differ from torch's round-half-to-even
    r = np.random.default_rng(0)
    bits = r.integers(0, 0x7bff, 20000).astype(np.uint16)
    lo, hi = bits.view(np.float16).astype(np.float64), (bits + 1).view(np.float16).astype(np.float64)
    ties = ((lo + hi) / 2 * np.where(r.random(20000) < 0.5, -1, 1)).astype(np.float32)
    v = np.concatenate([ties, (r.standard_normal(20000) * 1000).astype(np.float32)])
    out = to_half(torch.from_numpy(v)).numpy()
    assert hashlib.sha256(out.tobytes()).hexdigest() == \
        "48d47bf69007ae6367fff26f8f611a8c61ef4e234c48dce6bc4f06a5c7a15551"
    assert int((out != v.astype(np.float16)).sum()) == 9997
