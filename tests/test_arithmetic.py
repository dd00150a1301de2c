"""Arithmetic on DataNodes, checked against torch on the same samples."""
from __future__ import annotations

import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, GraphError
from torch_dali.pipeline import Pipeline


@pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=4)
def _pipe():
    images, labels = fn._test_images(fixed_size=True, name="Source")
    f = fn.cast(images, dtype=types.FLOAT)
    return images, labels, f / 255, labels - 1, 2 * labels + 1, f - f, -f, 10 // (labels % 7 + 1), abs(-labels)


def test_arithmetic_matches_torch():
    pipe = _pipe()
    pipe.build()
    images, labels, a, b, c, d, e, g, h = (t.as_tensor() for t in pipe.run())
    x = images.float()
    assert torch.equal(a, x / 255) and a.dtype == torch.float32
    assert torch.equal(b, labels - 1) and b.dtype == torch.int32
    assert torch.equal(c, 2 * labels + 1)
    assert torch.equal(d, torch.zeros_like(x)) and torch.equal(e, -x)
    assert torch.equal(g, torch.floor_divide(torch.full_like(labels, 10), labels % 7 + 1))
    assert torch.equal(h, labels)


def test_arithmetic_serializes():
    text = _pipe().serialize()
    assert "op: arithmetic" in text and "const:int32:255" in text  # `f / 255`: a typed constant operand
    a = _pipe()
    a.build()
    b = Pipeline.deserialize(serialized_pipeline=text)
    b.build()
    for x, y in zip(a.run(), b.run()):
        assert torch.equal(x.as_tensor(), y.as_tensor())


def test_bad_arithmetic():
    with pytest.raises(ArgumentError, match="op"):
        p = Pipeline(batch_size=1, device_id=None)
        with p:
            images, _ = fn._test_images()
            fn.arithmetic(images, op="hypot", scalar=1.0)
    p = Pipeline(batch_size=1, device_id=None)
    with p:
        images, _ = fn._test_images()
        with pytest.raises(GraphError, match="truth value"):  # also a TypeError, as in DALI
            bool(images + 1)


_MIN_BY_MINUS_ONE = """
import numpy as np
from torch_dali import fn, pipeline_def
for dt in (np.int8, np.int16, np.int32, np.int64):
    lo = np.iinfo(dt).min
    a, b = np.array([lo, 7, -7, lo], dt), np.array([-1, -1, 2, 3], dt)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x, y = fn.external_source(source=lambda: [a]), fn.external_source(source=lambda: [b])
        return x // y, x % y

    p = pipe()
    p.build()
    q, r = (np.asarray(t[0]) for t in p.run())
    print(np.dtype(dt).name, q.tolist(), r.tolist())
"""


def test_type_minimum_divided_by_minus_one_does_not_end_the_process():
    # INT_MIN // -1 overflows and the CPU traps: DALI 2.4's process dies of SIGFPE on it (and so did
    # torch_dali's, in torch's integer division); now -x wraps to the minimum, and x % -1 is 0
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", _MIN_BY_MINUS_ONE], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.split("\n")
    for k, (name, lo) in enumerate((("int8", -2**7), ("int16", -2**15), ("int32", -2**31), ("int64", -2**63))):
        # the small types compute in their own width too (C promotes, then the result wraps back)
        assert lines[k] == f"{name} [{lo}, -7, -3, {-(-lo // 3)}] [0, 0, -1, {-(-lo % 3)}]", lines[k]
