"""Every knob in one table (torch_dali/_knobs.py), read only through it; the C++ extension takes
the values as arguments with the same defaults; the README's table is generated from it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torch_dali import _knobs

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "torch_dali"
SOURCES = [p for ext in ("py", "c", "cpp", "cu", "h") for p in PKG.rglob(f"*.{ext}")]


def test_readme_table_is_current() -> None:
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- knobs-table -->\n", 1)[1].split("<!-- /knobs-table -->", 1)[0]
    assert table == _knobs.markdown_table(), "regenerate: python -m torch_dali.docs knobs"


def test_only_the_table_reads_the_environment() -> None:
    """No other module reads a TORCH_DALI_* variable: Python (os.environ, os.getenv) or C (getenv)."""
    reads = re.compile(r"(environ|getenv)\W+[^\n]*TORCH_DALI_|TORCH_DALI_\w+\W+[^\n]*environ")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in SOURCES if p.name != "_knobs.py"
             for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
             if reads.search(line) or ("getenv" in line and p.suffix != ".py")]
    assert found == []


def test_every_variable_named_in_the_package_is_in_the_table() -> None:
    names = {m for p in SOURCES for m in re.findall(r"TORCH_DALI_[A-Z0-9_]*[A-Z0-9]", p.read_text(errors="replace"))}
    names -= {"TORCH_DALI_WITH_NVJPEG"}  # a compile-time macro of the extension, not a variable
    names -= {n for n in names if n.startswith("TORCH_DALI_NVJPEG") and n not in {k.name for k in _knobs.KNOBS}
              and any(k.name.startswith(n) for k in _knobs.KNOBS)}  # prose naming the family
    assert names <= {k.name for k in _knobs.KNOBS}, names - {k.name for k in _knobs.KNOBS}


def test_extension_defaults_are_the_tables() -> None:
    """The nvJPEG decoder binding's defaults equal the table's (and the decoders' hw_decoder_load)."""
    from torch_dali.ops._registry import lookup
    text = (PKG / "_native" / "csrc" / "bindings.cpp").read_text()
    defaults = dict(re.findall(r'py::arg\("(\w+)"\) = ([\w.]+)', text))
    want = {
        "num_hw_states": _knobs.get("TORCH_DALI_NVJPEG_HW_STATES"),
        "num_cuda_states": _knobs.get("TORCH_DALI_NVJPEG_CUDA_STATES"),
        "hybrid_huffman_threshold": _knobs.get("TORCH_DALI_NVJPEG_HUFFMAN_THRESHOLD"),
        "num_slots": _knobs.decoder_slots(),
        "hw_concurrent": False,
        "blocking_sync": False,
        "adaptive": _knobs.get("TORCH_DALI_NVJPEG_ADAPTIVE") == 1,
        "arena": _knobs.get("TORCH_DALI_NVJPEG_ARENA"),
        "device_padding": _knobs.get("TORCH_DALI_NVJPEG_DEVICE_PADDING"),
        "lazy_cuda": _knobs.get("TORCH_DALI_NVJPEG_LAZY_CUDA"),
        "preallocate": _knobs.get("TORCH_DALI_NVJPEG_PREALLOCATE"),
        "stream_priority": _knobs.decoder_stream_priority(),
        "share_hw_handle": _knobs.get("TORCH_DALI_NVJPEG_SHARED_HW_HANDLE") == 1,
        "pinned_input": _knobs.get("TORCH_DALI_NVJPEG_PINNED_INPUT") == 1,
        "hw_state_sync": _knobs.get("TORCH_DALI_NVJPEG_HW_STATE_SYNC") == 1,
        "host_waits": _knobs.get("TORCH_DALI_HOST_WAITS"),
        "hw_load": lookup("decoders.image").arg("hw_decoder_load").default,
    }
    parsed = {k: (v == "true") if v in ("true", "false") else float(v) for k, v in defaults.items() if k in want}
    assert parsed == {k: float(v) if not isinstance(v, bool) else v for k, v in want.items()}


@pytest.mark.parametrize("raw,value", [(None, 3), ("", 3), ("2", 2), ("0", 1), ("99", 8), ("two", 3), ("2.5", 3)])
def test_int_knobs_clamp_or_fall_back(monkeypatch: pytest.MonkeyPatch, raw: str | None, value: int) -> None:
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_MIXED_LANES", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_MIXED_LANES", raw)
    assert _knobs.mixed_lanes() == value


