"""readers.nemo_asr (DALI's NemoAsrReader): (audio, sample rate, transcript, index) from NVIDIA NeMo
manifests, JSON lines such as {"audio_filepath": "a.wav", "duration": 3.4, "offset": 0.5,
"text": "..."}.

As DALI 2.4 reads them (measured): the manifests' entries in order, one manifest after another;
blank lines, lines that are not a JSON object and objects without "audio_filepath" are skipped
with a warning. A relative audio path is taken as it is (relative to the working directory, not
to the manifest). Audio paths are not confined to a folder as readers.file's file_list
entries are: manifests normally list absolute paths (NeMo writes them so), and refusing only
relative ones that climb out with `..` would guard nothing an absolute path reaches anyway; a
manifest is trusted as the pipeline's code is. With `min_duration` / `max_duration` > 0, entries whose "duration" is below /
above them are left out (the limits as float32, as DALI holds them; a missing duration counts as 0, so
`min_duration` drops those entries). The audio is cut to the frames
[floor(offset * rate), + floor(duration * rate)) ("duration" absent or negative: to the end; a
negative offset counts as 0), then decoded as decoders.audio decodes it (`downmix` defaults to True here;
`sample_rate` <= 0 keeps the file's rate). Outputs: the audio (float32 (frames,), or
(frames, channels) without downmix, or `dtype`), then the file's rate (float32 scalar, the
file's even when resampled) when `read_sample_rate`, the text's UTF-8 bytes (uint8, no terminator; "" when absent) when
`read_text`, and the entry's index among its manifest's kept entries (int64 (1,)) when
`read_idxs`. A "text" that is not a string, a "duration" or "offset" that is not a number, and an
offset past the end are refused naming the manifest line (DALI crashes, reads 0, or fails on
them). FLAC/OGG entries need `soundfile`, as for decoders.audio.
"""
from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError, ArgumentTypeError, DataError
from ...skips import printable
from ...tensor_list import TensorList
from .._registry import register
from .._schema import REQUIRED, Arg, OpSchema
from ..decoders.audio import decode_audio
from ._base import READER_ARGS
from ._storage import read_file_bytes
from ._multi import MultiOutputReader, as_list, check_uniform
from ._storage import read_small

_OUT = (torch.float32, torch.int16, torch.int32)


@dataclass(frozen=True)
class Entry:
    path: str
    text: bytes
    offset: float
    duration: float | None
    index: int  # among its manifest's kept entries
    where: str  # "manifest m.json, line 3"


def _number(obj: dict[str, Any], key: str, where: str) -> float | None:
    v = obj.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise DataError(f"{where}: {key!r} must be a number, got {printable(repr(v))}")
    return float(v)


def parse_manifest(raw: bytes, name: str, what: str, min_dur: float, max_dur: float) -> list[Entry]:
    out: list[Entry] = []
    # DALI 2.4 holds the limits as float32 and compares them with the manifest's float64 durations:
    # duration 0.3 is below min_duration=0.3 (0.3f > 0.3) and above max_duration=0.9 (0.9f < 0.9)
    min_dur, max_dur = float(np.float32(min_dur)), float(np.float32(max_dur))
    for no, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        where = f"{what}: manifest {printable(name)}, line {no}"
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("audio_filepath"), str):
            warnings.warn(f"{where}: skipped (not a JSON object with an \"audio_filepath\" string)", stacklevel=2)
            continue
        text = obj.get("text", "")
        if not isinstance(text, str):
            raise DataError(f"{where}: \"text\" must be a string, got {printable(repr(text))[:80]}")
        duration, offset = _number(obj, "duration", where), _number(obj, "offset", where)
        listed = duration or 0.0  # an entry without a duration counts as 0 s here (DALI 2.4)
        if (min_dur > 0 and listed < min_dur) or (max_dur > 0 and listed > max_dur):
            continue
        out.append(Entry(obj["audio_filepath"], text.encode("utf-8", "surrogatepass"), offset or 0.0, duration,
                         len(out), where))
    return out


