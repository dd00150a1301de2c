"""`Compose`: the transforms of a list, run as one torch_dali pipeline.

The pipeline is traced on the first call, from that input: PIL images go in as one HWC uint8
sample (mode L with a channel dimension), torch tensors as CHW samples ([C, H, W] is one sample,
[N, C, H, W] a batch of N). The transforms are told the layout and the channel count while they
are traced (operator.tracing), so one Compose keeps a pipeline per channel count it has seen.
What comes back: the input's type (a PIL image; a tensor shaped like the input), unless a
ToPureTensor / PILToTensor (a CHW tensor) or ToPILImage (PIL images) says otherwise; the last
of these in the list decides.
"""
from __future__ import annotations

import multiprocessing
from typing import Any, Callable, List, Sequence

import numpy as np
import torch
from PIL import Image

from .... import fn
from ....pipeline import pipeline_def
from .functional.totensor import to_pil_image
from .operator import ValidateTensorOrImage, tracing

DEFAULT_BATCH_SIZE = 16
DEFAULT_NUM_THREADS = max(1, multiprocessing.cpu_count() // 2)


@pipeline_def(enable_conditionals=True, exec_dynamic=True, prefetch_queue_depth=1)
def _pipeline_function(op_list: Sequence, layout: str = "HWC", channels: int = 3, input_device: str = "cpu"):
    with tracing(layout, channels):
        node = fn.external_source(name="input_data", layout=layout, device=input_device)
        for op in op_list:
            node = op.invoke(node)
    return node


def _output_type(op_list: Sequence) -> str:
    """"tensor", "pil" or "default" (the input's kind): the last output marker listed decides."""
    kind = "default"
    for op in op_list:
        kind = getattr(op, "output_type", None) or kind  # only the markers (totensor.py) have one
    return kind


def to_torch_tensor(x: Any) -> Any:
    """A pipeline output as torch: a batch (TensorList) stacked into one tensor, a 1-tuple of outputs
    as its only element, a longer tuple element by element, anything DLPack-capable as a tensor."""
    if isinstance(x, tuple):
        return to_torch_tensor(x[0]) if len(x) == 1 else tuple(to_torch_tensor(e) for e in x)
    return torch.from_dlpack(x.as_tensor() if hasattr(x, "as_tensor") else x)


class _LayoutPipeline:
    """One traced pipeline: its layout and channel count, and the conversions around `run`."""

    def __init__(self, op_list: Sequence, layout: str, channels: int, batch_size: int, num_threads: int,
                 **pipeline_kwargs: Any) -> None:
        self.layout = layout
        self.batch_size = batch_size
        self.output_type = _output_type(op_list)
        device = op_list[0].device if op_list else "cpu"
        self.pipe = _pipeline_function(op_list, layout=layout, channels=channels, input_device=device,
                                       batch_size=batch_size, num_threads=num_threads, **pipeline_kwargs)

    def _run(self, batch: torch.Tensor) -> torch.Tensor:
        if batch.shape[0] > self.batch_size:
            raise RuntimeError(f"the input holds {batch.shape[0]} samples, more than this Compose's "
                               f"batch_size ({self.batch_size})")
        return to_torch_tensor(self.pipe.run(input_data=batch))

    def run_pil(self, sample: np.ndarray) -> Any:
        out = self._run(torch.as_tensor(sample).unsqueeze(0))  # N, H, W, C
        if self.output_type == "tensor":
            chw = out.permute(0, 3, 1, 2)
            return (chw[0] if chw.shape[0] == 1 else chw).contiguous()
        images = [to_pil_image(s, input_layout="HWC") for s in out]
        return images[0] if len(images) == 1 else images

    def run_tensor(self, data: torch.Tensor) -> Any:
        out = self._run(data.unsqueeze(0) if data.ndim == 3 else data)
        if data.ndim == 3:
            out = out.squeeze(0)
        if self.output_type != "pil":
            return out
        if out.ndim == 3:
            return to_pil_image(out)
        images = [to_pil_image(s) for s in out]
        return images[0] if len(images) == 1 else images


class Compose:
    """Chains `op_list` into one pipeline (`batch_size`: the most samples one call may pass;
    further keywords go to the pipeline)."""

    def __init__(self, op_list: List[Callable], batch_size: int = DEFAULT_BATCH_SIZE,
                 num_threads: int = DEFAULT_NUM_THREADS, **dali_pipeline_kwargs: Any) -> None:
        self.op_list = op_list
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.dali_pipeline_kwargs = dali_pipeline_kwargs
        self.active_pipeline: _LayoutPipeline | None = None
        self._pipelines: dict[tuple[str, int], _LayoutPipeline] = {}
        self._input_kind: type | None = None

    def _pipeline(self, layout: str, channels: int) -> _LayoutPipeline:
        key = (layout, channels)
        if key not in self._pipelines:
            self._pipelines[key] = _LayoutPipeline(self.op_list, layout, channels, self.batch_size,
                                                   self.num_threads, **self.dali_pipeline_kwargs)
        self.active_pipeline = self._pipelines[key]
        return self.active_pipeline

    def __call__(self, data_input: Any) -> Any:
        ValidateTensorOrImage.verify(data_input)
        kind = Image.Image if isinstance(data_input, Image.Image) else torch.Tensor
        if self._input_kind is None:
            self._input_kind = kind
        elif kind is not self._input_kind:
            raise TypeError(f"this Compose was first called on a {self._input_kind.__name__} and takes only "
                            f"those; got a {type(data_input).__name__}")
        if kind is Image.Image:
            arr = np.array(data_input, copy=True)
            if arr.ndim == 2 and data_input.mode != "L":  # e.g. P, 1, I: no HWC sample (DALI's pipeline refuses)
                raise RuntimeError(f"PIL image mode {data_input.mode!r} gives no HWC image (L, RGB and RGBA do)")
            sample = arr[..., None] if arr.ndim == 2 else arr
            return self._pipeline("HWC", int(sample.shape[-1])).run_pil(sample)
        if data_input.ndim not in (3, 4):  # as in DALI, an error of the pipeline's input
            raise RuntimeError(f"a tensor input is [C, H, W] or [N, C, H, W], got shape {tuple(data_input.shape)}")
        return self._pipeline("CHW", int(data_input.shape[-3])).run_tensor(data_input)
