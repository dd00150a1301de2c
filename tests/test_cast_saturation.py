"""`fn.cast` of floats to every integer type as DALI 2.4's CPU backend gives it (the tables measured
once under DALI 2.4): rounded half away from zero exactly (float64's 0.49999999999999994 -> 0 and
2**52 + 1 stays odd), saturated at the type's limits (infinities, 3e9, 1e19, 2**64), and NaN is
not 0 everywhere: int32 gives INT32_MIN, int64 INT64_MIN, uint64 2**63 (x86's result for an
invalid conversion), the others 0. `functional.crop.convert`, the other ops' conversion, gives the
same for the wide types and float64 inputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.functional.crop import convert

VALUES = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e19, 2.5, -2.5, 0.49999999999999994, 4503599627370497.0, 2.0 ** 64]
I64_MIN, I64_MAX, U64_MAX = -2 ** 63, 2 ** 63 - 1, 2 ** 64 - 1
DALI = {  # (source, target): DALI 2.4's fn.cast of VALUES
    ("float32", "int8"): [0, 127, -128, 127, -128, 127, 3, -3, 1, 127, 127],
    ("float32", "int16"): [0, 32767, -32768, 32767, -32768, 32767, 3, -3, 1, 32767, 32767],
    ("float32", "int32"): [-2147483648, 2147483647, -2147483648, 2147483647, -2147483648, 2147483647, 3, -3, 1,
                           2147483647, 2147483647],
    ("float32", "int64"): [I64_MIN, I64_MAX, I64_MIN, 3000000000, -3000000000, I64_MAX, 3, -3, 1, 4503599627370496,
                           I64_MAX],
    ("float32", "uint8"): [0, 255, 0, 255, 0, 255, 3, 0, 1, 255, 255],
    ("float32", "uint16"): [0, 65535, 0, 65535, 0, 65535, 3, 0, 1, 65535, 65535],
    ("float32", "uint32"): [0, 4294967295, 0, 3000000000, 0, 4294967295, 3, 0, 1, 4294967295, 4294967295],
    ("float32", "uint64"): [2 ** 63, U64_MAX, 0, 3000000000, 0, 9999999980506447872, 3, 0, 1, 4503599627370496,
                            U64_MAX],
    ("float64", "int8"): [0, 127, -128, 127, -128, 127, 3, -3, 0, 127, 127],
    ("float64", "int16"): [0, 32767, -32768, 32767, -32768, 32767, 3, -3, 0, 32767, 32767],
    ("float64", "int32"): [-2147483648, 2147483647, -2147483648, 2147483647, -2147483648, 2147483647, 3, -3, 0,
                           2147483647, 2147483647],
    ("float64", "int64"): [I64_MIN, I64_MAX, I64_MIN, 3000000000, -3000000000, I64_MAX, 3, -3, 0, 4503599627370497,
                           I64_MAX],
    ("float64", "uint8"): [0, 255, 0, 255, 0, 255, 3, 0, 0, 255, 255],
    ("float64", "uint16"): [0, 65535, 0, 65535, 0, 65535, 3, 0, 0, 65535, 65535],
    ("float64", "uint32"): [0, 4294967295, 0, 3000000000, 0, 4294967295, 3, 0, 0, 4294967295, 4294967295],
    ("float64", "uint64"): [2 ** 63, U64_MAX, 0, 3000000000, 0, 10000000000000000000, 3, 0, 0, 4503599627370497,
                            U64_MAX],
}
#: float16's NaN (DALI 2.4): as float32's
HALF_NAN = {"int8": 0, "int16": 0, "int32": -2 ** 31, "int64": I64_MIN, "uint8": 0, "uint16": 0, "uint32": 0,
            "uint64": 2 ** 63}


def _cast(x: np.ndarray, target: str) -> list[int]:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.cast(fn.external_source(source=lambda: [x], batch=True), dtype=getattr(types, target.upper()))
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0)).tolist()


@pytest.mark.parametrize("source, target", sorted(DALI))
def test_cast_of_floats_gives_dalis_values(source, target) -> None:
    assert _cast(np.array(VALUES, source), target) == DALI[source, target]


@pytest.mark.parametrize("target", sorted(HALF_NAN))
def test_cast_of_a_float16_nan(target) -> None:
    assert _cast(np.array([np.nan, -np.inf], np.float16), target)[0] == HALF_NAN[target]


@pytest.mark.parametrize("source, target", sorted(k for k in DALI if k[0] == "float64" or k[1][-2:] in ("32", "64")))
def test_convert_gives_the_same_for_wide_types_and_float64(source, target) -> None:
    x = torch.from_numpy(np.array(VALUES, source))
    got = convert(x, getattr(torch, target))
    if target == "uint64":  # torch has no uint64 tolist: through the bit patterns
        got = [v % 2 ** 64 for v in got.view(torch.int64).tolist()]
    else:
        got = got.tolist()
    assert got == DALI[source, target]
