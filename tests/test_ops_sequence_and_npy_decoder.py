"""sequence_rearrange and decoders.numpy, on the cases checked against DALI 2.4's CPU backend
(values, layouts, types; which inputs are refused when the pipeline runs)."""
from __future__ import annotations

import io

import numpy as np
import pytest

from feeds import run_graph
from torch_dali import fn, types


SEQ = [np.arange(6, dtype=np.int32).reshape(3, 2), np.arange(8, dtype=np.int32).reshape(4, 2) + 100]


def test_sequence_rearrange_orders_frames():
    out = run_graph(lambda x: fn.sequence_rearrange(x, new_order=[2, 0, 0]), SEQ, "FX")
    assert out.layout() == "FX"
    np.testing.assert_array_equal(np.asarray(out[0]), [[4, 5], [0, 1], [0, 1]])
    np.testing.assert_array_equal(np.asarray(out[1]), [[104, 105], [100, 101], [100, 101]])
    per_sample = fn.constant(idata=[1, 0], dtype=types.INT32)
    out = run_graph(lambda x: fn.sequence_rearrange(x, new_order=per_sample), SEQ, "FX")
    np.testing.assert_array_equal(np.asarray(out[1]), [[102, 103], [100, 101]])


@pytest.mark.parametrize("order,layout,data,match", [
    ([3], "FX", SEQ, r"new_order\[0\]` is 3"),
    ([-1], "FX", SEQ, r"new_order\[0\]` is -1"),
    ([], "FX", SEQ, "empty"),
    ([0], "XF", SEQ, "not a sequence"),
    ([0], "F", [np.arange(3, dtype=np.int32)] * 2, "at least one axis per frame"),
    (fn.constant(idata=[1, 2], shape=[2, 1], dtype=types.INT32), "FX", SEQ, "1-D"),  # DALI refuses a 2-D order too
    # DALI 2.4 refuses a float order tensor, even of whole numbers (measured)
    (fn.constant(fdata=[1.0, 0.0], dtype=types.FLOAT), "FX", SEQ, "must hold integers"),
])
def test_sequence_rearrange_refusals(order, layout, data, match):
    with pytest.raises(RuntimeError, match=match):
        run_graph(lambda x: fn.sequence_rearrange(x, new_order=order), data, layout)


def _enc(a: np.ndarray) -> np.ndarray:
    b = io.BytesIO()
    np.save(b, a)
    return np.frombuffer(b.getvalue(), np.uint8)


def test_numpy_decoder_values_types_and_conversion():
    f = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    out = run_graph(lambda x: fn.decoders.numpy(x), [_enc(f), _enc(f + 1)])
    assert out.dtype == types.INT16 and out.layout() == ""
    np.testing.assert_array_equal(np.asarray(out[1]), f + 1)
    out = run_graph(lambda x: fn.decoders.numpy(x, dtype=types.INT32), [_enc(np.array([2.5, -2.5, 1e10], np.float32))])
    np.testing.assert_array_equal(np.asarray(out[0]), [3, -3, 2**31 - 1])  # rounded away from 0, saturated
    out = run_graph(lambda x: fn.decoders.numpy(x), [_enc(np.float64(3.5))])
    assert np.asarray(out[0]).shape == () and float(np.asarray(out[0])) == 3.5


@pytest.mark.parametrize("data,match", [
    ([_enc(np.arange(4, dtype=np.float32)), _enc(np.arange(4, dtype=np.int16))], "share a type"),
    ([_enc(np.arange(4, dtype=np.float32)), _enc(np.ones((2, 2), np.float32))], "dimensions"),
    ([np.zeros(10, np.uint8)], "magic"),
    ([_enc(np.arange(4, dtype=np.float32))[:-3]], "truncated"),
    ([_enc(np.array([1], ">i4"))], "big-endian"),
])
def test_numpy_decoder_refusals(data, match):
    with pytest.raises(RuntimeError, match=match):
        run_graph(lambda x: fn.decoders.numpy(x), data)
