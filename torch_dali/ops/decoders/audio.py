"""decoders.audio: encoded audio files held in memory (uint8 samples) to (frames, channels) waveforms
and their sampling rates, as DALI 2.4 decodes them.

WAV (PCM 8/16/24/32-bit, IEEE float 32/64-bit) is read with the standard library (torch_dali.io.wav).
FLAC, OGG and what else libsndfile reads, as DALI's libsndfile does (AIFF, AU, CAF, A-law / mu-law /
ADPCM WAV...), need the `soundfile` package; without it they are refused with an error naming the
sample. Measured on DALI 2.4: with no downmix and no resampling the values are libsndfile's
(float: x / 2^(bits-1); int16/int32: PCM shifted to the width, float files rounded unscaled). A
multi-channel file with `downmix` is averaged over its channels in float32 as DALI's kernel does it
(`downmix_channels`: each channel times float32(1 / channels), summed left to right; a mono file
is left as it is) and `sample_rate` > 0 other than the file's resamples with audio_resample's kernel; either
way integer output is then the float value times the type's maximum, rounded half away from zero.
The second output is the rate: `sample_rate` when given (nonzero), else the file's, float32.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError, ArgumentTypeError, DataError
from ...io import wav
from .. import _dispatch
from .._operator import Operator, SampleContext
from .._registry import register
from .._schema import Arg, OpSchema
from ..audio_resample import from_domain, lobes_for, resample

_OUT = (torch.float32, torch.int16, torch.int32)


def _soundfile() -> Any:
    try:
        import soundfile  # type: ignore[import-not-found]
    except ImportError:
        return None
    return soundfile


# libsndfile's frame count comes from the file's header, and soundfile allocates it before reading:
# refused past what the file's bytes can hold (FLAC's constant subframes code a frame of 4096
# silent samples in a few bytes, so 4096 values a byte), with a floor for small files
_VALUES_PER_BYTE, _MIN_VALUES = 4096, 1 << 22
#: most times the file's rate a resampled sample may be at (past _MIN_VALUES values): the rate is
#: the file's word, and a 10 kB WAV saying 1 Hz resampled to 48 kHz gave 240 million samples (21 s,
#: 2.4 GB; DALI 2.4 the same: 17 s, 2.1 GB). Real upsampling is a few times (8 kHz to 48 kHz: 6x)
_MAX_UPSAMPLE = 256
_SF_DTYPES = {torch.float32: "float32", torch.int16: "int16", torch.int32: "int32"}


class _Bytes:
    """The file object libsndfile reads through: a seek before the start (corrupt headers ask for
    one) stays put instead of raising inside soundfile's C callback, which prints the traceback."""

    def __init__(self, raw: bytes) -> None:
        import io
        self._f = io.BytesIO(raw)
        self.read, self.tell = self._f.read, self._f.tell

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._f.seek(offset, whence)
        except ValueError:
            return self._f.tell()


def _decode_sf(raw: bytes, what: str, where: str, dtype: torch.dtype, downmix: bool,
               target_rate: float) -> tuple[torch.Tensor, int, bool]:
    """FLAC, OGG, and what else libsndfile reads (AIFF, AU, CAF, A-law / mu-law / ADPCM WAV...),
    through soundfile: (frames, channels), the rate, and whether the values are final. DALI 2.4
    decodes with libsndfile too and, when nothing follows (no downmix of several channels, no
    resampling), reads at the output type with libsndfile's own conversions (24-bit to int16:
    shifted, not rounded from float); else float32."""
    sf = _soundfile()
    if sf is None:
        raise DataError(f"{where}: {what} needs the `soundfile` package, which is not installed "
                        "(pip install torch_dali[audio]; only PCM and float WAV are decoded without it)")
    try:
        with sf.SoundFile(_Bytes(raw)) as f:
            if f.frames * f.channels > max(_MIN_VALUES, _VALUES_PER_BYTE * len(raw)):
                raise DataError(f"{where}: the {what} header declares {f.frames} frames of {f.channels} channels")
            rate = int(f.samplerate)
            final = not ((downmix and f.channels > 1) or (target_rate > 0 and target_rate != rate))
            data = f.read(dtype=_SF_DTYPES[dtype if final else torch.float32], always_2d=True)
    except DataError:
        raise
    except Exception as e:  # noqa: BLE001 - the library's own errors, reported with the sample
        # libsndfile's own reason, without soundfile's "Error opening <file object at 0x...>: "
        raise DataError(f"{where}: cannot decode the {what}: {getattr(e, 'error_string', None) or e}") from None
    return torch.from_numpy(np.ascontiguousarray(data)), rate, final


class AudioDecoder(Operator):
    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        if self.dtype not in _OUT:
            raise ArgumentTypeError(f"{self.name}: output type {self.dtype} is not supported (int16, int32 or float32)")
        # DALI 2.4 (measured) checks `quality` at build only when `sample_rate` is given (a constant, even 0
        # or the file's own rate, or a per-sample input); without it any quality is taken and unused
        rate_given = "sample_rate" in self.node.explicit or "sample_rate" in self.node.arg_inputs
        if rate_given and not 0.0 <= float(self.args["quality"]) <= 100.0:
            raise ArgumentError(f"{self.name}: `quality` must be in [0, 100] when resampling (`sample_rate` is "
                                f"given), got {self.args['quality']}")

    def output_layout(self, index: int) -> str:
        return ""

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        where = f"{self.name}: sample {ctx.index}" + (f" ({ctx.source})" if ctx.source else "")
        data = inputs[0]
        if data.dtype != torch.uint8:
            raise ArgumentTypeError(f"{where}: the encoded input must be uint8 bytes, got {data.dtype}")
        raw = data.reshape(-1).contiguous().cpu().numpy().tobytes()
        target = float(args["sample_rate"] if "sample_rate" in args else self.args["sample_rate"])
        wave, rate = decode_audio(raw, where, self.dtype, bool(self.args["downmix"]), target,
                                  float(self.args["quality"]))
        return wave, torch.tensor(target if target != 0 else float(rate), dtype=torch.float32)


