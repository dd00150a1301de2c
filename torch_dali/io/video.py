"""Video files (untrusted bytes or paths) to RGB / YCbCr frames, through PyAV (FFmpeg's libavformat
and libavcodec, the libraries DALI's CPU video decoder uses). PyAV is an optional dependency
(`pip install torch_dali[video]`), imported on first use.

What DALI 2.4's CPU backend does, measured here:

* A file's frames are the packets of its best video stream with a timestamp (pts, else dts) >= 0,
  in timestamp order; frame k is the k-th of them. A packet without any timestamp is an error.
* Timestamps are (pts - pts of frame 0) * the stream's time base, in seconds (float64).
* Frames are converted with libswscale: bilinear, full chroma interpolation, accurate rounding, and
  BT.601 coefficients whatever the stream says (a BT.709-tagged stream is converted as BT.601);
  the range is the pixel format's (yuvj* full, others limited). PyAV's reformatter with these
  settings gives DALI's pixels bit for bit (tests/test_ref_video.py).
* YCbCr output is the same conversion to planar 4:4:4, interleaved (DALI 2.4's CPU backend fails
  on it with a libswscale error; its GPU backend gives YCbCr).

Untrusted data: a file that does not open, has no video stream, no frames, frames without
timestamps, that fails to decode, or that refers to other files (an HLS or DASH playlist: FFmpeg
would read the files it names) is a `VideoDataError` naming it; frame counts, frame sizes and
the bytes of one output sample are bounded (`MAX_FRAMES`, `MAX_FRAME_PIXELS`, `MAX_SAMPLE_BYTES`).
"""
from __future__ import annotations

import io
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import DataError, TorchDaliError
from ..skips import printable

MAX_FRAMES = 1 << 22          # frames indexed per file (~19 hours at 60 fps)
MAX_FRAME_PIXELS = 1 << 26    # 8192 x 8192
MAX_SAMPLE_BYTES = 1 << 33    # 8 GiB of decoded frames in one output sample

_INSTALL = "pip install torch_dali[video]"


class VideoDataError(DataError, RuntimeError):
    """A video that cannot be read or decoded: a DataError, and a RuntimeError as DALI raises."""


class MissingVideoBackend(TorchDaliError, RuntimeError):
    """PyAV is not installed."""


def _av() -> Any:
    try:
        import av  # type: ignore[import-not-found]
    except ImportError:
        raise MissingVideoBackend(f"video decoding needs PyAV, which is not installed: {_INSTALL}") from None
    return av


def require_backend(op: str) -> None:
    """Raises MissingVideoBackend (naming `op`) when PyAV cannot be imported."""
    try:
        _av()
    except MissingVideoBackend as e:
        raise MissingVideoBackend(f"{op}: {e}") from None


def _flags(av: Any) -> Any:
    interp = av.video.reformatter.Interpolation
    return interp.BILINEAR | interp.FULL_CHR_H_INT | interp.ACCURATE_RND


@dataclass
class VideoIndex:
    """What listing a video learns: its frames' timestamps (sorted), key frames, size and time base."""

    pts: list[int]
    keyframe: list[int]          # per frame: the index of the last key frame at or before it
    width: int
    height: int
    time_base: tuple[int, int]
    codec: str
    pts_to_frame: dict[int, int] = field(default_factory=dict)

    @property
    def num_frames(self) -> int:
        return len(self.pts)

    def seconds(self, frame: int) -> float:
        """Frame `frame`'s time from the first frame's, as DALI computes it."""
        num, den = self.time_base
        return float(self.pts[frame] - self.pts[0]) * num / den

    def frame_by_timestamp(self, seconds: float, round_down: bool) -> int:
        """experimental.readers.video's file_list time -> frame, as DALI 2.4 (measured, and its
        FrameIndex search): `seconds` is a float32 (the list's numbers are), truncated to time-base
        ticks of the raw pts; the frame with exactly that pts, else the first one after it (the one
        before, rounding down). Past the last frame it is frame 0, as in DALI."""
        num, den = self.time_base
        ts = int(float(np.float32(seconds)) * den / num)
        for i, p in enumerate(self.pts):
            if p == ts:
                return i
            if p > ts:
                return i - 1 if round_down and i > 0 else i
        return 0

    def frame_at(self, seconds: float, round_up: bool) -> int:
        """The frame at `seconds` from the start: the first whose time is >= it (round_up), else
        the last whose time is <= it."""
        import bisect
        times = [self.seconds(k) for k in range(self.num_frames)]
        if round_up:
            return bisect.bisect_left(times, seconds - 1e-9)
        return max(0, bisect.bisect_right(times, seconds + 1e-9) - 1)


