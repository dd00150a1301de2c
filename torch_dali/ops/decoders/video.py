"""decoders.video (DALI's experimental.decoders.video): encoded video files held in memory (uint8)
to FHWC uint8 RGB frame sequences, decoded on the CPU with PyAV (`pip install torch_dali[video]`).
device="mixed" decodes on the CPU too and hands the frames to the GPU.

Frame selection, as DALI 2.4's CPU backend does it (measured), for a video of N frames:

* no selection argument: every frame;
* `frames`: those indices, in the given order (repeats allowed); one outside [0, N) reads as
  `pad_mode` says, and is an error with pad_mode="none";
* `start_frame` (default 0), `stride` (default 1) and `end_frame` (exclusive) or `sequence_length`
  (or neither: to the end of the video). Indices past the end are padded as `pad_mode` says; with
  "none" they are left out (a shorter sequence). `start_frame` >= N, and `end_frame` <= `start_frame`,
  are errors; a negative start is padded (an error with "none").

`pad_mode`: "constant" (the default here; frames of `fill_value`, one value or one per channel, in
[0, 255]; another count is an error for every sample, padded or not, as in DALI 2.4), "edge"/"repeat" (the nearest frame), "reflect_101"/"reflect" (ABC -> ABCBA),
"reflect_1001"/"symmetric" (ABC -> ABCCBA), "none". `frames` cannot be combined with the range
arguments, nor `sequence_length` with `end_frame`.

DALI's CPU backend decodes VP8, VP9 and MJPEG and refuses H.264, HEVC, MPEG-4 and AV1; here every
codec the bundled FFmpeg decodes is accepted (DALI's mixed backend decodes those on the GPU).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...errors import ArgumentError, DataError
from ...io import video as V
from ...tensor_list import TensorList
from .._operator import BatchContext, Operator, SampleContext
from .._registry import register
from .._schema import Arg, OpSchema

_SELECT = ("start_frame", "end_frame", "stride", "sequence_length")


def check_fill_size(fill: list[int], where: str, channels: int = 3) -> None:
    """DALI 2.4 checks this for every sample decoded with pad_mode="constant", padded or not."""
    if len(fill) not in (1, channels):
        raise V.VideoDataError(f"{where}: `fill_value` must have 1 or {channels} values, got {len(fill)}")


def fill_frame(fill: list[int], h: int, w: int, where: str, channels: int = 3) -> np.ndarray:
    """A constant frame of `fill` (one value or one per channel)."""
    check_fill_size(fill, where, channels)
    return np.broadcast_to(np.asarray(fill, dtype=np.uint8), (h, w, channels))


def check_fill(op: str, fill: Any) -> list[int]:
    vals = [int(v) for v in (fill if isinstance(fill, (list, tuple)) else [fill])]
    if any(not 0 <= v <= 255 for v in vals):
        raise ArgumentError(f"{op}: `fill_value` values must be in [0, 255], got {vals}")
    return vals


def pad_mode_of(op: str, value: Any) -> str:
    mode = V.PAD_MODES.get(str(value).lower()) if isinstance(value, str) else None
    if mode is None:
        raise ArgumentError(f"{op}: `pad_mode` must be one of {sorted(V.PAD_MODES)}, got {value!r}")
    return mode


def assemble(video: V.Video, plan: list[int], fill: list[int], ycbcr: bool = False) -> torch.Tensor:
    """The FHWC sequence of `plan` (frame indices; -1: a constant frame of `fill`)."""
    ix = video.index()
    real = [k for k in plan if k >= 0]
    got = video.frames(real, ycbcr)
    if not plan:
        return torch.empty((0, ix.height, ix.width, 3), dtype=torch.uint8)
    out = np.empty((len(plan), ix.height, ix.width, 3), dtype=np.uint8)
    const = None
    for i, k in enumerate(plan):
        if k >= 0:
            out[i] = got[k]
        else:
            if const is None:
                const = fill_frame(fill, ix.height, ix.width, video.where)
            out[i] = const
    return torch.from_numpy(out)


class VideoDecoder(Operator):
    def setup(self) -> None:
        a = self.args
        self.sample_wise = self.device.type == "cpu"
        if a.get("frames") is not None and any(a.get(k) is not None or k in self.node.arg_inputs for k in _SELECT):
            raise ArgumentError(f"{self.name}: `frames` cannot be combined with `start_frame`, `end_frame`, "
                                "`stride` or `sequence_length`")
        if "frames" in self.node.arg_inputs and any(a.get(k) is not None or k in self.node.arg_inputs for k in _SELECT):
            raise ArgumentError(f"{self.name}: `frames` cannot be combined with `start_frame`, `end_frame`, "
                                "`stride` or `sequence_length`")
        has_len = a.get("sequence_length") is not None or "sequence_length" in self.node.arg_inputs
        has_end = a.get("end_frame") is not None or "end_frame" in self.node.arg_inputs
        if has_len and has_end:
            raise ArgumentError(f"{self.name}: `sequence_length` and `end_frame` cannot both be given")
        if isinstance(a.get("pad_mode"), str):
            pad_mode_of(self.name, a["pad_mode"])
        self.fill = check_fill(self.name, a["fill_value"])
        V.require_backend(self.name)

    def output_layout(self, index: int) -> str:
        return "FHWC"

    def _arg(self, args: dict[str, Any], name: str) -> Any:
        v = args[name] if name in args else self.args.get(name)
        if isinstance(v, torch.Tensor):
            v = v.tolist()
        return v

    def plan(self, n: int, args: dict[str, Any], where: str) -> list[int]:
        """The frame indices of one sample (-1: a constant frame)."""
        mode = pad_mode_of(self.name, self._arg(args, "pad_mode"))
        frames = self._arg(args, "frames")
        try:
            if frames is not None:
                frames = [int(f) for f in (frames if isinstance(frames, list) else [frames])]
                return [V.boundary(f, n, mode) for f in frames]
            start = int(self._arg(args, "start_frame") or 0)
            stride = self._arg(args, "stride")
            stride = 1 if stride is None else int(stride)
            if stride <= 0:
                raise ArgumentError(f"{where}: `stride` must be positive, got {stride}")
            if start >= n:
                raise V.VideoDataError(f"{where}: `start_frame` {start} is past the end of the video ({n} frames)")
            end, length = self._arg(args, "end_frame"), self._arg(args, "sequence_length")
            if length is not None:
                if int(length) < 0:
                    raise ArgumentError(f"{where}: `sequence_length` must not be negative, got {length}")
                idx = [start + i * stride for i in range(int(length))]
            else:
                stop = n if end is None else int(end)
                if stop <= start:
                    raise V.VideoDataError(f"{where}: `end_frame` ({stop}) must be greater than "
                                           f"`start_frame` ({start})")
                idx = list(range(start, stop, stride))
            if mode == "none":
                if idx and idx[0] < 0:
                    raise ValueError(f"frame {idx[0]} is out of range and pad_mode is 'none'")
                return [f for f in idx if f < n]
            return [V.boundary(f, n, mode) for f in idx]
        except ValueError as e:
            if isinstance(e, DataError) or isinstance(e, ArgumentError):
                raise
            raise V.VideoDataError(f"{where}: {e}") from None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        where = f"{self.name}: sample {ctx.index}" + (f" ({ctx.source})" if ctx.source else "")
        data = inputs[0]
        if data.dtype != torch.uint8:
            raise ArgumentError(f"{where}: the encoded input must be uint8 bytes, got {data.dtype}")
        raw = data.reshape(-1).contiguous().cpu().numpy()
        video = V.Video(raw.tobytes(), where)
        if pad_mode_of(self.name, self._arg(args, "pad_mode")) == "constant":
            check_fill_size(self.fill, where)
        plan = self.plan(video.index().num_frames, args, where)
        return assemble(video, plan, self.fill)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        def one(i: int) -> torch.Tensor:
            return self.run_sample(ctx.sample(i), [x[i] for x in inputs], {k: v[i] for k, v in args.items()})
        outs = ctx.map(one, ctx.batch_size)
        if self.device.type == "cuda":
            outs = [t.pin_memory().to(self.device, non_blocking=True) for t in outs]
        return [TensorList(outs, "FHWC")]


register(OpSchema(
    name="decoders.video", impl=VideoDecoder, devices=("cpu", "mixed"), input_devices="cpu",
    output_layout="FHWC",
    doc="Decodes video files held in memory (uint8) to FHWC uint8 RGB sequences with PyAV (optional "
        "dependency: pip install torch_dali[video]); all frames, `frames`, or a start/stride range of "
        "`sequence_length` frames or up to `end_frame`, padded as `pad_mode` says. device='mixed' "
        "decodes on the CPU and moves the frames to the GPU.",
    args=(
        Arg("frames", "ints", None, "frame indices to decode, in this order (repeats allowed)", tensor=True),
        Arg("start_frame", "int", None, "first frame (default 0)", tensor=True),
        Arg("end_frame", "int", None, "frame to stop before (exclusive)", tensor=True),
        Arg("stride", "int", None, "distance between decoded frames (default 1)", tensor=True),
        Arg("sequence_length", "int", None, "number of frames to decode", tensor=True),
        Arg("pad_mode", "str", "constant", "frames past the video: 'constant', 'edge'/'repeat', "
            "'reflect_101'/'reflect', 'reflect_1001'/'symmetric', or 'none' (shorter / an error)", tensor=True),
        Arg("fill_value", "ints", [0], "value(s) of a constant frame: one, or one per channel, in [0, 255]"),
        Arg("build_index", "bool", True, "accepted; a frame index is always built"),
        Arg("affine", "bool", True, "accepted; no effect (thread pinning of DALI's mixed backend)"),
    ),
))