def downmix_channels(floats: torch.Tensor) -> torch.Tensor:
    """(frames, channels) float32 to (frames, 1): x0*w + x1*w + ... in float32 with w = float32(1 / C),
    in channel order; this rounds as DALI 2.4 does (torch's mean divides the sum instead and differs
    by an ulp, a unit of integer output after scaling, for 3, 5, 6, 7... channels)."""
    w = torch.tensor(1.0, dtype=torch.float32) / floats.shape[1]
    acc = floats[:, 0] * w
    for c in range(1, floats.shape[1]):
        acc = acc + floats[:, c] * w
    return acc.unsqueeze(1)


def _span(n: int, rate: int, span: tuple[float, float | None] | None, where: str) -> slice:
    """Frames [floor(offset * rate), + floor(duration * rate)) of n (a negative offset counts as 0;
    no duration, or a negative one: to the end, as DALI 2.4 reads them; 0 gives no frames)."""
    if span is None:
        return slice(0, n)
    start = max(0, math.floor(span[0] * rate))
    if start > n:
        raise DataError(f"{where}: the offset {span[0]} s is past the end of the audio ({n} frames at {rate} Hz)")
    stop = n if span[1] is None or span[1] < 0 else min(n, start + math.floor(span[1] * rate))
    return slice(start, stop)


def decode_audio(raw: bytes, where: str, dtype: torch.dtype, downmix: bool, target_rate: float,
                 quality: float, span: tuple[float, float | None] | None = None) -> tuple[torch.Tensor, int]:
    """(waveform, the file's rate): (frames, channels), or (frames,) when downmixed; `span`
    (offset, duration) in seconds cuts the frames first."""
    kind = wav.container(raw)
    info, what = None, f"{kind.upper()} data" if kind else "audio data (not WAV, FLAC or OGG: unrecognized header)"
    if kind == "wav":
        try:
            info = wav.parse(raw, where)
        except wav.UnsupportedEncoding as e:
            if _soundfile() is None:
                raise
            what = f"WAV data (encoding {e.tag:#06x})"
    rate = info.rate if info is not None else 0
    floats: torch.Tensor | None = None
    if info is None:
        decoded, rate, final = _decode_sf(raw, what, where, dtype, downmix, target_rate)
        if final:
            out = decoded[_span(decoded.shape[0], rate, span, where)]
            return (out[:, 0] if downmix else out).contiguous(), rate
        floats = decoded
    channels = info.channels if info is not None else int(floats.shape[1])  # type: ignore[union-attr]
    mix = downmix and channels > 1
    resampling = target_rate > 0 and target_rate != rate
    if not mix and not resampling:
        out = wav.decode(raw, info, dtype)  # type: ignore[arg-type]
        out = out[_span(out.shape[0], rate, span, where)]
        return (out[:, 0].contiguous() if downmix else out.contiguous()), rate
    if floats is None:
        floats = wav.decode(raw, info, torch.float32)  # type: ignore[arg-type]
    floats = floats[_span(floats.shape[0], rate, span, where)]
    if mix:
        floats = downmix_channels(floats)
    if resampling:
        in_r, out_r = float(rate), float(torch.tensor(target_rate, dtype=torch.float32))
        n_out = math.ceil(floats.shape[0] * out_r / in_r)
        if n_out * channels > 1 << 30 or (n_out * channels > _MIN_VALUES and out_r > _MAX_UPSAMPLE * in_r):
            raise DataError(f"{where}: resampling from the file's {rate} Hz to {target_rate} Hz would give "
                            f"{n_out} frames (at most {_MAX_UPSAMPLE}x the file's rate, past "
                            f"{_MIN_VALUES} values)")
        floats = _dispatch.call(resample, floats, n_out, in_r / out_r, lobes_for(quality))
    out = from_domain(floats, dtype)
    return (out[:, 0].contiguous() if downmix else out), rate


register(OpSchema(
    name="decoders.audio", impl=AudioDecoder, devices=("cpu",), num_outputs=2, legacy_names=("AudioDecoder",),
    doc="Decodes audio files held in memory (uint8): WAV (PCM 8-32 bit, float); FLAC, OGG, AIFF and other "
        "libsndfile formats with soundfile (optional dependency: pip install torch_dali[audio]); "
        "outputs the waveform (frames, channels) and the sampling rate.",
    args=(Arg("dtype", "dtype", types.FLOAT, "output type: INT16, INT32 or FLOAT"),
          Arg("downmix", "bool", False, "average the channels to mono (1-D output)"),
          Arg("sample_rate", "float", 0.0, "resample to this rate in Hz (0: keep the file's)", tensor=True),
          Arg("quality", "float", 50.0, "resampling quality, 0..100 (as audio_resample)")),
))
