"""`torch_dali.pipeline` mirrors `nvidia.dali.pipeline`: Pipeline, pipeline_def, DataNode,
`experimental.pipeline_def`, `do_not_convert` and the executor flags' enums."""
from __future__ import annotations

import sys
from types import ModuleType

from .graph.dali_api import OperatorConcurrency, StreamPolicy  # noqa: F401
from .graph.node import DataNode  # noqa: F401
from .graph.pipeline import Pipeline, do_not_convert, pipeline_def  # noqa: F401

# DALI's `nvidia.dali.pipeline.experimental`: the same decorator (conditionals are a keyword of
# pipeline_def either way).
experimental = ModuleType(f"{__name__}.experimental", "pipeline_def with DALI's experimental options")
experimental.pipeline_def = pipeline_def  # type: ignore[attr-defined]
sys.modules[experimental.__name__] = experimental
