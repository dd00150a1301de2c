"""What `fn.external_source` checks, as DALI 2.4 checks it (same error types and meaning; each
message names the source, the argument and the values involved).

* `accepted_arg_count`: a `source` callable takes 0 or 1 parameters, counted with their defaults;
  `*args`, `**kwargs` and keyword-only parameters are refused (TypeError), as DALI refuses them.
* `Consistency`: without the `dtype` / `ndim` / `layout` arguments, the first batch of an output
  fixes them and later batches (across `reset()` too) must keep them; a batch without a layout
  after one with a layout is a change, the other way round is not.
* `check_fed_ndim`: a layout given to feed_input must fit the fed samples, checked by feed_input.
* `check_uniform`: the samples of one batch share their element type and dimensionality.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError, DataError

_ARG_HELP = "a `source` callable takes no argument or one (the iteration or sample info)"


class LayoutNdimError(ArgumentError, RuntimeError):
    """`layout` and `ndim` disagree: an argument error that DALI raises as a RuntimeError at build."""


class FedDataError(DataError, RuntimeError):
    """Fed data that cannot make a batch (too many samples, mixed samples, no tensor): DALI raises
    it (a RuntimeError) from feed_input itself, not when the pipeline runs."""


class FeedWithSourceError(ArgumentError, RuntimeError):
    """feed_input on an external source that has a `source`: DALI 2.4 raises a RuntimeError."""


class FedLayoutError(FedDataError):
    """feed_input's layout cannot describe the fed samples (raised by feed_input, as in DALI)."""


def check_fed_ndim(where: str, raw: Any, layout: str | None) -> None:
    """Fed samples (a list of arrays, or one array with a leading batch dimension) against the
    layout given to feed_input; other batch types are checked when the pipeline runs."""
    if not layout:
        return
    def ndim(x: Any) -> Any:
        n = getattr(x, "ndim", None)
        return n if isinstance(n, int) else None

    if isinstance(raw, (list, tuple)):
        ndims = [n for n in map(ndim, raw) if n is not None]
    else:
        ndims = [ndim(raw) - 1] if ndim(raw) else []
    bad = next((n for n in ndims if n != len(layout)), None)
    if bad is not None:
        raise FedLayoutError(f"{where}: feed_input's layout {layout!r} is for {len(layout)}-dimensional samples, "
                             f"the fed samples have {bad} dimensions")


def check_uniform(where: str, tl: Any) -> None:
    """DALI 2.4 refuses a batch of samples of different element types or dimensionalities."""
    if tl.dense is not None or not tl.samples:
        return
    first = tl.samples[0]
    dtype, nd = first.dtype, first.dim()
    for i, s in enumerate(tl.samples):
        if s.dtype != dtype or s.dim() != nd:
            raise DataError(f"{where}: the samples of a batch share one element type and number of dimensions; "
                            f"sample {i} is {s.dtype} of shape {tuple(s.shape)}, sample 0 {dtype} of shape "
                            f"{tuple(first.shape)}")


def accepted_arg_count(source: Callable[..., Any]) -> int:
    """How many arguments `source` is called with (0 or 1); TypeError for any other signature.
    A callable whose signature cannot be read (some builtins) is called with none."""
    try:
        sig = inspect.signature(source)
    except (TypeError, ValueError):
        return 0
    name = getattr(source, "__name__", type(source).__name__)
    refused = {
        inspect.Parameter.VAR_POSITIONAL: "`*{}` (var-positional)",
        inspect.Parameter.VAR_KEYWORD: "`**{}` (var-keyword)",
        inspect.Parameter.KEYWORD_ONLY: "`{}` (keyword-only)",
    }
    for p in sig.parameters.values():
        if p.kind in refused:
            raise ArgumentTypeError(f"ExternalSource: `source` {name} has the parameter "
                                    f"{refused[p.kind].format(p.name)}; {_ARG_HELP}")
    n = len(sig.parameters)
    if n > 1:
        raise ArgumentTypeError(f"ExternalSource: `source` {name} has {n} parameters "
                                f"({', '.join(sig.parameters)}, defaults included); {_ARG_HELP}")
    return n


def dali_type_name(dtype: torch.dtype) -> str:
    """The name DALI's messages give an element type (`float`, `double`, `uint8`...)."""
    try:
        name = types.from_torch_dtype(dtype).key
    except KeyError:
        return str(dtype).removeprefix("torch.")
    return {"float32": "float", "float64": "double"}.get(name, name)


def check_layout_ndim(op: str, layout: str | None, ndim: int | None) -> None:
    if layout and ndim is not None and len(layout) != ndim:
        raise LayoutNdimError(
            f"{op}: `layout` {layout!r} has {len(layout)} dimensions, but `ndim` is {ndim}")


class Consistency:
    """Per output: the element type, dimensionality and layout its batches must have."""

    def __init__(self, dtype: torch.dtype | None, ndim: int | None, layout: str | None) -> None:
        self.dtype_arg, self.ndim_arg, self.layout_arg = dtype, ndim, layout or ""
        self.dtype: torch.dtype | None = None
        self.ndim: int | None = None
        self.layout = ""

    def check_fed_layout(self, where: str, fed: str | None) -> None:
        if self.layout_arg and fed and fed != self.layout_arg:
            raise DataError(f"{where}: the batch was fed with layout {fed!r}, the `layout` argument is "
                            f"{self.layout_arg!r}")

    def check_sample(self, where: str, s: torch.Tensor, nd: int, layout: str) -> None:
        """One sample (or a dense batch, `nd` its sample dimensionality) of this iteration."""
        if self.dtype_arg is not None and s.dtype != self.dtype_arg:
            raise DataError(f"{where}: the data are {dali_type_name(s.dtype)} ({s.dtype}), the `dtype` "
                            f"argument is {dali_type_name(self.dtype_arg)} ({self.dtype_arg})")
        if self.ndim_arg is not None and nd != self.ndim_arg:
            raise DataError(f"{where}: the data have {nd} dimensions (shape "
                            f"{tuple(s.shape)[-nd:] if nd else ()}), the `ndim` argument is {self.ndim_arg}")
        if layout and nd != len(layout):
            raise DataError(f"{where}: layout {layout!r} needs {len(layout)} dimensions, got {nd}")

    def check_iteration(self, where: str, dtype: torch.dtype, nd: int, layout: str) -> None:
        """The batch as a whole, against the earlier iterations; then remembered."""
        if self.dtype_arg is None and self.dtype is not None and dtype != self.dtype:
            raise DataError(f"{where}: this batch is {dali_type_name(dtype)}, the earlier ones were "
                            f"{dali_type_name(self.dtype)}; an external source's element type stays what its "
                            "first batch had (give `dtype` to state it, or convert the data)")
        if self.ndim_arg is None and not self.layout_arg and self.ndim is not None and nd != self.ndim:
            raise DataError(f"{where}: this batch's samples have {nd} dimensions, the earlier batches' "
                            f"{self.ndim}; an external source's dimensionality stays what its first batch had")
        if not self.layout_arg and self.layout and layout != self.layout:
            raise DataError(f"{where}: this batch's layout is {layout!r}, the earlier batches' "
                            f"{self.layout!r}; without the `layout` argument, the first layout seen stays")
        self.dtype, self.ndim, self.layout = dtype, nd, layout
