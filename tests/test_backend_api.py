"""DALI's `backend_impl` names and its batch-from-a-list rules, as DALI 2.4 behaves on the CPU:
`backend.types` (the type enums, `_DALIDataType`), `types._all_types`, and `TensorListCPU([...])`
refusing samples of different element types, dimensions or layouts with a TypeError."""
import numpy as np
import pytest

from torch_dali import backend, fn, pipeline_def, types
from torch_dali.backend import TensorCPU, TensorListCPU


def test_backend_types_is_the_type_module() -> None:
    assert backend.types.DALIDataType is types.DALIDataType
    assert backend.types._DALIDataType.INT8 == types.INT8
    # DALI 2.4's order: bool, the signed then unsigned ints, the floats
    assert [t.name for t in types._all_types] == [
        "BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
        "FLOAT16", "FLOAT", "FLOAT64"]
    assert types._all_types == types._bool_types + types._int_types + types._float_types
    for t in types._all_types:
        assert TensorCPU(np.zeros(1, types.to_numpy_type(t))).dtype == t


def test_external_source_takes_a_backend_dtype() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=np.zeros((2, 1), np.int8), dtype=backend.types._DALIDataType.INT8)

    p = pipe()
    p.build()
    assert p.run()[0].dtype == types.INT8


def _t(shape, dtype=np.float32, layout=None):
    return TensorCPU(np.zeros(shape, dtype), layout)


def test_batch_from_a_list_takes_the_first_sample_layout() -> None:
    assert TensorListCPU([_t((1, 2), layout="AB"), _t((1, 2), layout="AB")]).layout() == "AB"
    assert TensorListCPU([_t((1, 2), layout="AB"), _t((1, 2))]).layout() == "AB"
    assert TensorListCPU([_t((1, 2), layout="AB"), _t((1, 2), layout="AB")], "XY").layout() == "XY"
    assert TensorListCPU([np.zeros((1, 2)), np.zeros((3, 4))]).shape() == [(1, 2), (3, 4)]
    assert len(TensorListCPU([])) == 0


@pytest.mark.parametrize("samples", [
    [_t(1), _t(1, np.int8)],                                  # element types differ
    [np.zeros(1, np.float32), np.zeros(1, np.uint8)],
    [np.zeros((1, 2)), np.zeros(1)],                          # dimensions differ
    [_t((1, 2), layout="AB"), _t((1, 2), layout="CD")],       # layouts differ
    [_t((1, 2)), _t((1, 2), layout="AB")],                    # a layout the first sample lacks
])
def test_batch_from_a_list_refuses_unlike_samples(samples) -> None:
    with pytest.raises(TypeError, match="sample 1"):
        TensorListCPU(samples)
    with pytest.raises(TypeError, match="sample 1"):
        TensorListCPU(samples, "XY")


# -- backend.GetSchema -------------------------------------------------------------------------------

def test_get_schema_answers_as_dali_does() -> None:
    """Every op both have: state, input counts and input devices as DALI 2.4 answers them
    (tests/reference/schema_api.json, written by tests/reference/schema_api.py under DALI)."""
    import json

    from tests.reference.schema_api import STORED, describe
    stored = json.loads(STORED.read_text())
    compared = 0
    for name, want in stored.items():
        schema = backend.TryGetSchema(name)
        if schema is None:
            continue
        assert describe(schema) == want, name
        compared += 1
    assert compared > 100