@pytest.mark.parametrize("raw,value", [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)])
def test_flags(monkeypatch: pytest.MonkeyPatch, raw: str | None, value: bool) -> None:
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_NO_EXT", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_NO_EXT", raw)
    assert _knobs.get("TORCH_DALI_NO_EXT") is value


@pytest.mark.parametrize("raw,value", [(None, True), ("", True), (" ", True), ("0", False), ("1", True)])
def test_a_flag_on_by_default_turns_off_only_with_0(monkeypatch: pytest.MonkeyPatch, raw: str | None,
                                                     value: bool) -> None:
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_HOST_WAITS", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_HOST_WAITS", raw)
    assert _knobs.get("TORCH_DALI_HOST_WAITS") is value


def test_decoder_stream_priority_follows_the_pipelines_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_dali.io.nvjpeg import DecoderConfig
    monkeypatch.delenv("TORCH_DALI_NVJPEG_STREAM_PRIORITY", raising=False)
    monkeypatch.setenv("TORCH_DALI_STREAM_PRIORITY", "-1")
    assert DecoderConfig.from_knobs().stream_priority == -1
    monkeypatch.setenv("TORCH_DALI_NVJPEG_STREAM_PRIORITY", "-2")
    assert DecoderConfig.from_knobs().stream_priority == -2
    monkeypatch.setenv("TORCH_DALI_NVJPEG_STREAM_PRIORITY", "0")
    assert DecoderConfig.from_knobs().stream_priority == 0
    assert _knobs.get("TORCH_DALI_STREAM_PRIORITY") == -1  # the pipeline's own streams keep theirs


def test_float_knobs_and_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_DALI_STOP_TIMEOUT_S", "-4")
    assert _knobs.get("TORCH_DALI_STOP_TIMEOUT_S") == 0.0
    monkeypatch.setenv("TORCH_DALI_STOP_TIMEOUT_S", "nan")
    assert _knobs.get("TORCH_DALI_STOP_TIMEOUT_S") == 10.0
    with pytest.raises(KeyError, match="not a torch_dali knob"):
        _knobs.get("TORCH_DALI_NOPE")


def test_decoder_config_comes_from_the_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_dali.io.nvjpeg import DecoderConfig
    monkeypatch.setenv("TORCH_DALI_MIXED_LANES", "2")
    monkeypatch.setenv("TORCH_DALI_NVJPEG_BLOCKING_SYNC", "1")
    c = DecoderConfig.from_knobs()
    assert (c.hw_states, c.cuda_states, c.huffman_threshold, c.slots, c.hw_concurrent, c.blocking_sync) \
        == (1, 8, 1000 * 1000, 2, False, True)
    monkeypatch.setenv("TORCH_DALI_MIXED_LANES", "4")  # one slot per lane, and one less than the permits
    assert DecoderConfig.from_knobs().slots == 2
    monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", "5")
    assert DecoderConfig.from_knobs().slots == 4
    monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", "2")  # two permits still get two slots
    assert DecoderConfig.from_knobs().slots == 2
    monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", "0")
    assert DecoderConfig.from_knobs().slots == 4
    monkeypatch.setenv("TORCH_DALI_NVJPEG_SLOTS", "5")
    assert DecoderConfig.from_knobs().slots == 5


@pytest.mark.parametrize("raw,hardware_only,permits", [(None, True, 2), (None, False, 3), ("4", True, 4), ("0", False, 0)])
def test_decode_permits_default_by_the_decoders(monkeypatch: pytest.MonkeyPatch, raw: str | None,
                                               hardware_only: bool, permits: int) -> None:
    """Two decoded batches when all JPEGs go to the hardware engines (one batch at a time), else
    three; the knob, when set, wins."""
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_DECODE_PERMITS", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", raw)
    assert _knobs.decode_permits(hardware_only) == permits


@pytest.mark.parametrize("raw,load,share", [(None, 0.65, 0.9), (None, 0.0, 0.0), (None, 1.0, 1.0), ("0.7", 0.65, 0.7),
                                            ("-1", 0.65, 0.65), ("-1", 0.3, 0.3), ("5", 0.65, 1.0)])
def test_hardware_share_replaces_loads_between_0_and_1(monkeypatch: pytest.MonkeyPatch, raw: str | None,
                                                        load: float, share: float) -> None:
    from torch_dali.io.nvjpeg import hw_share
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_NVJPEG_HW_SHARE", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_NVJPEG_HW_SHARE", raw)
    assert hw_share(load) == share


