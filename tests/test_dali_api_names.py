"""The names and module paths DALI code imports, and what `pipe.run()` hands back (DALI's
TensorListCPU / TensorCPU API), checked against DALI 2.4's behaviour."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import torch_dali
from torch_dali import fn, pipeline_def, types


@pytest.mark.parametrize("module,names", [
    ("torch_dali.pipeline", ["Pipeline", "pipeline_def", "DataNode", "experimental", "do_not_convert"]),
    ("torch_dali.types", ["NO_TYPE", "Constant", "ScalarConstant", "TensorLayout", "SampleInfo", "BatchInfo",
                          "CPU_ONLY_DEVICE_ID", "PipelineAPIType", "to_numpy_type", "to_dali_type", "DALIDataType",
                          "NFHWC", "NFCHW", "SAME", "CUDAStream"]),
    ("torch_dali.tensors", ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]),
    ("torch_dali.backend", ["TensorCPU", "TensorListCPU", "__cuda_version__", "GetCudaVersion",
                            "RestrictPinnedMemUsage", "SetHostBufferShrinkThreshold", "ReleaseUnusedMemory"]),
    ("torch_dali.data_node", ["DataNode"]),
    ("torch_dali.math", ["abs", "fabs", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "floor", "ceil",
                         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                         "atanh", "min", "max", "pow", "fpow", "atan2", "clamp"]),
    ("torch_dali.plugin_manager", ["load_library"]),
    ("torch_dali.tfrecord", ["FixedLenFeature", "VarLenFeature", "int64", "float32", "string"]),
    ("torch_dali.plugin.base_iterator", ["LastBatchPolicy"]),
    ("torch_dali.plugin.pytorch", ["DALIGenericIterator", "DALIClassificationIterator", "DALIRaggedIterator",
                                   "feed_ndarray", "to_torch_type", "LastBatchPolicy", "TorchPythonFunction"]),
    ("torch_dali.pipeline.experimental", ["pipeline_def"]),
])
def test_dali_module_paths_have_dali_names(module, names):
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} lacks {missing}"


def test_types_values_as_dali():
    assert types.to_numpy_type(types.FLOAT) is np.float32 and types.to_dali_type(np.uint8) is types.UINT8
    assert types.CPU_ONLY_DEVICE_ID == -99999 and types.NFHWC == "FHWC" and types.TensorLayout("HWC") == "HWC"
    c = types.Constant(3)
    assert isinstance(c, types.ScalarConstant) and c.dtype == types.INT32 and int(c.uint8()) == 3
    assert types.Constant(np.float64(2.5)).dtype == types.FLOAT64 and types.Constant(True).dtype == types.BOOL
    with pytest.raises(TypeError):
        float(types.Constant(3))
    assert types.SampleInfo(1, 2, 3, 4).idx_in_batch == 2 and types.BatchInfo(5, 6).epoch_idx == 6


def test_plugin_manager_refuses_clearly():
    from torch_dali import plugin_manager
    with pytest.raises(ValueError, match="cannot load DALI plugins"):
        plugin_manager.load_library("libcustom.so")


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def _two():
    return fn.external_source(lambda: [np.arange(6, dtype=np.uint8).reshape(2, 3), np.ones((2, 3), np.uint8)],
                              layout="HW"), fn.external_source(lambda: [np.zeros(2, np.float32),
                                                                         np.zeros(3, np.float32)])


def test_run_returns_dali_tensor_lists():
    dense, ragged = _two().run()
    assert isinstance(dense, torch_dali.TensorListCPU) and not isinstance(dense, torch_dali.TensorListGPU)
    assert dense.layout() == "HW" and dense.shape() == [(2, 3), (2, 3)] and dense.dtype == types.UINT8
    assert len(dense) == 2 and dense.is_dense_tensor() and dense.as_tensor().shape == (2, 2, 3)
    assert dense.as_cpu() is dense and dense.as_array().shape == (2, 2, 3) and dense.at(1).tolist() == [[1] * 3] * 2
    sample = dense[0]
    assert isinstance(sample, torch_dali.tensors.TensorCPU) and isinstance(sample, torch.Tensor)
    assert sample.shape() == [2, 3] and sample.shape == (2, 3) and sample.as_cpu() is sample
    assert np.array(sample).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert ragged.shape() == [(2,), (3,)] and not ragged.is_dense_tensor()
    with pytest.raises(IndexError):
        dense[2]


def test_tensor_lists_from_numpy_as_dali():
    from torch_dali.tensors import TensorCPU, TensorListCPU
    tl = TensorListCPU(np.zeros((2, 3, 4, 3), np.uint8), "HWC")
    assert tl.shape() == [(3, 4, 3)] * 2 and tl.layout() == "HWC" and tl[1].shape() == [3, 4, 3]
    assert TensorListCPU([np.zeros((2, 3)), np.ones((1, 3))]).shape() == [(2, 3), (1, 3)]
    assert TensorCPU(np.ones(3)).shape() == [3]
    with pytest.raises(ValueError, match="layout"):
        TensorListCPU(np.zeros((2, 3, 4), np.uint8), "HWC")


def test_backend_reports_versions():
    from torch_dali import backend
    assert isinstance(backend.__cuda_version__, int) and backend.__cuda_version__ >= 0
    assert backend.RestrictPinnedMemUsage() is False


def test_library_versions_as_dali_2_4():
    """DALI 2.4 (with or without CUDA) answers -1 for the nvJPEG and NPP versions; its tests compare
    them with numbers (test_imgcodec's `GetNvjpegVersion() < 11040` while collecting)."""
    from torch_dali import backend
    assert backend.GetNvjpegVersion() == -1 and backend.GetNppVersion() == -1
