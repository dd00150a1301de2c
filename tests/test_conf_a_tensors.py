"""DALI's sample accessors on `Pipeline.run()` outputs: `t.layout()` and `t.dtype == types.X`."""
import numpy as np
import torch

from torch_dali import types
from torch_dali.tensor_list import TensorListCPU, TensorListGPU


def test_sample_layout_is_callable_and_still_torch_layout() -> None:
    for cls in (TensorListCPU, TensorListGPU):
        t = cls(np.zeros((2, 3, 4), np.uint8), "HW")[1]
        assert t.layout() == "HW"
        assert t.layout == torch.strided and torch.strided == t.layout
        assert not (t.layout != torch.strided)
        assert hash(t.layout) == hash(torch.strided)
        assert t.layout.torch_layout is torch.strided
    assert TensorListCPU(np.zeros((2, 3), np.uint8))[0].layout() == ""


def test_dali_types_equal_torch_dtypes() -> None:
    t = TensorListCPU(np.zeros((1, 2), np.float32))[0]
    assert t.dtype == types.FLOAT and types.FLOAT == t.dtype
    assert t.dtype != types.UINT8 and types.INT16 != torch.float32
    assert hash(types.INT32) == hash(torch.int32)
    assert {types.UINT8: "u8"}[torch.uint8] == "u8"
    assert types.STRING == types.STRING and types.STRING != types.NO_TYPE
    assert types.to_numpy_type(t.dtype) is np.float32
