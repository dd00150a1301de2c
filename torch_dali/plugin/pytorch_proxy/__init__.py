"""DALI's `nvidia.dali.plugin.pytorch.experimental.proxy`: one pipeline, run by a DALIServer in
the main process, does the processing for a torch DataLoader whose Dataset calls the server's
`proxy` per sample. What the workers return are references (refs.py); produce_data, or the
DataLoader here, puts the pipeline's outputs in their place. Reached as
`torch_dali.plugin.pytorch.experimental.proxy` (plugin/pytorch.py registers that name)."""
from .loader import DataLoader
from .refs import (DALIOutputBatchRef, DALIOutputSampleRef, DALIPipelineRunRef, DALIProxy,  # noqa: F401
                   collate_dali_output_sample_ref_fn)
from .refs import collate_dali_output_sample_ref_fn as _collate_dali_output_sample_ref_fn  # noqa: F401 DALI's name
from .server import DALIServer

__all__ = ["DALIServer", "DataLoader"]
