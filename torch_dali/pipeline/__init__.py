"""`torch_dali.pipeline` mirrors `nvidia.dali.pipeline`: Pipeline, pipeline_def, DataNode,
`experimental.pipeline_def`, `do_not_convert` and the executor flags' enums. A package, as DALI's
is, so that `from <...>.pipeline.experimental import pipeline_def` imports a real submodule."""
from __future__ import annotations

from ..graph.dali_api import OperatorConcurrency, StreamPolicy  # noqa: F401
from ..graph.node import DataNode  # noqa: F401
from ..graph.pipeline import Pipeline  # noqa: F401
from ..graph.pipeline_def import do_not_convert, pipeline_def  # noqa: F401
from . import experimental  # noqa: F401
