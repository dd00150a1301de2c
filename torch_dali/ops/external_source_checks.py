"""What `fn.external_source` checks, as DALI 2.4 checks it (messages contain DALI's wording, so
code matching DALI's errors keeps working, followed by torch_dali's explanation).

* `accepted_arg_count`: a `source` callable takes 0 or 1 parameters, counted with their defaults;
  `*args`, `**kwargs` and keyword-only parameters are refused (TypeError), as DALI refuses them.
* `Consistency`: without the `dtype` / `ndim` / `layout` arguments, the first batch of an output
  fixes them and later batches (across `reset()` too) must keep them; a batch without a layout
  after one with a layout is a change, the other way round is not.
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


def accepted_arg_count(source: Callable[..., Any]) -> int:
    """How many arguments `source` is called with (0 or 1); TypeError for any other signature.
    A callable whose signature cannot be read (some builtins) is called with none."""
    try:
        sig = inspect.signature(source)
    except (TypeError, ValueError):
        return 0
    refused = {
        inspect.Parameter.VAR_POSITIONAL: "Found var-positional argument `*{}` which is not allowed.",
        inspect.Parameter.VAR_KEYWORD: "Found var-keyword argument `**{}` which is not allowed.",
        inspect.Parameter.KEYWORD_ONLY: "Found keyword-only argument `{}` which is not allowed.",
    }
    for p in sig.parameters.values():
        if p.kind in refused:
            raise ArgumentTypeError(f"ExternalSource: {_ARG_HELP}. " + refused[p.kind].format(p.name))
    n = len(sig.parameters)
    if n > 1:
        raise ArgumentTypeError(f"ExternalSource: {_ARG_HELP}. Found more than one positional argument, "
                                f"which is not allowed. ({getattr(source, '__name__', type(source).__name__)} "
                                f"has {n} parameters, defaults included.)")
    return n


def dali_type_name(dtype: torch.dtype) -> str:
    """The name DALI's messages give an element type (`float`, `double`, `uint8`...)."""
    try:
        name = types.from_torch_dtype(dtype).value
    except KeyError:
        return str(dtype).removeprefix("torch.")
    return {"float32": "float", "float64": "double"}.get(name, name)


def check_layout_ndim(op: str, layout: str | None, ndim: int | None) -> None:
    if layout and ndim is not None and len(layout) != ndim:
        raise LayoutNdimError(
            f"{op}: Number of dimensions in the provided layout does not match the ndim argument. "
            f'The arguments provided:\n ndim = {ndim},\n layout: "{layout}". (layout {layout!r} has '
            f"{len(layout)} dimensions)")


class Consistency:
    """Per output: the element type, dimensionality and layout its batches must have."""

    def __init__(self, dtype: torch.dtype | None, ndim: int | None, layout: str | None) -> None:
        self.dtype_arg, self.ndim_arg, self.layout_arg = dtype, ndim, layout or ""
        self.dtype: torch.dtype | None = None
        self.ndim: int | None = None
        self.layout = ""

    def check_fed_layout(self, where: str, fed: str | None) -> None:
        if self.layout_arg and fed and fed != self.layout_arg:
            raise DataError(f'{where}: Expected data with layout: "{self.layout_arg}" and got: "{fed}" '
                            f"(the batch was fed with layout {fed!r}, the `layout` argument is "
                            f"{self.layout_arg!r})")

    def check_sample(self, where: str, s: torch.Tensor, nd: int, layout: str) -> None:
        """One sample (or a dense batch, `nd` its sample dimensionality) of this iteration."""
        if self.dtype_arg is not None and s.dtype != self.dtype_arg:
            raise DataError(f"{where}: ExternalSource expected data of type {dali_type_name(self.dtype_arg)} "
                            f"and got: {dali_type_name(s.dtype)} (the `dtype` argument is "
                            f"{self.dtype_arg}, the data are {s.dtype})")
        if self.ndim_arg is not None and nd != self.ndim_arg:
            raise DataError(f"{where}: ExternalSource expected data with {self.ndim_arg} dimensions and "
                            f"got {nd} dimensions (the `ndim` argument; shape {tuple(s.shape)[-nd:] if nd else ()})")
        if layout and nd != len(layout):
            raise DataError(f"{where}: layout {layout!r} needs {len(layout)} dimensions, got {nd}")

    def check_iteration(self, where: str, dtype: torch.dtype, nd: int, layout: str) -> None:
        """The batch as a whole, against the earlier iterations; then remembered."""
        if self.dtype_arg is None and self.dtype is not None and dtype != self.dtype:
            raise DataError(f"{where}: Type of the data fed to the external source has changed from the "
                            f"previous iteration. Type in the previous iteration was "
                            f"{dali_type_name(self.dtype)} and the current type is {dali_type_name(dtype)}. "
                            "(Give `dtype` to state the type, or convert the data.)")
        if self.ndim_arg is None and not self.layout_arg and self.ndim is not None and nd != self.ndim:
            raise DataError(f"{where}: Number of dimensions of the data fed to the external source has "
                            f"changed from previous iteration. Dimensionality in the previous iteration "
                            f"was {self.ndim} and the current is {nd}.")
        if not self.layout_arg and self.layout and layout != self.layout:
            raise DataError(f"{where}: Layout of the data fed to the external source has changed from "
                            f'previous iteration. Layout in the previous iteration was "{self.layout}" '
                            f'and the current is "{layout}".')
        self.dtype, self.ndim, self.layout = dtype, nd, layout
