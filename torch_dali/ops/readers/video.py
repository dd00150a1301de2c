"""Video readers: experimental.readers.video (cpu, gpu), readers.video and readers.video_resize
(DALI: gpu only). Frames are decoded on the CPU with PyAV (`pip install torch_dali[video]`); on
device="gpu" the decoded sequences are moved to the GPU (no NVDEC yet).

Listing, as DALI 2.4's CPU experimental reader does it (measured):

* `file_root`: each subfolder (sorted by name) is a class, labelled by its index; its files
  (sorted) are the videos. `filenames` (+ `labels`, one per file: the label output exists only
  with them) in the given order. `file_list`: "path label [start [end]]" lines; start/end are
  seconds (`file_list_format="timestamps"`: float32, truncated to time-base ticks, then the frame
  of that pts or the next one / the previous one as `file_list_rounding` says; past the last
  frame: frame 0) or frame numbers ("frames"; negative counts from the end; floor/ceil). The end is
  exclusive (`file_list_include_end` only clamps it to the video) and, once a start is given, an
  absent end is 0: an empty range, the file left out with a warning. Exactly one of the three.
  A relative file_list entry is taken from the list's folder (DALI 2.4: from the working folder).
  A file list is data, not code: entries outside that folder (absolute paths, `..`) are refused
  unless `allow_outside_root=True` (an addition, as readers.file; DALI reads them).
* A file FFmpeg cannot open (or without video frames) is left out with a warning, as DALI does
  (listed by torch_dali.skips as well).
* Each video of N frames (or its [start, end) range) gives sequences of `sequence_length` frames
  `stride` apart, starting every `step` frames (default `stride * sequence_length`) while
  start + stride * sequence_length <= end. With a `pad_mode` other than "none" one more sequence
  starts at the next step (when it is inside the video) and runs past the end, padded.
  `uniform_sample=True`: one sequence per video, frames round(linspace(start, end - 1, length))
  (halves away from zero).

Outputs: the sequence (FHWC uint8 RGB, or YCbCr), then the label ((1,) int32) where there are
labels, then `enable_frame_num` ("scalar"/True: the first frame's index, (1,) int32; "sequence":
each frame's, -1 for a padded one), then `enable_timestamps` (each frame's time in seconds,
float64, -1 for a padded frame). Sharding, shuffling and padding of the last batch are the other
readers' (ReaderBase; shuffling is a global permutation here, on purpose).

readers.video (DALI's legacy reader): the same listing with its own arguments: `step` defaults to
`sequence_length`, `pad_sequences` pads with zero frames (frame numbers and timestamps -1),
`labels=[]` labels files by position, `dtype=FLOAT` gives float32 (`normalized`: divided by 255),
file_list start/end are timestamps (ceil(start * fps), floor(end * fps); the other way round with
`file_list_include_preceding_frame`) or frame numbers with `file_list_frame_num`.
readers.video_resize: readers.video, then each frame resized by torch_dali's resize op (same
arguments and rules as fn.resize; constant arguments only).
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError, DataError
from ...io import video as V
from ...skips import printable
from ...tensor_list import TensorList
from .._operator import BatchContext, SampleContext
from .._registry import lookup, register
from .._schema import REQUIRED, Arg, OpSchema
from ..decoders.video import check_fill, check_fill_size, fill_frame, pad_mode_of
from ._base import READER_ARGS, ReaderBase
from ._multi import outside
from ._storage import read_small


@dataclass(frozen=True)
class _Entry:
    path: str
    label: int | None
    start: float = 0.0
    end: float = 0.0
    ranged: bool = False


@dataclass(frozen=True, slots=True)  # millions of them: a file_list line of a long video is one per step
class _Sample:
    file: int          # index into the listed files
    plan: tuple[int, ...]  # frame indices (-1: a padded frame)


def _round_half_away(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


class _VideoReaderBase(ReaderBase):
    legacy = False

    def setup(self) -> None:
        self.args = {**self.args, "shuffle_after_epoch": False, "shuffle_after_epoch_seed": None}
        super().setup()

    # -- arguments ------------------------------------------------------------------------------
    def _check_args(self) -> None:
        a = self.args
        given = [k for k in ("file_root", "file_list", "filenames") if a.get(k)]
        if len(given) != 1:
            raise ArgumentError(f"{self.name}: give exactly one of `file_root`, `file_list` and `filenames`, "
                                f"got {given or 'none'}")
        self.source_kind = given[0]
        labels = a.get("labels")
        if labels is not None and self.source_kind == "filenames":
            files = a["filenames"] if isinstance(a["filenames"], list) else [a["filenames"]]
            labels = labels if isinstance(labels, list) else [labels]
            if self.legacy and not labels:
                labels = list(range(len(files)))
            if len(labels) != len(files):
                raise ArgumentError(f"{self.name}: {len(files)} files but {len(labels)} labels; give one label "
                                    "per file")
        self.labels = labels
        self.has_labels = self.source_kind != "filenames" or labels is not None
        for k in ("sequence_length", "stride"):
            if int(a[k]) <= 0:
                raise ArgumentError(f"{self.name}: `{k}` must be positive, got {a[k]}")
        self.length, self.stride = int(a["sequence_length"]), int(a["stride"])
        step = int(a["step"])
        self.step = step if step > 0 else (self.length if self.legacy else self.stride * self.length)
        if a["image_type"] not in (types.RGB, types.YCbCr):
            raise ArgumentError(f"{self.name}: `image_type` must be RGB or YCbCr, got {a['image_type']}")
        self.ycbcr = a["image_type"] == types.YCbCr
        self.frame_num = self._frame_num_mode(a.get("enable_frame_num"))
        self._check_mode()
        self._files: list[_Entry] = []
        self._videos: list[V.Video] = []
        self._samples: list[_Sample] = []
        V.require_backend(self.name)

    def _frame_num_mode(self, v: Any) -> str:
        if v is None or v is False or (isinstance(v, str) and v.lower() in ("none", "false", "")):
            return "none"
        if v is True or (isinstance(v, str) and v.lower() in ("scalar", "true")):
            return "scalar"
        if isinstance(v, str) and v.lower() == "sequence":
            return "sequence"
        raise ArgumentError(f"{self.name}: `enable_frame_num` must be 'none', 'scalar', 'sequence' or a bool, got {v!r}")

    def _check_mode(self) -> None:
        a = self.args
        pm = a.get("pad_mode", "none")
        self.pad_mode = pad_mode_of(self.name, pm) if isinstance(pm, str) else "none"
        self.fill = check_fill(self.name, a.get("fill_value", [0]))
        self.uniform = bool(a.get("uniform_sample", False))

    # -- listing --------------------------------------------------------------------------------
    def _entries(self) -> list[_Entry]:
        a = self.args
        if self.source_kind == "file_root":
            root = a["file_root"]
            if not os.path.isdir(root):
                raise DataError(f"{self.name}: `file_root` {printable(root)} is not a folder")
            with os.scandir(root) as it:
                classes = sorted(e.name for e in it if e.is_dir())
            out = []
            for label, c in enumerate(classes):
                folder = os.path.join(root, c)
                with os.scandir(folder) as it:
                    names = sorted(e.name for e in it if e.is_file())
                out += [_Entry(os.path.join(folder, n), label) for n in names]
            return out
        if self.source_kind == "filenames":
            files = a["filenames"] if isinstance(a["filenames"], list) else [a["filenames"]]
            labels = self.labels if self.labels is not None else [None] * len(files)
            return [_Entry(f, None if lab is None else int(lab)) for f, lab in zip(files, labels)]
        return self._file_list(a["file_list"])

    def _file_list(self, path: str) -> list[_Entry]:
        raw = read_small(path, f"{self.name}: file_list")  # a FIFO is refused, not waited on
        try:
            lines = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError as e:
            no = raw.count(b"\n", 0, e.start) + 1
            raise DataError(f"{self.name}: {printable(path)} line {no}: the file_list is not UTF-8 text") from None
        base = os.path.dirname(path)
        out = []
        for n, line in enumerate(lines, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2 or len(parts) > 4:
                raise DataError(f"{self.name}: {printable(path)} line {n}: expected 'file label [start [end]]', "
                                f"got {line!r}")
            try:
                label = int(parts[1])
                nums = [float(p) for p in parts[2:]]
                # "nan", "inf", "1e999", "1e39" (start/end are float32): no frame to start at
                if not all(math.isfinite(x) and abs(x) <= 3.4e38 for x in nums):
                    raise ValueError
            except ValueError:
                raise DataError(f"{self.name}: {printable(path)} line {n}: the label must be an integer and "
                                f"start/end numbers, got {line!r}") from None
            if not 0 <= label < 1 << 31:  # DALI 2.4 refuses a negative one; the output is int32
                raise DataError(f"{self.name}: {printable(path)} line {n}: the label must be in [0, 2**31 - 1] "
                                f"(the int32 label output), got {parts[1][:40]}")
            if not self.args["allow_outside_root"] and outside(parts[0], base):
                raise DataError(printable(
                    f"{self.name}: {path} line {n}: {parts[0]!r} is outside the file_list's folder "
                    "(entries are read only inside it; allow_outside_root=True reads them anyway)"))
            file = parts[0] if os.path.isabs(parts[0]) else os.path.join(base, parts[0])
            start = nums[0] if nums else 0.0
            end = nums[1] if len(nums) > 1 else 0.0
            out.append(_Entry(file, label, start, end, ranged=bool(nums) and (start != 0.0 or end != 0.0)))
        return out

    def _frame_range(self, entry: _Entry, ix: V.VideoIndex) -> tuple[int, int]:
        n = ix.num_frames
        if not entry.ranged:
            return 0, n
        a = self.args
        if self.legacy:
            if a.get("file_list_frame_num"):
                s, e = math.ceil(entry.start), math.floor(entry.end) if entry.end != 0 else n
            else:
                pre = bool(a.get("file_list_include_preceding_frame"))
                s = ix.frame_at(entry.start, round_up=not pre)
                e = (ix.frame_at(entry.end, round_up=pre) if entry.end != 0 else n)
            s, e = (s + n if s < 0 else s), (e + n if e < 0 else e)
            return max(0, s), min(n, e)
        # DALI 2.4 (measured): both ends converted whenever one is given (an end of 0 is frame 0, so
        # "path label start" selects nothing); the end is exclusive and file_list_include_end only
        # clamps it to the video; the numbers are float32
        rounding = a.get("file_list_rounding", "start_down_end_up")
        down_start = rounding in ("start_down_end_up", "all_down")
        down_end = rounding in ("start_up_end_down", "all_down")
        if a.get("file_list_format", "timestamps") in ("frames", "frame_index"):
            start, end = float(np.float32(entry.start)), float(np.float32(entry.end))
            start, end = (start + n if start < 0 else start), (end + n if end < 0 else end)
            s = math.floor(start) if down_start else math.ceil(start)
            e = math.floor(end) if down_end else math.ceil(end)
        else:
            s = ix.frame_by_timestamp(entry.start, down_start)
            e = ix.frame_by_timestamp(entry.end, down_end)
        if a.get("file_list_include_end", True):
            e = min(e, n)
        return max(0, s), min(n, e)

    def _plans(self, s: int, e: int, n: int) -> list[tuple[int, ...]]:
        L, st = self.length, self.stride
        if self.uniform:
            if L == 1:
                return [(s,)]
            return [tuple(_round_half_away(s + (e - 1 - s) * i / (L - 1)) for i in range(L))]
        out = []
        start = s
        while start + st * L <= e:
            out.append(tuple(start + i * st for i in range(L)))
            start += self.step
        if self.pad_mode != "none" and start < e:  # one more, running past the end
            plan = []
            for i in range(L):
                f = start + i * st
                if f < e:
                    plan.append(f)
                elif self.pad_mode == "constant":
                    plan.append(-1)
                else:
                    plan.append(s + V.boundary(f - s, e - s, self.pad_mode))
            out.append(tuple(plan))
        return out

    def _list(self) -> int:
        # one Video (its frame index: lists and a dict per frame) per file, however many list lines
        # name it: a file_list repeating one line made one per line, each opening and demuxing the
        # file again (1,000 lines naming a 3,000-frame file: 12.5 s, 1.25 GB)
        opened: dict[str, V.Video] = {}
        failed: dict[str, V.VideoDataError] = {}
        for entry in self._entries():
            video = opened.setdefault(entry.path, V.Video(entry.path, printable(entry.path)))
            try:
                if entry.path in failed:
                    raise failed[entry.path]
                ix = video.index()
            except V.VideoDataError as e:
                failed[entry.path] = e
                warnings.warn(f"{self.name}: {e}; the file is left out", RuntimeWarning, stacklevel=2)
                self.skip_log.add(self.name, printable(entry.path), str(e))
                continue
            s, e = self._frame_range(entry, ix)
            if s >= e:
                warnings.warn(f"{self.name}: {printable(entry.path)} has no frames in [{s}, {e}); it is left out",
                              RuntimeWarning, stacklevel=2)
                continue
            k = len(self._files)
            self._files.append(entry)
            self._videos.append(video)
            self._samples += [_Sample(k, p) for p in self._plans(s, e, ix.num_frames)]
        return len(self._samples)

    def _describe_source(self) -> str:
        return (f"no video has {self.length} frames {self.stride} apart (or every file failed to open)")

    # -- loading --------------------------------------------------------------------------------
    def _frames(self, smp: _Sample) -> torch.Tensor:
        video = self._videos[smp.file]
        if self.pad_mode == "constant":  # checked for every sequence, padded or not (DALI 2.4)
            check_fill_size(self.fill, video.where)
        ix = video.index()
        real = [k for k in smp.plan if k >= 0]
        got = video.frames(real, self.ycbcr)
        out = np.empty((len(smp.plan), ix.height, ix.width, 3), dtype=np.uint8)
        for i, k in enumerate(smp.plan):
            out[i] = got[k] if k >= 0 else fill_frame(self.fill, ix.height, ix.width, video.where)
        return torch.from_numpy(out)

    def _load(self, index: int) -> tuple[Any, ...]:
        smp = self._samples[index]
        video = self._videos[smp.file]
        ix = video.index()
        seq = self._post(self._frames(smp))
        label = self._files[smp.file].label
        extra: list[torch.Tensor] = []
        if self.frame_num == "scalar":
            extra.append(torch.tensor([smp.plan[0]], dtype=torch.int32))
        elif self.frame_num == "sequence":
            extra.append(torch.tensor(smp.plan, dtype=torch.int32))
        if self.args.get("enable_timestamps"):
            extra.append(torch.tensor([ix.seconds(k) if k >= 0 else -1.0 for k in smp.plan], dtype=self._ts_dtype))
        lab = torch.tensor([label if label is not None else -1], dtype=torch.int32) if self.has_labels else None
        return (seq, lab, *extra)

    _ts_dtype = torch.float64

    def _post(self, seq: torch.Tensor) -> torch.Tensor:
        return seq

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        outs = [TensorList([r[0] for r in rows], "FHWC")]
        if self.has_labels:
            outs.append(TensorList(torch.stack([r[1] for r in rows])))
        for k in range(2, len(rows[0]) if rows else 2):
            col = [r[k] for r in rows]
            same = all(c.shape == col[0].shape for c in col)
            outs.append(TensorList(torch.stack(col)) if same else TensorList(col))
        if self.device.type == "cuda":
            outs = [TensorList([t.pin_memory().to(self.device, non_blocking=True) for t in tl], tl.layout()) for tl in outs]
        return outs

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        self._ensure_listed()
        indices = self._next_indices(ctx.batch_size)
        unique = list(dict.fromkeys(indices))
        rows = ctx.map(lambda k: self._load(unique[k]), len(unique))
        loaded = dict(zip(unique, rows))
        self.last_sources = [self._source(i) for i in indices]
        self._last_indices = indices
        return self._assemble(indices, [loaded[i] for i in indices])

    def output_layout(self, index: int) -> str:
        return "FHWC" if index == 0 else ""

    def _source(self, index: int) -> str:
        return printable(self._files[self._samples[index].file].path)

    def _info(self, index: int) -> str:
        return self._files[self._samples[index].file].path


class ExperimentalVideoReader(_VideoReaderBase):
    pass


class LegacyVideoReader(_VideoReaderBase):
    legacy = True

    def _check_mode(self) -> None:
        a = self.args
        self.pad_mode = "constant" if a.get("pad_sequences") else "none"
        self.fill = [0]
        self.uniform = False
        if int(a.get("channels", 3)) != 3:
            raise ArgumentError(f"{self.name}: only 3 channels are supported, got {a.get('channels')}")
        self.dtype = types.to_torch_dtype(a["dtype"])
        if self.dtype not in (torch.uint8, torch.float32):
            raise ArgumentError(f"{self.name}: `dtype` must be UINT8 or FLOAT, got {a['dtype']}")

    _ts_dtype = torch.float32

    def _post(self, seq: torch.Tensor) -> torch.Tensor:
        if self.dtype == torch.float32:
            seq = seq.to(torch.float32)
            if self.args.get("normalized"):
                seq = seq / 255.0
        return seq


class VideoResizeReader(LegacyVideoReader):
    def _check_mode(self) -> None:
        super()._check_mode()
        from ..geometry import Resize
        schema = lookup("resize")
        own = {a.name for a in schema.args}
        rargs = {a.name: (None if a.default is REQUIRED else a.default) for a in schema.args}
        for k in own:
            if k in self.args and k not in ("image_type",):
                rargs[k] = self.args[k]
        for k in own:
            if k in self.node.arg_inputs:
                raise ArgumentError(f"{self.name}: `{k}` must be a constant here (per-sample resize "
                                    "arguments are not supported by readers.video_resize)")
        rargs["dtype"] = None
        node = SimpleNamespace(args=rargs, arg_inputs={}, inputs=[], schema=schema, seed=0,
                               explicit=frozenset(k for k in own if k in self.node.explicit))
        self._resize = Resize(node, torch.device("cpu"))
        self._resize.in_layout = "FHWC"

    def _post(self, seq: torch.Tensor) -> torch.Tensor:
        out = self._resize.run_sample(SampleContext(0, 0, 0, ""), [seq], {})
        return super()._post(out)


# -- schemas ----------------------------------------------------------------------------------------

_SHARED = (
    Arg("file_root", "str", None, "folder of class subfolders holding the videos"),
    Arg("file_list", "str", None, "text file of 'file label [start [end]]' lines"),
    Arg("filenames", "strs", None, "video files to read, in this order"),
    Arg("labels", "ints", None, "one label per `filenames` entry (no label output without them)"),
    Arg("sequence_length", "int", doc="frames per sequence"),
    Arg("stride", "int", 1, "distance between the frames of a sequence"),
    Arg("enable_timestamps", "bool", False, "an output of each frame's time in seconds"),
    Arg("image_type", "image_type", types.RGB, "RGB or YCbCr"),
    Arg("allow_outside_root", "bool", False, "read file_list entries outside the list's folder "
        "(absolute paths, `..`; an addition: DALI reads them)"),
)

_EXPERIMENTAL = READER_ARGS + _SHARED + (
    Arg("step", "int", -1, "frames between sequence starts (<= 0: stride * sequence_length)"),
    Arg("enable_frame_num", "any", "none", "'scalar'/True: the first frame's index; 'sequence': each frame's"),
    Arg("pad_mode", "str", "none", "sequences past the end: 'none' (not made), 'constant', 'edge'/'repeat', "
        "'reflect_101'/'reflect', 'reflect_1001'/'symmetric'", tensor=True),
    Arg("fill_value", "ints", [0], "value(s) of a constant padding frame, in [0, 255]"),
    Arg("file_list_format", "str", "timestamps", "file_list start/end: 'timestamps' (seconds) or 'frames'"),
    Arg("file_list_include_end", "bool", True,
        "clamp a file_list range's end to the video (the end stays exclusive, as in DALI 2.4)"),
    Arg("file_list_rounding", "str", "start_down_end_up", "rounding of file_list timestamps to frames: "
        "'start_down_end_up', 'start_up_end_down', 'all_up', 'all_down'"),
    Arg("uniform_sample", "bool", False, "one sequence per video, frames spread evenly over it"),
    Arg("seed", "int", -1, "random seed"),
)

_LEGACY = READER_ARGS + _SHARED + (
    Arg("step", "int", -1, "frames between sequence starts (<= 0: sequence_length)"),
    Arg("enable_frame_num", "any", False, "'scalar'/True: the first frame's index; 'sequence': each frame's"),
    Arg("pad_sequences", "bool", False, "make the last, incomplete sequence of a video, padded with zeros"),
    Arg("channels", "int", 3, "channels of the output (3)"),
    Arg("dtype", "dtype", types.UINT8, "UINT8 or FLOAT"),
    Arg("normalized", "bool", False, "FLOAT output divided by 255"),
    Arg("file_list_frame_num", "bool", False, "file_list start/end are frame numbers"),
    Arg("file_list_include_preceding_frame", "bool", False, "file_list timestamps round start down and end up"),
    Arg("skip_vfr_check", "bool", False, "accepted; no effect"),
    Arg("additional_decode_surfaces", "int", 2, "accepted; no effect (NVDEC)"),
    Arg("seed", "int", -1, "random seed"),
)


def _outputs(a: dict[str, Any]) -> int:
    has_labels = not a.get("filenames") or a.get("labels") is not None
    fn = a.get("enable_frame_num")
    has_fn = not (fn is None or fn is False or (isinstance(fn, str) and fn.lower() in ("none", "false", "")))
    return 1 + int(has_labels) + int(has_fn) + int(bool(a.get("enable_timestamps")))


def _strip_seed(args: tuple[Arg, ...]) -> tuple[Arg, ...]:
    """Without `seed` (every op's) and shuffle_after_epoch (DALI's video readers have none)."""
    drop = ("seed", "shuffle_after_epoch", "shuffle_after_epoch_seed")
    return tuple(x for x in args if x.name not in drop)


register(OpSchema(
    name="experimental.readers.video", impl=ExperimentalVideoReader, devices=("cpu", "gpu"),
    min_inputs=0, max_inputs=0, num_outputs=_outputs, output_layout="FHWC",
    doc="Reads and decodes video files (PyAV, optional dependency: pip install torch_dali[video]) into "
        "sequences of `sequence_length` frames (FHWC uint8), with labels, frame numbers and timestamps. "
        "device='gpu' decodes on the CPU and moves the frames to the GPU (no NVDEC yet).",
    args=_strip_seed(_EXPERIMENTAL),
))
register(OpSchema(
    name="readers.video", impl=LegacyVideoReader, devices=("gpu",), legacy_names=("VideoReader",),
    min_inputs=0, max_inputs=0, num_outputs=_outputs, output_layout="FHWC",
    doc="DALI's legacy video reader: sequences of `sequence_length` frames (FHWC uint8 or float). "
        "Decodes on the CPU with PyAV (pip install torch_dali[video]) and moves the frames to the GPU "
        "(DALI uses NVDEC; not here yet).",
    args=_strip_seed(_LEGACY),
))


def _resize_args() -> tuple[Arg, ...]:
    schema = lookup("resize")
    skip = {"image_type", "save_attrs", "dtype"}
    return tuple(Arg(a.name, a.kind, a.default, a.doc, tensor=False, check=a.check, aliases=a.aliases)
                 for a in schema.args if a.name not in skip)


register(OpSchema(
    name="readers.video_resize", impl=VideoResizeReader, devices=("gpu",), legacy_names=("VideoReaderResize",),
    min_inputs=0, max_inputs=0, num_outputs=_outputs, output_layout="FHWC",
    doc="readers.video, then every frame resized with fn.resize's arguments and rules (constant "
        "arguments). Decodes on the CPU with PyAV and moves the frames to the GPU.",
    args=_strip_seed(_LEGACY) + _resize_args(),
))
