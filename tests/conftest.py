"""Shared test helpers: a tiny source op feeding generated images, so engine tests need no files."""
from __future__ import annotations

import torch

from torch_dali.ops._operator import BatchContext, Operator
from torch_dali.ops._registry import lookup, register
from torch_dali.ops._schema import Arg, OpSchema
from torch_dali.tensor_list import TensorList


class _TestImages(Operator):
    """Per-sample uint8 HWC images whose content and size depend on (iteration, sample)."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs, args):
        out = []
        for i in range(ctx.batch_size):
            g = torch.Generator().manual_seed(ctx.iteration * 1000 + i)
            h, w = (16 + int(torch.randint(0, 16, (1,), generator=g)), 20 + int(torch.randint(0, 16, (1,), generator=g)))
            if self.args["fixed_size"]:
                h, w = 24, 32
            out.append(torch.randint(0, 256, (h, w, 3), generator=g, dtype=torch.uint8))
        self.last_sources = [f"test-image-{ctx.iteration}-{i}" for i in range(ctx.batch_size)]
        labels = [torch.tensor([ctx.iteration * 1000 + i], dtype=torch.int32) for i in range(ctx.batch_size)]
        return [TensorList(out, "HWC"), TensorList(labels)]


try:
    lookup("_test_images")
except KeyError:
    register(OpSchema(name="_test_images", impl=_TestImages, min_inputs=0, max_inputs=0, num_outputs=2,
                      args=(Arg("fixed_size", "bool", False, doc="all samples 24x32"),),
                      doc="Test-only source of generated images and labels."))
    import torch_dali.fn as _fn
    _fn._generate()
    import torch_dali.ops as _ops
    _ops._generate()
