"""What `fn.external_source` checks, as DALI 2.4 checks it (same error types and meaning; each
message holds DALI's sentence, which DALI code may search for, and names the source, the argument
and the values involved).

* `accepted_arg_count`: a `source` callable takes 0 or 1 parameters, counted with their defaults;
  `*args`, `**kwargs` and keyword-only parameters are refused (TypeError), as DALI refuses them.
* `Consistency`: without the `dtype` / `ndim` / `layout` arguments, the first batch of an output
  fixes them and later batches (across `reset()` too) must keep them; a batch without a layout
  after one with a layout is a change, the other way round is not.
* `check_fed_ndim`: a layout given to feed_input must fit the fed samples, checked by feed_input.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError, DataError

# DALI's sentence opening every refusal of a `source` signature
_ARG_HELP = ("The `source` callable must accept either 0 or 1 positional arguments to indicate whether it "
             "accepts the batch or sample indexing information.")


class LayoutNdimError(ArgumentError, RuntimeError):
    """`layout` and `ndim` disagree: an argument error that DALI raises as a RuntimeError at build."""


class FedLayoutError(DataError, RuntimeError):
    """feed_input's layout cannot describe the fed samples: DALI raises it (a RuntimeError) from
    feed_input itself, not when the pipeline runs."""


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
        raise FedLayoutError(f"{where}: The layout '{layout}' cannot describe {bad}-dimensional data (it names "
                             f"{len(layout)} dimensions)")


def accepted_arg_count(source: Callable[..., Any]) -> int:
    """How many arguments `source` is called with (0 or 1); TypeError for any other signature.
    A callable whose signature cannot be read (some builtins) is called with none."""
    try:
        sig = inspect.signature(source)
    except (TypeError, ValueError):
        return 0
    name = getattr(source, "__name__", type(source).__name__)
    refused = {
        inspect.Parameter.VAR_POSITIONAL: "var-positional argument `*{}`",
        inspect.Parameter.VAR_KEYWORD: "var-keyword argument `**{}`",
        inspect.Parameter.KEYWORD_ONLY: "keyword-only argument `{}`",
    }
    for p in sig.parameters.values():
        if p.kind in refused:
            raise ArgumentTypeError(f"ExternalSource: `source` {name}: {_ARG_HELP} Found "
                                    f"{refused[p.kind].format(p.name)} which is not allowed.")
    n = len(sig.parameters)
    if n > 1:
        raise ArgumentTypeError(f"ExternalSource: `source` {name}: {_ARG_HELP} Found more than one positional "
                                f"argument, which is not allowed. It has {n} parameters ({', '.join(sig.parameters)}, "
                                "defaults included).")
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
            f"{op}: Number of dimensions in the provided layout does not match the ndim argument. The arguments "
            f'provided:\n ndim = {ndim},\n layout: "{layout}". (`layout` has {len(layout)} dimensions.)')


class Consistency:
    """Per output: the element type, dimensionality and layout its batches must have."""

    def __init__(self, dtype: torch.dtype | None, ndim: int | None, layout: str | None) -> None:
        self.dtype_arg, self.ndim_arg, self.layout_arg = dtype, ndim, layout or ""
        self.dtype: torch.dtype | None = None
        self.ndim: int | None = None
        self.layout = ""

    def check_fed_layout(self, where: str, fed: str | None) -> None:
        if self.layout_arg and fed and fed != self.layout_arg:
            raise DataError(f'{where}: Expected data with layout: "{self.layout_arg}" and got: "{fed}". (The '
                            "`layout` argument and the layout given to feed_input differ.)")

    def check_sample(self, where: str, s: torch.Tensor, nd: int, layout: str) -> None:
        """One sample (or a dense batch, `nd` its sample dimensionality) of this iteration."""
        if self.dtype_arg is not None and s.dtype != self.dtype_arg:
            raise DataError(f"{where}: ExternalSource expected data of type {dali_type_name(self.dtype_arg)} and "
                            f"got: {dali_type_name(s.dtype)} (the `dtype` argument is {self.dtype_arg}, the data "
                            f"{s.dtype})")
        if self.ndim_arg is not None and nd != self.ndim_arg:
            raise DataError(f"{where}: ExternalSource expected data with {self.ndim_arg} dimensions and got {nd} "
                            f"dimensions (shape {tuple(s.shape)[-nd:] if nd else ()}; the `ndim` argument is "
                            f"{self.ndim_arg}).")
        if layout and nd != len(layout):
            raise DataError(f"{where}: The layout '{layout}' cannot describe {nd}-dimensional data (it names "
                            f"{len(layout)} dimensions)")

    def check_iteration(self, where: str, dtype: torch.dtype, nd: int, layout: str) -> None:
        """The batch as a whole, against the earlier iterations; then remembered."""
        if self.dtype_arg is None and self.dtype is not None and dtype != self.dtype:
            raise DataError(f"{where}: Type of the data fed to the external source has changed from the previous "
                            f"iteration. Type in the previous iteration was {dali_type_name(self.dtype)} and the "
                            f"current type is {dali_type_name(dtype)}. An external source's element type stays what "
                            "its first batch had (give `dtype` to state it, or convert the data).")
        if self.ndim_arg is None and not self.layout_arg and self.ndim is not None and nd != self.ndim:
            raise DataError(f"{where}: Number of dimensions of the data fed to the external source has changed "
                            f"from previous iteration. Dimensionality in the previous iteration was {self.ndim} "
                            f"and the current is {nd}. An external source's dimensionality stays what its first "
                            "batch had.")
        if not self.layout_arg and self.layout and layout != self.layout:
            raise DataError(f"{where}: Layout of the data fed to the external source has changed from previous "
                            f'iteration. Layout in the previous iteration was "{self.layout}" and the current is '
                            f'"{layout}". Without the `layout` argument, the first layout seen stays.')
        self.dtype, self.ndim, self.layout = dtype, nd, layout
