"""`torch_dali.tensors` mirrors `nvidia.dali.tensors`: DALI's batch and sample classes."""
from .samples import TensorCPU, TensorGPU  # noqa: F401
from .tensor_list import TensorListCPU, TensorListGPU  # noqa: F401
