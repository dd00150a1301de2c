"""decoders.audio on untrusted bytes: FLAC/OGG without `soundfile` and corrupt or truncated WAV
files are refused with an error naming the sample; nothing crashes, hangs or allocates more than
the file holds. (Decoded values against DALI: tests/test_ops_audio_dali.py, the dec_* cases.)"""
from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError
from torch_dali.io import wav
from torch_dali.ops.decoders import audio as audio_dec

from reference import audio_wav as W


def _decode(samples: list[bytes], **kw):
    data = [W.as_sample(s) for s in samples]

    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.decoders.audio(fn.external_source(source=lambda: data, batch=True), **kw))

    p = pipe()
    p.build()
    return p.run()


GOOD = W.pcm(16, 2, 20, 8000, 0)


@pytest.mark.parametrize("magic,kind", [(b"fLaC\x00\x00\x00\x22", "FLAC"), (b"OggS\x00\x02", "OGG")])
def test_flac_ogg_without_soundfile_name_the_sample(magic, kind, monkeypatch):
    monkeypatch.setattr(audio_dec, "_soundfile", lambda: None)
    with pytest.raises(RuntimeError, match=rf"sample 1.*{kind}.*soundfile"):
        _decode([GOOD, magic + bytes(40)])


@pytest.mark.parametrize("bad,what", [
    (GOOD[:30], "no data chunk|fmt"),  # cut inside the fmt chunk
    (GOOD[:12], "no fmt"),
    (b"RIFF" + GOOD[4:8] + b"WAVX" + GOOD[12:], "not a WAV|unrecognized"),
    (GOOD.replace(b"fmt ", b"fmX "), "before any .fmt"),
    (GOOD[:20] + struct.pack("<H", 2) + GOOD[22:], "encoding 0x0002"),  # ADPCM
    (GOOD[:22] + struct.pack("<H", 0) + GOOD[24:], "0 channels"),
    (GOOD[:34] + struct.pack("<H", 12) + GOOD[36:], "12-bit"),
    (GOOD[:32] + struct.pack("<H", 3) + GOOD[34:], "block align"),
    (GOOD[:16] + struct.pack("<I", 0xFFFFFFF0) + GOOD[20:], "fmt"),  # a huge fmt chunk size
])
def test_corrupt_headers_refused_naming_the_sample(bad, what):
    with pytest.raises(RuntimeError, match=rf"sample 0.*({what})"):
        _decode([bad])


def test_truncated_data_keeps_the_frames_it_holds_and_huge_sizes_do_not_allocate():
    out = _decode([GOOD[:-7]])  # 20 frames of 4 bytes, 7 bytes cut: 18 whole frames left
    assert np.asarray(out[0][0]).shape == (18, 2)
    huge = GOOD[:40] + struct.pack("<I", 0x7FFFFFFF) + GOOD[44:]  # the data chunk claims 2 GiB
    assert np.asarray(_decode([huge])[0][0]).shape == (20, 2)


def test_every_truncation_and_byte_flip_is_decoded_or_refused():
    rng = np.random.default_rng(0)
    variants = [GOOD[:k] for k in range(len(GOOD))]
    for _ in range(200):
        b = bytearray(GOOD)
        for i in rng.integers(0, 44, 3):
            b[i] = int(rng.integers(0, 256))
        variants.append(bytes(b))
    for v in variants:
        try:
            info = wav.parse(v, "x")
        except DataError:
            continue
        out = wav.decode(v, info, torch.float32)
        assert out.shape[0] * info.channels * info.bits // 8 <= len(v)


