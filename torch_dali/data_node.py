"""`torch_dali.data_node` mirrors `nvidia.dali.data_node`."""
from .graph.node import DataNode  # noqa: F401
from .ops.subscript import newaxis  # noqa: F401 - DALI's `nvidia.dali.data_node.newaxis`
