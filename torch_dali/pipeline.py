"""`torch_dali.pipeline` mirrors `nvidia.dali.pipeline`."""
from .graph.pipeline import Pipeline, pipeline_def  # noqa: F401
