"""readers.nemo_asr cases compared with DALI 2.4's CPU backend: small WAV files and NeMo manifests
written into a folder (absolute paths, so the same case runs from any directory), read for a
few batches. Used by audio_make.py (in the DALI venv) and tests/test_readers_nemo_asr.py."""
from __future__ import annotations

import importlib
import json
import os
from typing import Any

import numpy as np

from . import audio_wav as W

FILES = {
    "a.wav": W.pcm(16, 1, 40, 16000, 1), "sub/b.wav": W.pcm(16, 2, 30, 8000, 2), "c.wav": W.floats(32, 1, 20, 22050, 3),
    "d.wav": W.pcm(24, 2, 64, 16000, 4),
}


def _e(path: str, **kw: Any) -> str:
    return json.dumps({"audio_filepath": "{d}/" + path, **kw}, ensure_ascii=False)


_MAIN = [_e("a.wav", duration=0.0025, text="hello world"), _e("sub/b.wav", duration=0.00375, text="ünïcode"),
         _e("c.wav", duration=0.0009, offset=0.0), _e("d.wav", text="four")]
_CUTS = [_e("c.wav", offset=0.0002, duration=0.0004), _e("c.wav", offset=0.0002), _e("c.wav", duration=0.00049),
         _e("c.wav", duration=1.0), _e("c.wav", duration=0), _e("c.wav", offset=-0.0002)]
_MESSY = ["", '[{"audio_filepath": "x.wav"}]', '{"duration": 1.0}', "not json", _e("a.wav", foo=[1, 2], text="ok"), "  ",
          _e("c.wav")]
_FILTER = [_e("c.wav", duration=0.0001), _e("a.wav", duration=0.002), _e("c.wav", duration=0.0009), _e("d.wav")]

# name -> (manifests (lines), reader arguments, batch size, batches read)
CASES: dict[str, tuple[list[list[str]], dict[str, Any], int, int]] = {
    "default": ([_MAIN], {}, 2, 3),
    "all_outputs_int16": ([_MAIN], dict(read_idxs=True, downmix=False, dtype="INT16"), 4, 1),
    "int32_downmix": ([_MAIN], dict(dtype="INT32"), 4, 1),
    "audio_only_resampled": ([_MAIN], dict(read_text=False, read_sample_rate=False, sample_rate=16000.0), 4, 1),
    "cuts": ([_CUTS], dict(read_idxs=True), 6, 1),
    "cut_resampled": ([_CUTS[:1]], dict(sample_rate=11025.0), 1, 1),
    "messy_lines": ([_MESSY], dict(read_idxs=True), 2, 1),
    "min_duration": ([_FILTER], dict(min_duration=0.001, read_idxs=True), 2, 2),
    "max_duration": ([_FILTER], dict(max_duration=0.003, read_idxs=True), 3, 1),
    "two_manifests": ([_MAIN[:2], _CUTS[:3]], dict(read_idxs=True), 5, 1),
    "shards": ([_MAIN], dict(num_shards=2, shard_id=1, read_idxs=True), 2, 2),
    # a negative duration reads to the end (as an absent one); -0.0 and 0 read no frames
    "negative_duration": ([[_e("c.wav", duration=-1.0, text="a"), _e("c.wav", offset=0.0002, duration=-0.5),
                            _e("c.wav", duration=-0.0), _e("c.wav", duration=-1e-9)]], dict(read_idxs=True), 4, 1),
    "err_empty": ([[_e("a.wav", duration=0.001)]], dict(min_duration=0.5), 1, 1),
    "err_missing_file": ([[_e("nope.wav")]], {}, 1, 1),
    "err_dtype": ([_MAIN], dict(dtype="UINT8"), 1, 1),
}


def build(folder: str, name: str) -> list[str]:
    """Writes the audio files and case `name`'s manifests into `folder`; returns the manifests."""
    for rel, data in FILES.items():
        os.makedirs(os.path.dirname(os.path.join(folder, rel)), exist_ok=True)
        with open(os.path.join(folder, rel), "wb") as f:
            f.write(data)
    paths = []
    for k, lines in enumerate(CASES[name][0]):
        p = os.path.join(folder, f"{name}_{k}.json")
        with open(p, "w", encoding="utf-8") as f:
            f.write("\n".join(line.replace("{d}", folder) for line in lines) + "\n")
        paths.append(p)
    return paths


def run(fn: Any, pipeline_def: Any, folder: str, name: str) -> list[list[list[np.ndarray]]]:
    """Case `name` read with `fn` (DALI's or torch_dali's): per batch, per output, the samples."""
    manifests, kw, batch, iters = CASES[name][0], dict(CASES[name][1]), CASES[name][2], CASES[name][3]
    del manifests
    if "dtype" in kw:
        kw["dtype"] = getattr(importlib.import_module(fn.__name__.rsplit(".", 1)[0] + ".types"), kw["dtype"])
    paths = build(folder, name)

    @pipeline_def(batch_size=batch, num_threads=1, device_id=None)
    def pipe():  # type: ignore[no-untyped-def]
        r = fn.readers.nemo_asr(manifest_filepaths=paths, **kw)
        return tuple(r) if isinstance(r, (list, tuple)) else r

    p = pipe()
    p.build()
    out = []
    for _ in range(iters):
        outs = p.run()
        out.append([[np.array(o[i]) for i in range(batch)] for o in outs])
    return out