class Video:
    """One video file, opened for listing (`index()`) and decoding (`frames()`); `source` is a path
    or the file's bytes, `where` names it in errors."""

    def __init__(self, source: str | bytes | memoryview, where: str) -> None:
        self.source = source
        self.where = where
        self._index: VideoIndex | None = None

    # -- opening -------------------------------------------------------------------------------
    def _open(self) -> Any:
        av = _av()
        src: Any = self.source
        main = None
        if isinstance(src, str):
            try:
                st = os.stat(src)
            except OSError as e:
                raise VideoDataError(f"{self.where}: cannot open the video: {e.strerror or e}") from None
            if not stat.S_ISREG(st.st_mode):
                raise VideoDataError(f"{self.where}: not a regular file")
            # FFmpeg picks a protocol from a name's prefix: a relative "http://h/x.mp4" that is also
            # a local file (folders "http:", "h") passed the check above and was fetched over the
            # network ("concat:", "subfile,", "pipe:" likewise); an absolute path is always a file
            src = main = os.path.abspath(src)
        else:
            src = io.BytesIO(bytes(src))
        files: list[Any] = []
        try:
            container = _Opened(av.open(src, mode="r", io_open=_own_file_only(main, files)), files)
        except _OtherFile as e:
            _close_all(files)
            raise VideoDataError(f"{self.where}: the file refers to another file ({printable(e.url)[:200]}), "
                                 "as an HLS or DASH playlist does; a video is read from its own file "
                                 "only") from None
        except Exception as e:  # noqa: BLE001 - FFmpeg's errors, reported with the file
            _close_all(files)
            raise VideoDataError(f"{self.where}: not a video file FFmpeg can open ({_reason(e)})") from None
        if not container.streams.video:
            container.close()
            raise VideoDataError(f"{self.where}: the file has no video stream")
        return container

    @staticmethod
    def _stream(container: Any) -> Any:
        streams = container.streams.video
        best = container.streams.best("video") if hasattr(container.streams, "best") else None
        return best if best is not None else streams[0]

    # -- listing -------------------------------------------------------------------------------
    def index(self) -> VideoIndex:
        """The frames' timestamps and key frames, read from the packets (no decoding)."""
        if self._index is not None:
            return self._index
        container = self._open()
        try:
            stream = self._stream(container)
            w, h = int(stream.codec_context.width or 0), int(stream.codec_context.height or 0)
            self._check_size(w, h)
            tb = stream.time_base
            if tb is None or tb.numerator <= 0 or tb.denominator <= 0:
                raise VideoDataError(f"{self.where}: the video stream has no valid time base")
            entries: list[tuple[int, bool]] = []
            try:
                for packet in container.demux(stream):
                    if packet.size == 0 and packet.pts is None and packet.dts is None:
                        continue  # the demuxer's end-of-stream marker
                    ts = packet.pts if packet.pts is not None else packet.dts
                    if ts is None:
                        raise VideoDataError(f"{self.where}: a frame of the video has no timestamp")
                    if ts < 0:
                        continue
                    entries.append((int(ts), bool(packet.is_keyframe)))
                    if len(entries) > MAX_FRAMES:
                        raise VideoDataError(f"{self.where}: the video has more than {MAX_FRAMES} frames")
            except VideoDataError:
                raise
            except Exception as e:  # noqa: BLE001
                if not entries:
                    raise VideoDataError(f"{self.where}: cannot read the video's packets ({_reason(e)})") from None
                # a damaged tail: the frames before it are listed; decoding them reports what fails
            codec = str(stream.codec_context.name)
        finally:
            container.close()
        if not entries:
            raise VideoDataError(f"{self.where}: the video has no frames")
        entries.sort(key=lambda e: e[0])
        keys = [k for k, (_, key) in enumerate(entries) if key] or [0]
        last_key, j = [], 0
        for k in range(len(entries)):
            while j + 1 < len(keys) and keys[j + 1] <= k:
                j += 1
            last_key.append(keys[j] if keys[j] <= k else 0)
        pts = [e[0] for e in entries]
        self._index = VideoIndex(pts, last_key, w, h, (tb.numerator, tb.denominator), codec,
                                 {p: k for k, p in enumerate(pts)})
        return self._index

    def _check_size(self, w: int, h: int) -> None:
        if w <= 0 or h <= 0:
            raise VideoDataError(f"{self.where}: the video stream has no frame size")
        if w * h > MAX_FRAME_PIXELS:
            raise VideoDataError(f"{self.where}: frames of {w}x{h} pixels are larger than the limit "
                                 f"({MAX_FRAME_PIXELS} pixels)")

    # -- decoding ------------------------------------------------------------------------------
    def frames(self, wanted: Sequence[int], ycbcr: bool = False) -> dict[int, np.ndarray]:
        """Frames `wanted` (indices into `index()`, each in range) as HWC uint8 arrays."""
        ix = self.index()
        need = sorted(set(int(k) for k in wanted))
        if not need:
            return {}
        if need[0] < 0 or need[-1] >= ix.num_frames:
            raise VideoDataError(f"{self.where}: frame {need[-1] if need[-1] >= 0 else need[0]} is out of "
                                 f"range (the video has {ix.num_frames})")
        self._check_bytes(len(wanted), ix)
        got = self._decode(need, ycbcr, seek=True)
        if len(got) < len(need):  # timestamps that do not match the packets': count frames instead
            got = self._decode(need, ycbcr, seek=False)
        if len(got) < len(need):
            missing = [k for k in need if k not in got]
            raise VideoDataError(f"{self.where}: frame {missing[0]} could not be decoded (the file lists "
                                 f"{ix.num_frames} frames; it may be truncated or damaged)")
        return got

    def _check_bytes(self, count: int, ix: VideoIndex) -> None:
        if count * ix.width * ix.height * 3 > MAX_SAMPLE_BYTES:
            raise VideoDataError(f"{self.where}: {count} frames of {ix.width}x{ix.height} exceed the "
                                 f"limit of {MAX_SAMPLE_BYTES} bytes per sample")

    def _decode(self, need: list[int], ycbcr: bool, seek: bool) -> dict[int, np.ndarray]:
        av = _av()
        ix = self.index()
        wanted = set(need)
        out: dict[int, np.ndarray] = {}
        container = self._open()
        try:
            stream = self._stream(container)
            stream.thread_type = "SLICE"
            start = ix.keyframe[need[0]] if seek else 0
            if start > 0:
                try:
                    container.seek(ix.pts[start], stream=stream, backward=True, any_frame=False)
                except Exception:  # noqa: BLE001 - not seekable: decode from the start
                    container.close()
                    container = self._open()
                    stream = self._stream(container)
                    start = 0
            counter = 0
            last = need[-1]
            try:
                for frame in container.decode(stream):
                    if seek:
                        if frame.pts is None:
                            return out  # cannot place it: the caller counts frames instead
                        k = ix.pts_to_frame.get(int(frame.pts))
                        if k is None:
                            if frame.pts < 0:
                                continue
                            return out
                    else:
                        if frame.pts is not None and frame.pts < 0:
                            continue
                        k = counter
                        counter += 1
                    if k in wanted and k not in out:
                        if frame.width != ix.width or frame.height != ix.height:
                            self._check_size(frame.width, frame.height)
                            raise VideoDataError(
                                f"{self.where}: frame {k} is {frame.width}x{frame.height}, the stream "
                                f"{ix.width}x{ix.height} (videos whose frame size changes are not supported)")
                        out[k] = convert(frame, ycbcr, av)
                    if k >= last and len(out) == len(wanted):
                        break
            except VideoDataError:
                raise
            except Exception as e:  # noqa: BLE001 - FFmpeg's decoding errors
                raise VideoDataError(f"{self.where}: the video cannot be decoded ({_reason(e)})") from None
        finally:
            container.close()
        return out


