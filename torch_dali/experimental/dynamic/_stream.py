"""CUDA streams of the dynamic mode (DALI 2.4's `ndd.Stream`, `ndd.stream()`, the default and current
streams). A `Stream` wraps a torch stream: one made for it, a torch stream, an object exposing
`__cuda_stream__`, or a raw handle (as an `ExternalStream`). GPU ops of an `EvalContext` that has a
stream run on it (`run_on`); with none set they run on torch's current stream."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

import torch

__all__ = ["Stream", "stream", "get_default_stream", "set_default_stream", "get_current_stream",
           "set_current_stream"]


def _needs_cuda(what: str) -> None:
    if not torch.cuda.is_available():
        raise RuntimeError(f"ndd.{what}: CUDA streams need a CUDA device, and none is available")


def _torch_stream(obj: Any, device_id: int | None) -> torch.cuda.Stream:
    """A torch stream for a torch stream, an object with `__cuda_stream__` or a raw handle."""
    if isinstance(obj, torch.cuda.Stream):  # ExternalStream is one too
        return obj
    if hasattr(obj, "__cuda_stream__"):
        obj = obj.__cuda_stream__()[1]
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise TypeError(f"ndd.stream: expected a stream (torch's, one with __cuda_stream__, or a raw "
                        f"handle), got {type(obj).__name__}")
    device = torch.cuda.current_device() if device_id is None else device_id
    return torch.cuda.ExternalStream(obj, device=device)


class Stream:
    """A CUDA stream for the dynamic mode's GPU ops; make one with `ndd.stream()`."""

    create_new = object()

    def __init__(self, *, stream: Any = create_new, device_id: int | None = None) -> None:
        if stream is None:
            raise ValueError("ndd.Stream: stream=None names no stream (leave it out to make a new one)")
        _needs_cuda("Stream")
        if isinstance(stream, Stream):
            self._check_device(device_id, stream.device_id)
            self._obj, self._torch = stream._obj, stream._torch
        elif stream is Stream.create_new:
            dev = torch.cuda.current_device() if device_id is None else int(device_id)
            self._torch = torch.cuda.Stream(device=dev)
            self._obj = self._torch
        else:
            self._torch = _torch_stream(stream, device_id)
            self._check_device(device_id, self._torch.device.index)
            self._obj = stream  # held, so the wrapped object lives as long as this
        self._device_id = int(self._torch.device.index)

    @staticmethod
    def _check_device(asked: int | None, found: int | None) -> None:
        if asked is not None and found is not None and int(asked) != int(found):
            raise ValueError(f"ndd.Stream: device_id={asked} but the stream is on device {found}")

    @property
    def handle(self) -> int:
        """The raw cudaStream_t, as an integer."""
        return int(self._torch.cuda_stream)

    @property
    def device_id(self) -> int:
        return self._device_id

    @property
    def torch_stream(self) -> torch.cuda.Stream:
        return self._torch

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def __str__(self) -> str:
        return f"CUDA stream {self.handle}, device_id={self.device_id}"

    def __repr__(self) -> str:
        return f"Stream(handle={self.handle}, device_id={self.device_id})"

    def __eq__(self, other: Any) -> bool:
        if other is None:
            return False
        if other is self:
            return True
        try:
            o = stream(stream=other)
        except (TypeError, ValueError):
            return NotImplemented
        return o is not None and (o.handle, o.device_id) == (self.handle, self.device_id)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def stream(*, stream: Any = Stream.create_new, device_id: int | None = None) -> Stream | None:
    """A new stream (on `device_id`, else the current device), or `stream` wrapped; None gives None."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        Stream._check_device(device_id, stream.device_id)
        return stream
    return Stream(stream=stream, device_id=device_id)


_defaults: dict[int, Stream] = {}


def set_default_stream(cuda_stream: Any, /, device_id: int | None = None) -> None:
    """The stream the ops of contexts without one use on a device (None clears it)."""
    s = stream(stream=cuda_stream, device_id=device_id) if cuda_stream is not None else None
    if s is not None:
        _defaults[s.device_id if device_id is None else int(device_id)] = s
    elif device_id is not None:
        _defaults.pop(int(device_id), None)
    elif torch.cuda.is_available():
        _defaults.pop(torch.cuda.current_device(), None)


def get_default_stream(device_id: int | None = None) -> Stream | None:
    if not _defaults:
        return None
    return _defaults.get(torch.cuda.current_device() if device_id is None else int(device_id))


_thread = threading.local()


def set_current_stream(cuda_stream: Any, /) -> None:
    """The stream of this thread's default context, and of contexts it makes after this without
    one (None: back to the default stream)."""
    from ._eval import EvalContext

    dev = EvalContext.default().device_id
    _thread.stream = stream(stream=cuda_stream, device_id=dev) if cuda_stream is not None else None


def thread_stream() -> Stream | None:
    """What `set_current_stream` set in this thread."""
    return getattr(_thread, "stream", None)


def get_current_stream() -> Stream | None:
    from ._eval import EvalContext

    return EvalContext.default().cuda_stream


@contextlib.contextmanager
def run_on(s: Stream | None) -> Iterator[None]:
    """Runs the block's CUDA work on `s` (nothing changes for None or torch's current stream). `s`
    first waits for the work queued on the current stream (the inputs), and the current stream then
    waits for `s`, so torch code after the op reads finished results."""
    if s is None:
        yield
        return
    here = torch.cuda.current_stream(s.device_id)
    if s.torch_stream == here:
        yield
        return
    s.torch_stream.wait_stream(here)
    with torch.cuda.stream(s.torch_stream):
        yield
    here.wait_stream(s.torch_stream)
