"""normalize of 0-d (scalar) samples: each is normalized as the same value in a one-element
sample. DALI 2.4 returns values unrelated to the input for 0-d samples (measured: 2.4e-44 for
605.9 with no arguments, 1.26e-11 for 78 with scale=43.87, 0 or -1.5e-36 elsewhere), so the
expected values here are DALI 2.4's outputs for the same samples shaped (1,) (conformance/on_purpose.md).
Before, a 0-d sample's own mean was taken as 0 (78 came out as 1 * scale + shift)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def

A, B = np.array(10, np.uint8), np.array(30, np.uint8)


def _run(samples, **kw):
    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe():
        return fn.normalize(fn.external_source(source=lambda: samples, batch=True), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    return [np.asarray(out.at(i)) for i in range(len(samples))]


CASES = [  # (args, DALI 2.4's outputs for the samples shaped (1,))
    (dict(scale=43.87, shift=-4.197), [-4.197, -4.197]),
    (dict(scale=43.87, shift=-4.197, batch=True), [-1 * 43.87 - 4.197, 43.87 - 4.197]),
    (dict(batch=True), [-1.0, 1.0]),
    (dict(mean=3.0, stddev=2.0), [3.5, 13.5]),
    (dict(), [0.0, 0.0]),
]


@pytest.mark.parametrize("kw,want", CASES)
def test_scalars_as_one_element_samples(kw, want):
    got = _run([A, B], **kw)
    assert [g.shape for g in got] == [(), ()]
    np.testing.assert_allclose([float(g) for g in got], want, rtol=1e-6, atol=1e-5)
    one = _run([A.reshape(1), B.reshape(1)], **kw)
    np.testing.assert_allclose([float(g[0]) for g in one], want, rtol=1e-6, atol=1e-5)