def test_get_schema_by_function_and_by_legacy_name() -> None:
    assert backend.GetSchema(fn.readers.file._schema_name).Name() == "readers__File"
    assert backend.GetSchema(fn.python_function._schema_name).IsStateful()
    assert not backend.GetSchema(fn.decoders.image._schema_name).IsStateful()
    old = backend.GetSchema("FileReader")
    assert old.IsDeprecated() and old.DeprecatedInFavorOf() == "readers__File"
    assert backend.TryGetSchema("NoSuchOp") is None
    with pytest.raises(KeyError):
        backend.GetSchema("NoSuchOp")
    shapes = backend.GetSchema("Shapes")  # a metadata op: reads its input where it is
    assert [shapes.GetInputDevice(0, d, None) for d in (None, "cpu", "gpu")] == [None, "cpu", "gpu"]
    assert shapes.GetInputDevice(0, None, "gpu") == "gpu"
    resize = backend.GetSchema("Resize")
    assert resize.HasArgument("resize_x") and resize.IsTensorArgument("resize_x")
    assert resize.HasArgument("seed") and not resize.HasArgument("device")
    assert resize.OperatorName() == "Resize" and backend.GetSchema("readers__File").ModulePath() == ["readers"]


# -- DLPack capsules and reinterpret ------------------------------------------------------------------

def test_sample_from_a_dlpack_capsule_shares_the_memory() -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    t = TensorCPU(a.__dlpack__())
    assert t.shape() == [2, 3] and t.data_ptr() == a.ctypes.data
    again = TensorCPU(t.__dlpack__())
    assert again.data_ptr() == t.data_ptr() and again.dtype == types.INT32
    assert TensorListCPU(a.__dlpack__()).shape() == [(3,), (3,)]


def test_reinterpret_in_place() -> None:
    t = TensorCPU(np.array([0x3F800000, 0x3FC00000, 0x40000000], np.int32))
    t.reinterpret(types.UINT32)
    assert t.dtype == types.UINT32 and type(t) is TensorCPU
    t.reinterpret(types.FLOAT)
    np.testing.assert_array_equal(np.array(t), np.float32([1.0, 1.5, 2.0]))
    tl = TensorListCPU(np.array([[1, 2, 3], [5, 6, 7]], np.int32), "X")
    tl.reinterpret(types.UINT32)
    assert tl.dtype == types.UINT32 and tl.layout() == "X" and tl[1].dtype == types.UINT32
    ragged = TensorListCPU([np.zeros(2, np.int16), np.zeros(3, np.int16)])
    ragged.reinterpret(types.FLOAT16)
    assert [s.dtype for s in ragged] == [types.FLOAT16] * 2
    for x in (t, tl):  # another element size: a RuntimeError, as in DALI
        for other in (types.UINT16, types.FLOAT64):
            with pytest.raises(RuntimeError, match="different element size"):
                x.reinterpret(other)


# -- sample properties and the copy to the device ----------------------------------------------------

def test_sample_properties_and_set_layout() -> None:
    t = _t((2, 3), layout="AB")
    assert t.get_property("layout") == "AB" and t.get_property("source_info") is None
    assert _t(2).get_property("layout") is None and t.get_property("no_such_key") is None
    t.set_layout("XY")
    assert t.layout() == "XY"
    with pytest.raises(ValueError):
        t.set_layout("XYZ")


def test_as_gpu_keeps_data_and_layout() -> None:
    from torch_dali.backend import TensorGPU, TensorListGPU
    g = _t((2, 3), layout="AB")._as_gpu()
    assert type(g) is TensorGPU and g.layout() == "AB"
    np.testing.assert_array_equal(np.array(g.as_cpu()), np.zeros((2, 3), np.float32))
    tl = TensorListCPU(np.arange(6).reshape(2, 3), "X")._as_gpu()
    assert type(tl) is TensorListGPU and tl.layout() == "X" and tl.shape() == [(3,), (3,)]
    np.testing.assert_array_equal(tl.as_cpu().as_array(), np.arange(6).reshape(2, 3))


def test_batch_from_a_list_refuses_the_other_device_class() -> None:
    from torch_dali.backend import TensorListGPU
    cpu, gpu = _t(1), _t(1)._as_gpu()
    with pytest.raises(TypeError, match="sample 1"):
        TensorListCPU([cpu, gpu])
    with pytest.raises(TypeError, match="sample 1"):
        TensorListGPU([gpu, cpu])
    assert len(TensorListGPU([gpu, gpu])) == 2 and len(TensorListCPU([cpu, np.zeros(1, np.float32)])) == 2


