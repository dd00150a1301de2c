"""readers.nemo_asr against DALI 2.4's CPU output (tests/reference/audio_tables.npz, nemo_* entries,
made by tests/reference/audio_make.py from tests/reference/audio_nemo.py): every batch, output and
sample; same refusals. Plus the manifest problems DALI does not survive, refused here naming the line."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError

from reference import audio_nemo as N
from reference.audio_check import tables


@pytest.mark.parametrize("name", list(N.CASES))
def test_matches_dali(name, tmp_path):
    t = tables()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the skipped manifest lines
        try:
            got = N.run(fn, pipeline_def, str(tmp_path), name)
        except (RuntimeError, DataError) as e:  # refused at build (listing) as a DataError, like every reader here
            assert f"nemo_{name}/error" in t, e
            return
    assert f"nemo_{name}/error" not in t, t.get(f"nemo_{name}/error")
    n_batches, n_out = (int(v) for v in t[f"nemo_{name}/shape"])
    assert len(got) == n_batches and all(len(b) == n_out for b in got)
    resampled = "resampled" in name
    for b, outs in enumerate(got):
        for k, samples in enumerate(outs):
            for i, g in enumerate(samples):
                e = t[f"nemo_{name}/{b}/{k}/{i}"]
                assert g.shape == e.shape and g.dtype == e.dtype, (b, k, i, g.shape, e.shape, g.dtype, e.dtype)
                if resampled and e.dtype.kind == "f":
                    np.testing.assert_allclose(g, e, rtol=0, atol=1e-5 * max(1.0, float(np.abs(e).max(initial=0))))
                else:
                    np.testing.assert_array_equal(g, e)


def _read(tmp_path, lines: list[str]):
    N.build(str(tmp_path), "default")
    m = tmp_path / "m.json"
    m.write_text("\n".join(lines) + "\n")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.nemo_asr(manifest_filepaths=str(m)))

    p = pipe()
    p.build()
    return p.run()


@pytest.mark.parametrize("extra,what", [({"text": 5}, "text"), ({"duration": "0.5"}, "duration"),
                                        ({"offset": 1.0}, "offset 1.0 s is past the end")])
def test_bad_entries_refused_naming_the_line(tmp_path, extra, what):
    line = json.dumps({"audio_filepath": str(tmp_path / "c.wav"), **extra})
    with pytest.raises((RuntimeError, DataError), match=rf"m.json, line 2.*{what}"):
        _read(tmp_path, ["", line])


def test_skipped_lines_warn(tmp_path):
    with pytest.warns(UserWarning, match=r"line 1: skipped"):
        out = _read(tmp_path, ['{"duration": 1}', json.dumps({"audio_filepath": str(tmp_path / "a.wav")})])
    assert np.asarray(out[0][0]).shape == (40,)


def test_no_source_info(tmp_path):
    # DALI 2.4 (measured): no output of readers.nemo_asr carries a source_info() name
    paths = N.build(str(tmp_path), "default")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        audio, rate, text = fn.readers.nemo_asr(manifest_filepaths=paths)
        return audio, rate, text, fn.get_property(audio, key="source_info")

    p = pipe()
    p.build()
    outs = p.run()
    assert all(o[i].source_info() == "" for o in outs for i in range(2))
    assert all(np.asarray(outs[3][i]).size == 0 for i in range(2))


@pytest.mark.parametrize("limits,kept", [
    # DALI 2.4 (measured): the limits are float32, the durations float64, so an entry whose duration
    # equals min_duration=0.3 / 0.1 / 0.2 is dropped and one equal to max_duration=0.9 as well
    ((0.3, 0.0), 4), ((0.1, 0.0), 6), ((0.7, 0.0), 3), ((0.0, 0.9), 6), ((0.0, 0.3), 4),
    ((0.0, 0.7), 5), ((0.5, 0.9), 2), ((0.2, 0.2), 0)])
def test_duration_limits_compare_as_float32(tmp_path, limits, kept):
    import wave
    with wave.open(str(tmp_path / "s.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(100)
        w.writeframes(np.arange(200, dtype="<i2").tobytes())
    m = tmp_path / "m.json"
    entries = [{"audio_filepath": str(tmp_path / "s.wav"), **({} if d is None else {"duration": d})}
               for d in (0.3, 0.5, 0.1, 0.9, 1.1, None, 0.2, 0.7)]
    m.write_text("".join(json.dumps(e) + "\n" for e in entries))

    @pipeline_def(batch_size=8, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.nemo_asr(manifest_filepaths=str(m), read_idxs=True, read_text=False, read_sample_rate=False,
                                   min_duration=limits[0], max_duration=limits[1])[1]

    p = pipe()
    if not kept:  # DALI: no files found, at build
        with pytest.raises((RuntimeError, DataError)):
            p.build()
        return
    p.build()
    assert [int(np.asarray(t)[0]) for t in p.run()[0]] == [i % kept for i in range(8)]
