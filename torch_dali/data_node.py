"""`torch_dali.data_node` mirrors `nvidia.dali.data_node`."""
from .graph.node import DataNode  # noqa: F401