# -- the rest of backend_impl's module-level names ---------------------------------------------------

def test_registered_ops_and_buffer_policy() -> None:
    cpu = backend.RegisteredCPUOps()
    assert {"Resize", "readers__File", "FileReader", "ExternalSource"} <= set(cpu)
    assert "decoders__Image" in backend.RegisteredMixedOps() and "Resize" in backend.RegisteredGPUOps()
    assert "readers__File" not in backend.RegisteredGPUOps()
    assert backend.tfrecord.int64 == 0 and backend.tfrecord.FixedLenFeature
    # DALI 2.4's defaults and ranges: shrink threshold in [0, 1], growth factors in [1, 4]
    assert backend.GetHostBufferShrinkThreshold() == 0.5 and backend.GetHostBufferGrowthFactor() == 1.1
    try:
        backend.SetBufferGrowthFactor(2)
        assert backend.GetHostBufferGrowthFactor() == backend.GetDeviceBufferGrowthFactor() == 2
        backend.SetHostBufferShrinkThreshold(0.7)
        assert backend.GetHostBufferShrinkThreshold() == 0.7
        for bad in (lambda: backend.SetHostBufferShrinkThreshold(2), lambda: backend.SetBufferGrowthFactor(0.5),
                    lambda: backend.SetDeviceBufferGrowthFactor(5)):
            with pytest.raises(ValueError):
                bad()
    finally:
        backend.SetBufferGrowthFactor(1.1)
        backend.SetHostBufferShrinkThreshold(0.5)


def test_host_sample_array_interface() -> None:
    tl = TensorListCPU(np.arange(30, dtype=np.float64).reshape(3, 2, 5), "HW")
    s = tl[1]
    ai = s.__array_interface__
    assert ai["data"] == (s.data_ptr(), False) and tuple(ai["shape"]) == (2, 5)
    assert np.dtype(ai["typestr"]) == np.float64
    view = np.asarray(s)
    assert np.shares_memory(view, tl.as_array()) and view[0, 0] == 10
    import torch
    bf = TensorCPU(torch.ones(2, dtype=torch.bfloat16))  # NumPy has no bfloat16: `__array__` converts
    assert not hasattr(bf, "__array_interface__") and np.array(bf).dtype == np.float32


def test_check_dlpack_capsule_as_dali() -> None:
    # DALI 2.4 (measured, CPU; DALI's test_backend_impl_torch_dlpack.py): (is a DLPack capsule of a
    # CPU/CUDA tensor, is on CUDA), the capsule left unconsumed; non-capsules (False, False); a
    # consumed or DLPack 1.0 "dltensor_versioned" capsule is a RuntimeError
    import torch
    from torch.utils.dlpack import to_dlpack

    for obj in (None, np.zeros(2), torch.zeros(2), "x", 5):
        assert backend.CheckDLPackCapsule(obj) == (False, False)
    cap = to_dlpack(torch.arange(3, dtype=torch.int16))
    assert backend.CheckDLPackCapsule(cap) == (True, False)
    assert torch.from_dlpack(cap).tolist() == [0, 1, 2]  # still consumable
    for bad in (cap, torch.zeros(2).__dlpack__(max_version=(1, 0))):
        with pytest.raises(RuntimeError):
            backend.CheckDLPackCapsule(bad)


def test_as_tensor_of_ragged_samples_is_a_runtime_error() -> None:
    # DALI 2.4: TensorListCPU([(1,), (2,)]).as_tensor() raises RuntimeError (so does the proxy's
    # produce_data for such an output); ours stays a ValueError too
    tl = TensorListCPU([np.zeros(1, np.float32), np.zeros(2, np.float32)])
    with pytest.raises(RuntimeError):
        tl.as_tensor()
    with pytest.raises(ValueError):
        tl.as_tensor()
