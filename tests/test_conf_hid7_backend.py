"""DALI's `backend_impl` names, as DALI 2.4 has them: `backend.types` (the type enums,
`_DALIDataType`) and `types._all_types`."""
import numpy as np

from torch_dali import backend, fn, pipeline_def, types
from torch_dali.backend import TensorCPU


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
