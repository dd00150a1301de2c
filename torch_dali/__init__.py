"""torch_dali: a PyTorch-native GPU data pipeline with NVIDIA DALI's API."""
from __future__ import annotations

__version__ = "0.1.0"

from . import types  # noqa: F401
from .errors import (ArgumentError, ArgumentTypeError, DataError, GraphError, PipelineError,  # noqa: F401
                     SerializationError, TorchDaliError)
from .graph.pipeline import Pipeline, pipeline_def  # noqa: F401
from .tensor_list import TensorList, TensorListCPU, TensorListGPU  # noqa: F401
from . import ops  # noqa: F401,E402
from . import fn  # noqa: F401,E402
from .loader import DataLoader  # noqa: F401,E402
from .plugin import pytorch as _plugin_pytorch  # noqa: F401,E402
from .datasets import from_dataset  # noqa: F401,E402
