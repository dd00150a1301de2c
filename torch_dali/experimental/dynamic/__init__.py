"""DALI's dynamic mode (`import nvidia.dali.experimental.dynamic as ndd`) over torch_dali: ops as
functions applied directly to data, without a pipeline.

`ndd.Tensor` (one sample) and `ndd.Batch` (samples, shapes may differ) hold torch tensors;
`ndd.tensor` / `ndd.batch` copy data into them, `ndd.as_tensor` / `ndd.as_batch` share memory.
Every op of torch_dali is a function here (`ndd.resize(x, size=[224, 224])`,
`ndd.decoders.image(jpegs)`, `ndd.random.uniform(range=[0, 1], batch_size=8)`), run with the same
kernels as in a pipeline (a cached one-op pipeline per signature, torch_dali.eager). Readers are
objects (`ndd.readers.File(file_root=...)`) iterated with `next_epoch(batch_size=...)`.
docs/dynamic_mode.md says what works and what does not yet.
"""
from __future__ import annotations

import sys as _sys
import typing as _typing

from ._type import *  # noqa: F401, F403
from ._type import DType  # noqa: F401
from ._device import Device, DeviceLike, device  # noqa: F401
from ._eval import (EvalContext, EvalMode, Stream, ThreadPool, get_current_stream, get_default_stream,  # noqa: F401
                    get_num_threads, set_current_stream, set_default_stream, set_num_threads, stream)
from ._data import Batch, Tensor, as_batch, as_tensor, batch, tensor  # noqa: F401
from . import _invoke  # noqa: F401  (gives Tensor and Batch their arithmetic)
from ._imread import imread  # noqa: F401
from ._external_source import ExternalSource  # noqa: F401
from . import math  # noqa: F401
from . import random  # noqa: F401
from . import checkpoint  # noqa: F401
from . import pytorch  # noqa: F401
from . import capture  # noqa: F401
from . import _ops

ops = _ops.install(_sys.modules[__name__])


if _typing.TYPE_CHECKING:
    # the ops (`ndd.resize`, `ndd.readers.File`, `ndd.decoders`) are placed by _ops.install at
    # import, invisible to mypy: a type checker reads them as Any (the module's names stay DALI's)
    def __getattr__(name: str) -> _typing.Any: ...
