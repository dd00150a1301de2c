"""`ndd.ExternalSource`: data pulled from a Python callable or iterable, one call at a time, as
Tensors (or Batches, when the source gives batches or a `batch_size` is asked for)."""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ...tensor_list import TensorList
from . import _data

_CYCLES = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet", "raise": "raise"}


def _per_output(value: Any, n: int, what: str, is_one: Any) -> list[Any]:
    if value is None or is_one(value):
        return [value] * n
    if not isinstance(value, Sequence) or len(value) != n:
        size = len(value) if isinstance(value, Sequence) else "?"
        raise ValueError(f"ExternalSource: {what} must be one value or, with num_outputs={n}, "
                         f"expected a sequence of size {n} (got {size})")
    return list(value)


def _is_batch_like(x: Any) -> bool:
    return isinstance(x, (_data.Batch, TensorList))


class ExternalSource:
    """Pulls the next element of `source` at each call (`es()`): a callable taking no arguments
    is called, an iterable (or a generator function) is iterated. Each element is one sample (a
    Tensor), a batch (an `ndd.Batch` or TensorList: a Batch), or with `num_outputs > 1` a tuple
    of them. `es(batch_size=n)` broadcasts a sample to a Batch of `n` and checks a batch's size.
    `cycle` ("no"/False/None, "quiet"/True, "raise") says what an iterable does at its end."""

    def __init__(self, source: Any, num_outputs: int = 1, *, cycle: Any = None, device: Any = "cpu",
                 layout: Any = None, dtype: Any = None) -> None:
        if cycle not in _CYCLES:
            raise ValueError(f"ExternalSource: cycle must be 'no', 'quiet', 'raise' or a bool, got {cycle!r}")
        if int(num_outputs) < 1:
            raise ValueError(f"ExternalSource: num_outputs must be positive, got {num_outputs}")
        self._num_outputs = int(num_outputs)
        self._cycle = _CYCLES[cycle]
        self._device = device
        self._layouts = _per_output(layout, self._num_outputs, "layout", lambda v: isinstance(v, str))
        self._dtypes = _per_output(dtype, self._num_outputs, "dtype",
                                   lambda v: isinstance(v, str) or not isinstance(v, Sequence))
        self._factory: Any = None  # a generator function: called for each pass
        self._iterable: Any = None
        self._callable: Any = None
        if inspect.isgeneratorfunction(source):
            self._factory = source
        elif callable(source) and not hasattr(source, "__iter__"):
            try:
                params = inspect.signature(source).parameters.values()
            except (TypeError, ValueError):
                params = []
            if any(p.default is inspect.Parameter.empty
                   and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
                raise ValueError("ExternalSource: a callable source must take no parameters (DALI's dynamic "
                                 "mode calls it as source())")
            if self._cycle != "no":
                raise ValueError("ExternalSource: cycle applies to iterable sources only, not to a callable")
            self._callable = source
        elif hasattr(source, "__iter__"):
            self._iterable = source
        else:
            raise TypeError(f"ExternalSource: the source must be callable or iterable, got {type(source).__name__}")
        self._it: Any = None

    def _fresh(self) -> Any:
        if self._factory is not None:
            return self._factory()
        return iter(self._iterable)

    def _pull(self) -> Any:
        if self._callable is not None:
            return self._callable()
        if self._it is None:
            self._it = self._fresh()
        try:
            return next(self._it)
        except StopIteration:
            if self._cycle == "no":
                raise
            self._it = self._fresh()
            if self._cycle == "raise":
                raise
            return next(self._it)

    def _convert(self, x: Any, i: int, batch_size: int | None) -> Any:
        dt, lay = self._dtypes[i], self._layouts[i]
        if _is_batch_like(x):
            b = _data.as_batch(x, dtype=dt, device=self._device, layout=lay)
            if batch_size is not None and b.batch_size != batch_size:
                raise ValueError(f"ExternalSource: the source gave a batch of {b.batch_size} samples, "
                                 f"expected batch size {batch_size}")
            return b
        t = _data.as_tensor(x, dtype=dt, device=self._device, layout=lay)
        return t if batch_size is None else _data.Batch.broadcast(t, batch_size)

    def __call__(self, *, batch_size: int | None = None) -> Any:
        data = self._pull()
        if self._num_outputs == 1:
            return self._convert(data, 0, batch_size)
        if not isinstance(data, (tuple, list)) or len(data) != self._num_outputs:
            got = len(data) if isinstance(data, (tuple, list)) else 1
            raise ValueError(f"ExternalSource: the source gave {got} output(s), expected "
                             f"{self._num_outputs} outputs")
        return tuple(self._convert(x, i, batch_size) for i, x in enumerate(data))