def test_quality_checked_only_when_resampling():
    """DALI 2.4 (measured): `quality` outside [0, 100] is refused at build (RuntimeError) when
    `sample_rate` is given, as a constant (even 0) or a per-sample input; without it, or with
    sample_rate=None, the quality is unused and taken."""
    from torch_dali import types
    for kw in ({"sample_rate": 0}, {"sample_rate": 16000.0}, {"sample_rate": types.Constant(8000.0)}):
        with pytest.raises(RuntimeError, match="quality"):
            _decode([GOOD], quality=-1, **kw)
    with pytest.raises(RuntimeError, match="quality"):
        _decode([GOOD], quality=100.5, sample_rate=8000)
    for kw in ({}, {"sample_rate": None}):
        wave, rate = _decode([GOOD], quality=101, **kw)
        assert np.asarray(rate[0]) == 8000 and np.asarray(wave[0]).shape == (20, 2)
    wave, _ = _decode([GOOD], quality=100, sample_rate=16000)
    assert np.asarray(wave[0]).shape == (40, 2)


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("channels", [1, 2, 5])
def test_pcm_to_float32_directly_gives_the_wide_paths_values(bits, channels):
    """8/16-bit PCM goes straight to float32 (exact there); the values equal the int64/float64 path,
    the extremes included."""
    import io
    import wave
    rng = np.random.default_rng(bits + channels)
    frames = 1001
    if bits == 16:
        a = rng.integers(-32768, 32768, (frames, channels)).astype("<i2")
        a[0, 0], a[1, 0] = -32768, 32767
    else:
        a = rng.integers(0, 256, (frames, channels)).astype(np.uint8)
        a[0, 0], a[1, 0] = 0, 255
    b = io.BytesIO()
    with wave.open(b, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(bits // 8)
        w.setframerate(8000)
        w.writeframes(a.tobytes())
    raw = b.getvalue()
    info = wav.parse(raw, "x.wav")
    wide = wav._samples(raw, info) / float(1 << (bits - 1))
    got = wav.decode(raw, info, torch.float32)
    assert got.dtype == torch.float32 and got.shape == (frames, channels)
    assert torch.equal(got, torch.from_numpy(np.ascontiguousarray(wide, np.float32)))


def _formats() -> dict[str, bytes]:
    import io
    sf = pytest.importorskip("soundfile")
    v = np.random.default_rng(5).integers(-32768, 32768, (50, 2))
    v[0, 0], v[1, 0] = -32768, 32767
    v24 = np.random.default_rng(7).integers(-(1 << 23), 1 << 23, (64, 1))
    v24[0, 0], v24[1, 0] = -(1 << 23), (1 << 23) - 1
    b = io.BytesIO()
    sf.write(b, (v24 << 8).astype(np.int32), 8000, format="FLAC", subtype="PCM_24")  # lossless: any encoder
    return {"alaw": W.riff(6, 1, 8000, 8, bytes(range(256))), "mulaw": W.riff(7, 2, 8000, 8, bytes(range(256))),
            "aiff": W.aiff(2, 11025, v), "flac24": b.getvalue()}


# DALI 2.4's outputs (sha256 of the samples' bytes, first 16 hex digits; shape; rate; first values).
# Its libsndfile reads A-law / mu-law WAV and AIFF, and 24-bit FLAC to int16 as the sample >> 8.
_DALI = {
    ("alaw", "INT16"): ("e04788d110e58ff8", (256, 1), 8000, [-5504, -5248, -6016]),
    ("alaw", "FLOAT"): ("d4f2bd1be9bad674", (256, 1), 8000, [-0.16796875, -0.16015625, -0.18359375]),
    ("mulaw", "INT32"): ("2b4ac8dd6b092006", (128, 2), 8000, [-2105278464, -2038169600, -1971060736]),
    ("mulaw", "INT16"): ("3dab54339e520bb2", (128, 2), 8000, [-32124, -31100, -30076]),
    ("aiff", "INT16"): ("0ea846272a8a2e78", (50, 2), 11025, [-32768, 19988, 32767]),
    ("aiff", "FLOAT"): ("5d69050dda0a62fa", (50, 2), 11025, [-1.0, 0.6099853515625, 0.999969482421875]),
    ("flac24", "INT16"): ("ff6161ccb044c11a", (64, 1), 8000, [-32768, 32767, 12070]),
    ("flac24", "INT32"): ("1ddc1c864ca5871d", (64, 1), 8000, [-2147483648, 2147483392, 791046656]),
}


@pytest.mark.parametrize("name,dtype", sorted(_DALI))
def test_libsndfile_formats_decode_to_dalis_values(name, dtype):
    import hashlib
    from torch_dali import types
    digest, shape, rate, first = _DALI[(name, dtype)]
    wave, r = _decode([_formats()[name]], dtype=getattr(types, dtype))
    x = np.asarray(wave[0])
    assert (x.shape, float(np.asarray(r[0])), x.ravel()[:3].tolist()) == (shape, rate, first)
    assert hashlib.sha256(x.tobytes()).hexdigest()[:16] == digest


def test_alaw_and_aiff_without_soundfile_name_the_sample(monkeypatch):
    monkeypatch.setattr(audio_dec, "_soundfile", lambda: None)
    with pytest.raises(RuntimeError, match=r"sample 1.*encoding 0x0006"):
        _decode([GOOD, W.riff(6, 1, 8000, 8, bytes(range(256)))])
    with pytest.raises(RuntimeError, match=r"sample 0.*unrecognized header"):
        _decode([W.aiff(1, 8000, np.zeros((4, 1), np.int16))])


def test_libsndfile_refusals_name_the_sample_and_its_reason():
    pytest.importorskip("soundfile")
    for bad in (b"FORM\x00\x00\x00\x04AIFF", b"not audio at all " * 4, b"OggS" + bytes(50)):
        with pytest.raises(RuntimeError, match=r"sample 0.*cannot decode") as e:
            _decode([bad])
        assert "object at 0x" not in str(e.value)  # soundfile's file-object repr is left out


def test_a_flac_header_declaring_more_frames_than_its_bytes_hold_is_refused_before_allocating():
    sf = pytest.importorskip("soundfile")
    import io
    buf = io.BytesIO()
    sf.write(buf, np.zeros(16384, np.int16), 16000, format="FLAC")
    raw = bytearray(buf.getvalue())
    # STREAMINFO's 36-bit total-samples field: 2**29 frames (2 GiB of float32) in a 130-byte file
    v = int.from_bytes(raw[18:26], "big")
    raw[18:26] = ((v & ~((1 << 36) - 1)) | (1 << 29)).to_bytes(8, "big")
    with pytest.raises(DataError, match="lie.flac.*536870912 frames"):
        audio_dec.decode_audio(bytes(raw), "lie.flac", torch.float32, False, 0.0, None)
    buf = io.BytesIO()  # a file that honestly holds much silence still decodes (~550 values a byte)
    sf.write(buf, np.zeros((480000, 2), np.int16), 48000, format="FLAC")
    out, rate = audio_dec.decode_audio(buf.getvalue(), "silence.flac", torch.float32, False, 0.0, None)
    assert out.shape == (480000, 2) and rate == 48000 and not out.any()


_RATE_BOMB = """
import resource, struct, sys
resource.setrlimit(resource.RLIMIT_DATA, (3 << 29, 3 << 29))  # 1.5 GiB: the old path needed 2.4
import numpy as np
from torch_dali import fn, pipeline_def
from torch_dali.errors import PipelineError
frames = int(sys.argv[1])
data = np.arange(frames, dtype="<i2").tobytes()
fmt = struct.pack("<HHIIHH", 1, 1, 1, 2, 2, 16)  # PCM, mono, 1 Hz, 16-bit
body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
raw = np.frombuffer(b"RIFF" + struct.pack("<I", len(body)) + body, np.uint8)

@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def pipe():
    return fn.decoders.audio(fn.external_source(source=lambda: [raw], batch=True), sample_rate=48000)[0]
p = pipe()
p.build()
try:
    print("shape", tuple(p.run()[0].at(0).shape))
except PipelineError as e:
    print(type(e.__cause__).__name__, e.__cause__)
"""


@pytest.mark.parametrize("frames,says", [(5000, "DataError .*sample 0: resampling from the file's 1 Hz to "
                                                  "48000.0 Hz would give 240000000 frames"),
                                         (50, r"shape \(2400000, 1\)")])  # small: resampled, as DALI 2.4
def test_a_file_rate_far_below_the_target_is_refused_before_resampling(frames, says):
    """The rate is the file's word: a 10 kB WAV saying 1 Hz, resampled to 48 kHz, gave 240 million
    samples (21 s, 2.4 GB; DALI 2.4 the same). Past 4M values, more than 256x the file's rate is
    refused naming the sample. In a child with a 1.5 GiB data limit and a timeout."""
    import re
    import subprocess
    import sys
    from pathlib import Path
    r = subprocess.run([sys.executable, "-c", _RATE_BOMB, str(frames)], capture_output=True, text=True,
                       timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0 and re.search(says, r.stdout), (r.stdout, r.stderr[-2000:])
