"""readers.sequence (DALI 2.4's deprecated SequenceReader): frame sequences from folders of images.

Every subfolder of `file_root` (sorted by name) is one stream; its image files (sorted by name;
DALI's decoder extensions only, case-insensitive; nested folders and other files are skipped, as
are files directly in `file_root`) are its frames. A sample is `sequence_length` frames `stride`
apart; samples start every `step` frames, and only whole sequences within one stream count. Each
frame is decoded (image_type RGB, BGR, GRAY or ANY) and the sample is FHWC uint8; the frames of a
sample must have one shape. Sharding, shuffling and padding are the other readers' (ReaderBase).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from ... import types
from ...errors import ArgumentError, DataError, ListingError
from ...io.decode import decode_image
from ...skips import printable
from ...tensor_list import TensorList
from .._registry import register
from .._schema import Arg, OpSchema
from ._base import READER_ARGS, ReaderBase
from ._storage import read_file_bytes

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".pnm", ".ppm", ".pgm", ".pbm", ".jp2",
                    ".webp")
_TYPES = (types.RGB, types.BGR, types.GRAY, types.ANY_DATA)
# DALI's sequence reader has no shuffle_after_epoch: ReaderBase reads it as off
_ARGS = tuple(a for a in READER_ARGS if a.name not in ("shuffle_after_epoch", "shuffle_after_epoch_seed"))


def list_streams(root: str, op: str) -> list[list[str]]:
    """The image files of each stream folder under `root`, both sorted by name."""
    if not os.path.isdir(root):
        raise DataError(f"{op}: `file_root` {printable(root)} is not a folder (or does not exist)")
    with os.scandir(root) as it:
        folders = sorted(e.name for e in it if e.is_dir())
    streams = []
    for name in folders:
        folder = os.path.join(root, name)
        with os.scandir(folder) as it:
            frames = sorted(e.name for e in it if e.is_file() and os.path.splitext(e.name)[1].lower() in IMAGE_EXTENSIONS)
        streams.append([os.path.join(folder, f) for f in frames])
    return streams


class SequenceReader(ReaderBase):
    """One sample per whole sequence: (stream, first frame), listed once."""

    def setup(self) -> None:
        self.args = {**self.args, "shuffle_after_epoch": False, "shuffle_after_epoch_seed": None}
        try:
            super().setup()
        except DataError as e:
            raise ListingError(*e.args).with_traceback(e.__traceback__) from None

    def _check_args(self) -> None:
        a = self.args
        for k in ("sequence_length", "step", "stride"):
            if a[k] <= 0:
                raise ArgumentError(f"{self.name}: `{k}` must be positive, got {a[k]}")
        if a["image_type"] not in _TYPES:
            raise ArgumentError(f"{self.name}: `image_type` must be RGB, BGR, GRAY or ANY_DATA, got {a['image_type']}")
        self._frames: list[list[str]] = []

    def _describe_source(self) -> str:
        return (f"no stream folder under {self.args['file_root']} has {self.args['sequence_length']} images "
                f"{self.args['stride']} apart")

    def _list(self) -> int:
        a = self.args
        length, step, stride = a["sequence_length"], a["step"], a["stride"]
        span = (length - 1) * stride + 1
        for frames in list_streams(a["file_root"], self.name):
            for start in range(0, len(frames) - span + 1, step):
                self._frames.append(frames[start:start + span:stride])
        return len(self._frames)

    def _load(self, index: int) -> tuple[torch.Tensor, None]:
        paths = self._frames[index]
        imgs = [decode_image(read_file_bytes(p, self.name), self.args["image_type"], source=printable(p), op=self.name)
                for p in paths]
        shapes = {tuple(t.shape) for t in imgs}
        if len(shapes) != 1:
            raise DataError(f"{self.name}: the frames of the sequence from {printable(paths[0])} differ in shape: "
                            f"{sorted(shapes)}")
        return torch.stack(imgs), None

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        return [TensorList([r[0] for r in rows], "FHWC")]

    def output_layout(self, index: int) -> str:
        return "FHWC"

    def _source(self, index: int) -> str:
        return printable(self._frames[index][0])

    def _info(self, index: int) -> str:
        return ""  # DALI 2.4 gives sequences no source_info


register(OpSchema(
    name="readers.sequence", impl=SequenceReader, legacy_names=("SequenceReader",), devices=("cpu",),
    min_inputs=0, max_inputs=0, num_outputs=1, output_layout="FHWC",
    doc="Reads sequences of `sequence_length` decoded frames (FHWC uint8) from the image files of each "
        "subfolder (stream) of `file_root`; frames `stride` apart, a sequence every `step` frames.",
    args=_ARGS + (
        Arg("file_root", "str", doc="folder holding one subfolder of frame images per stream"),
        Arg("sequence_length", "int", doc="frames per sequence (positive)"),
        Arg("step", "int", 1, "frames between the starts of consecutive sequences (positive)"),
        Arg("stride", "int", 1, "frames between consecutive frames of a sequence (positive)"),
        Arg("image_type", "image_type", types.RGB, "colour space of the frames out: RGB, BGR, GRAY or ANY_DATA"),
    ),
))