class _OtherFile(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def _own_file_only(main: str | None, files: list[Any]) -> Any:
    """PyAV's `io_open`: every file FFmpeg opens goes through it, the video's own (`main`, a path;
    None for bytes) included. Only that one is opened (never blocking: a regular file only) and
    noted in `files`; any other is refused: an HLS playlist (.m3u8) or DASH manifest names segment
    files anywhere on the machine (`/x/secret.ts`, `../`), and FFmpeg's HLS demuxer read them as
    the video's frames, past file_list's confinement to its folder."""
    def io_open(url: str, flags: int, options: Any) -> Any:
        if main is None or url != main:
            raise _OtherFile(url)
        from .host_io import open_regular
        files.append(open(open_regular(main), "rb"))
        return files[-1]
    return io_open


def _close_all(files: list[Any]) -> None:
    for f in files:
        f.close()


class _Opened:
    """A PyAV container and the files its `io_open` opened: PyAV leaves those to the garbage
    collector (a ResourceWarning each), so `close()` closes them with the container."""

    def __init__(self, container: Any, files: list[Any]) -> None:
        self._container, self._files = container, files

    def __getattr__(self, name: str) -> Any:
        return getattr(self._container, name)

    def close(self) -> None:
        self._container.close()
        _close_all(self._files)


def convert(frame: Any, ycbcr: bool, av: Any = None) -> np.ndarray:
    """One decoded frame as HWC uint8: RGB, or YCbCr (4:4:4), converted as DALI converts it."""
    av = av or _av()
    if ycbcr:
        planes = frame.reformat(format="yuv444p", interpolation=_flags(av), src_colorspace="ITU601",
                                dst_colorspace="ITU601").to_ndarray()
        return np.ascontiguousarray(np.moveaxis(planes.reshape(3, frame.height, frame.width), 0, -1))
    return frame.reformat(format="rgb24", interpolation=_flags(av), src_colorspace="ITU601").to_ndarray()


def _reason(e: BaseException) -> str:
    msg = str(e).strip() or type(e).__name__
    return msg[:300]


# -- frame selection shared by the decoder and the readers ---------------------------------------

PAD_MODES = {"none": "none", "constant": "constant", "edge": "edge", "repeat": "edge",
             "reflect_1001": "reflect_1001", "symmetric": "reflect_1001", "reflect_101": "reflect_101",
             "reflect": "reflect_101"}


def boundary(frame: int, n: int, mode: str) -> int:
    """The frame that index `frame` of an n-frame video reads under pad mode `mode` (canonical
    name): itself when in range; -1 for a constant frame; a ValueError with 'none'."""
    if 0 <= frame < n:
        return frame
    if mode == "constant":
        return -1
    if mode == "edge":
        return min(max(frame, 0), n - 1)
    if mode == "reflect_101":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        k = frame % period
        return k if k < n else period - k
    if mode == "reflect_1001":
        period = 2 * n
        k = frame % period
        return k if k < n else period - 1 - k
    raise ValueError(f"frame {frame} is out of range (the video has {n} frames) and pad_mode is 'none'")