class NemoAsrReader(MultiOutputReader):
    def _check_args(self) -> None:
        a = self.args
        self._manifests = as_list(a["manifest_filepaths"])
        if not self._manifests:
            raise ArgumentError(f"{self.name}: `manifest_filepaths` must name at least one manifest")
        self.dtype = types.to_torch_dtype(a["dtype"])
        if self.dtype not in _OUT:
            raise ArgumentTypeError(f"{self.name}: output type {self.dtype} is not supported (int16, int32 or float32)")
        if not 0 <= float(a["quality"]) <= 100:
            raise ArgumentError(f"{self.name}: `quality` must be in [0, 100], got {a['quality']}")
        self._entries: list[Entry] = []

    def _describe_source(self) -> str:
        return f"no usable entries in {', '.join(self._manifests)}"

    def _list(self) -> int:
        a = self.args
        for m in self._manifests:
            raw = read_small(m, f"{self.name}: manifest")
            self._entries += parse_manifest(raw, m, self.name, float(a["min_duration"]), float(a["max_duration"]))
        return len(self._entries)

    def _source(self, index: int) -> str:
        return printable(self._entries[index].path)

    def _info(self, index: int) -> str:
        return ""  # DALI 2.4 gives nemo_asr's outputs no source_info (errors still name the file)

    def _load(self, index: int) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        a, e = self.args, self._entries[index]
        where = f"{e.where} ({printable(e.path)})"
        raw = read_file_bytes(e.path, where).numpy().tobytes()
        target = float(a["sample_rate"])
        audio, rate = decode_audio(raw, where, self.dtype, bool(a["downmix"]), target, float(a["quality"]),
                                   (e.offset, e.duration))
        rest: list[torch.Tensor] = []
        if a["read_sample_rate"]:
            rest.append(torch.tensor(float(rate), dtype=torch.float32))  # the file's, even when resampled
        if a["read_text"]:
            rest.append(torch.frombuffer(bytearray(e.text), dtype=torch.uint8) if e.text
                        else torch.zeros(0, dtype=torch.uint8))
        if a["read_idxs"]:
            rest.append(torch.tensor([e.index], dtype=torch.int64))
        return audio, tuple(rest)

    def _column(self, k: int, samples: list[torch.Tensor]) -> TensorList:
        check_uniform(self.name, k, samples)
        return TensorList(samples, "")

    def output_layout(self, index: int) -> str:
        return ""


def _outputs(a: dict[str, Any]) -> int:
    return 1 + int(a.get("read_sample_rate", True)) + int(a.get("read_text", True)) + int(a.get("read_idxs", False))


register(OpSchema(
    name="readers.nemo_asr", impl=NemoAsrReader, legacy_names=("NemoAsrReader",), devices=("cpu",),
    min_inputs=0, max_inputs=0, num_outputs=_outputs,
    doc="Reads (audio, sample rate, transcript, index) from NeMo ASR manifests (JSON lines naming audio files).",
    args=READER_ARGS + (
        Arg("manifest_filepaths", "strs", REQUIRED, "NeMo manifest files (JSON lines)"),
        Arg("dtype", "dtype", types.FLOAT, "audio type: INT16, INT32 or FLOAT"),
        Arg("downmix", "bool", True, "average the channels to mono (1-D audio)"),
        Arg("sample_rate", "float", -1.0, "resample to this rate in Hz (<= 0: keep each file's)"),
        Arg("quality", "float", 50.0, "resampling quality, 0..100 (as audio_resample)"),
        Arg("min_duration", "float", 0.0, "leave out entries whose duration is shorter (0: no limit)"),
        Arg("max_duration", "float", 0.0, "leave out entries whose duration is longer (0: no limit)"),
        Arg("read_sample_rate", "bool", True, "output each sample's rate"),
        Arg("read_text", "bool", True, "output each transcript's UTF-8 bytes"),
        Arg("read_idxs", "bool", False, "output each entry's index in its manifest"),
        Arg("normalize_text", "bool", False, "no longer used (as in DALI)"),
    ),
))
