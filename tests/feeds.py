"""Test-only feeds: a source op that feeds a fixed list of images (one registered op per test
module), and `run_graph`, one batch of a graph fed from a list of arrays."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from torch_dali import fn, pipeline_def

from torch_dali.ops._operator import BatchContext, Operator
from torch_dali.ops._registry import lookup, make_function, register
from torch_dali.ops._schema import OpSchema
from torch_dali.tensor_list import TensorList


def image_feed(name: str) -> tuple[Callable, list[torch.Tensor]]:
    """(fn-style op, the list it reads): fill the list, then call the op inside a pipeline."""
    images: list[torch.Tensor] = []

    class Feed(Operator):
        sample_wise = False

        def run_batch(self, ctx: BatchContext, inputs, args):
            return [TensorList([images[i % len(images)] for i in range(ctx.batch_size)], "HWC")]

    try:
        lookup(name)
    except KeyError:
        register(OpSchema(name=name, impl=Feed, min_inputs=0, max_inputs=0))
    return make_function(lookup(name)), images


def run_graph(graph: Callable[[Any], Any], data: list[np.ndarray], layout: str | None = None) -> Any:
    """The first output of `graph(input)` for one CPU batch whose input is `data`."""
    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        return graph(fn.external_source(source=lambda: data, batch=True, layout=layout))

    p = pipe()
    p.build()
    return p.run()[0]
