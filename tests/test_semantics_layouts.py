"""Layouts travel through device copies: an op after `.gpu()` sees the layout the data came with
(fed per batch with feed_input(layout=...)), as in DALI 2.4 (found by DALI's test_crop.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.pipeline import Pipeline


@pytest.mark.parametrize("layout,shape,out", [("CDHW", (3, 8, 30, 10), (3, 2, 3, 4)),
                                              ("DHWC", (8, 30, 10, 3), (2, 3, 4, 3))])
def test_an_op_after_gpu_sees_the_fed_layout(layout, shape, out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no CUDA here: GPU ops run on the CPU, with a warning
        pipe = Pipeline(2, 1, 0)
        with pipe:
            x = fn.external_source(name="x")
            pipe.set_outputs(x.gpu(), fn.crop(x.gpu(), crop=(2, 3, 4)))
        pipe.build()
        pipe.feed_input("x", [np.zeros(shape, np.uint8)] * 2, layout=layout)
        copied, cropped = pipe.run()
    assert copied.layout() == layout and cropped.layout() == layout
    assert cropped.shape() == [out] * 2
