"""torch_dali: a PyTorch-native GPU data pipeline with NVIDIA DALI's API."""
from __future__ import annotations

__version__ = "0.1.0"

from . import _cuda_setup  # noqa: E402 - first: before anything can make a CUDA context

_cuda_setup.set_connections()

from . import types  # noqa: F401
from .errors import (ArgumentError, ArgumentTypeError, DataError, GraphError, PipelineError,  # noqa: F401
                     SerializationError, TorchDaliError)
from .graph.pipeline import Pipeline  # noqa: F401
from .graph.pipeline_def import pipeline_def  # noqa: F401
from .graph.dali_api import OperatorConcurrency, StreamPolicy  # noqa: F401
from .tensor_list import TensorList, TensorListCPU, TensorListGPU  # noqa: F401
from . import ops  # noqa: F401,E402
from . import fn  # noqa: F401,E402
from .ops.subscript import newaxis  # noqa: F401,E402 - DALI's `dali.newaxis` (DataNode subscripts)
from .loader import DataLoader  # noqa: F401,E402
from .plugin import pytorch as _plugin_pytorch  # noqa: F401,E402
from .datasets import from_dataset  # noqa: F401,E402
from . import eager as _eager  # noqa: F401,E402 - installs debug mode (pipeline_def(debug=True))
from ._native import extension as _extension  # noqa: E402

_extension.preload()  # a finished build of the CUDA extension loads while the caller sets up

# Helper modules load on first use (`torch_dali.configs.load(...)` after `import torch_dali`), so that
# importing torch_dali does not pay for YAML configs, plotting or torchvision transforms. The second row
# are the submodules a bare `import nvidia.dali` exposes (`dali.pipeline.Pipeline`, `dali.math.abs`).
_LAZY = ("augment", "configs", "sample_data", "visualize",
         "backend", "data_node", "math", "pipeline", "plugin_manager", "tensors")


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'torch_dali' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
