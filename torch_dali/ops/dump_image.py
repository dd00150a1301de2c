"""dump_image: writes each sample of a batch of HWC uint8 images (1 or 3 channels) to the working
directory as a plain-text PPM (DALI 2.4's DumpImage) and passes the batch through unchanged.

Files are named `<sample index>-<suffix>-0.ppm` (each batch overwrites the previous one's, as in
DALI); 3 channels are written as P3, 1 channel as P2 (graymap), max value 255, each value followed
by a space, one line per image row; each file is written under a temporary name and renamed, so
it is never seen half-written. On the GPU the samples are copied to the host to be written.
"""
from __future__ import annotations

import os
from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError, DataError
from ..io.write_aside import write_aside
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema


def ppm_bytes(img: torch.Tensor) -> bytes:
    """A (H, W, 1 or 3) uint8 image as plain-text PPM / PGM."""
    h, w, c = (int(s) for s in img.shape)
    rows = img.cpu().reshape(h, w * c).tolist()
    body = "".join("".join(f"{v} " for v in row) + "\n" for row in rows)
    return f"P{3 if c == 3 else 2}\n{w} {h}\n255\n{body}".encode()


class DumpImage(Operator):
    sample_wise = True

    def setup(self) -> None:
        suffix = str(self.args["suffix"])
        if any(c and c in suffix for c in ("/", os.sep, os.altsep, "\0")):
            # the file goes into the working folder; a config must not steer it elsewhere
            raise ArgumentError(f"{self.name}: `suffix` must not hold a path separator, got {suffix!r}")
        if self.args["input_layout"] != "HWC":
            raise ArgumentError(f"{self.name}: `input_layout` must be 'HWC' (the only layout DALI writes), got "
                                f"{self.args['input_layout']!r}")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if x.dim() != 3:
            raise ArgumentError(f"{self.name}: images must be HWC (3 dimensions), got shape {tuple(x.shape)}")
        if int(x.shape[2]) not in (1, 3):
            raise ArgumentError(f"{self.name}: images must have 1 or 3 channels, got {int(x.shape[2])}")
        if x.dtype != torch.uint8:
            raise ArgumentTypeError(f"{self.name}: images must be uint8, got {x.dtype}")
        path = f"{ctx.index}-{self.args['suffix']}-0.ppm"
        # written aside and renamed: a pipeline running ahead rewrites the same names, and a file
        # being read must never be a half-written one
        try:
            write_aside(path, ppm_bytes(x))
        except OSError as e:
            raise DataError(f"{self.name}: cannot write {path}: {e.strerror or e}") from None
        return x


register(OpSchema(
    name="dump_image", impl=DumpImage, devices=("cpu", "gpu"),
    doc="Writes each HWC uint8 image (1 or 3 channels) of the batch to '<index>-<suffix>-0.ppm' in the "
        "working directory (plain-text PPM/PGM, for debugging) and outputs the batch unchanged.",
    args=(
        Arg("suffix", "str", "", "text put in the file names"),
        Arg("input_layout", "layout", "HWC", "layout of the images (only 'HWC')"),
    ),
))