@pytest.mark.parametrize("raw,load,share", [(None, 1.0, 1.0), ("0.9", 1.0, 0.9), ("0.9", 1.5, 0.9), ("0.9", 0.65, 0.9),
                                            ("0.9", 0.0, 0.0)])
def test_full_load_share_only_moves_load_one(monkeypatch: pytest.MonkeyPatch, raw: str | None,
                                             load: float, share: float) -> None:
    from torch_dali.io.nvjpeg import hw_share
    monkeypatch.delenv("TORCH_DALI_NVJPEG_HW_SHARE", raising=False)
    if raw is None:
        monkeypatch.delenv("TORCH_DALI_NVJPEG_FULL_HW_SHARE", raising=False)
    else:
        monkeypatch.setenv("TORCH_DALI_NVJPEG_FULL_HW_SHARE", raw)
    assert hw_share(load) == share


def test_second_knobs_stay_within_what_python_can_wait(monkeypatch):
    """TORCH_DALI_STOP_TIMEOUT_S=1e10 reached Thread.join, which overflows past ~1e9 s: the error of a
    failing op came out as an OverflowError. Seconds knobs are capped; an int64 one too."""
    for name in ("TORCH_DALI_STOP_TIMEOUT_S", "TORCH_DALI_STALL_DUMP_S"):
        for raw in ("1e10", "inf", "9" * 400):
            monkeypatch.setenv(name, raw)
            assert _knobs.get(name) == 1e6
    monkeypatch.setenv("TORCH_DALI_NVJPEG_HUFFMAN_THRESHOLD", "9" * 40)
    assert _knobs.get("TORCH_DALI_NVJPEG_HUFFMAN_THRESHOLD") < 2 ** 63
    monkeypatch.setenv("TORCH_DALI_STOP_TIMEOUT_S", "1e10")
    import numpy as np

    import torch_dali as dali
    from torch_dali import fn
    from torch_dali.errors import PipelineError

    @dali.pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        return fn.python_function(fn.random.uniform(), function=_fails)
    pipe = p()
    with pytest.raises(PipelineError, match="boom"):
        pipe.run()
    assert np.isfinite(_knobs.get("TORCH_DALI_STOP_TIMEOUT_S"))


def _fails(x):
    raise ValueError("boom")


def test_a_training_feed_keeps_its_gpu_work_out_of_the_trainings_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """TORCH_DALI_TRAINING_FEED: a pipeline torch_dali.DataLoader builds sends every JPEG of a
    0 < hw_decoder_load < 1 decoder to the engines and runs its streams at priority -1; the knobs the
    user sets win, 0 turns it off, and a pipeline that feeds no training keeps the defaults."""
    from torch_dali.io.nvjpeg import DecoderConfig, hw_share
    for name in ("TORCH_DALI_TRAINING_FEED", "TORCH_DALI_NVJPEG_HW_SHARE", "TORCH_DALI_STREAM_PRIORITY",
                 "TORCH_DALI_NVJPEG_STREAM_PRIORITY", "TORCH_DALI_NVJPEG_FULL_HW_SHARE"):
        monkeypatch.delenv(name, raising=False)
    assert (hw_share(0.65, True), hw_share(0.65, False), hw_share(0.0, True), hw_share(1.0, True)) == (1.0, 0.9, 0.0, 1.0)
    assert (_knobs.stream_priority(True), _knobs.stream_priority(False)) == (-1, 0)
    assert (DecoderConfig.from_knobs(True).stream_priority, DecoderConfig.from_knobs().stream_priority) == (-1, 0)
    monkeypatch.setenv("TORCH_DALI_NVJPEG_HW_SHARE", "0.8")
    monkeypatch.setenv("TORCH_DALI_STREAM_PRIORITY", "0")
    assert (hw_share(0.65, True), _knobs.stream_priority(True)) == (0.8, 0)
    monkeypatch.setenv("TORCH_DALI_NVJPEG_STREAM_PRIORITY", "-2")
    assert DecoderConfig.from_knobs(True).stream_priority == -2
    monkeypatch.delenv("TORCH_DALI_NVJPEG_HW_SHARE")
    monkeypatch.delenv("TORCH_DALI_STREAM_PRIORITY")
    monkeypatch.delenv("TORCH_DALI_NVJPEG_STREAM_PRIORITY")
    monkeypatch.setenv("TORCH_DALI_TRAINING_FEED", "0")
    assert (hw_share(0.65, True), _knobs.stream_priority(True)) == (0.9, 0)
