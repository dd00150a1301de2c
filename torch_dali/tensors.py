"""`torch_dali.tensors` mirrors `nvidia.dali.tensors`: DALI's batch and sample classes."""
from .tensor_list import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401
