"""DALI's sample classes, `TensorCPU` and `TensorGPU`: what `out[i]` of a `Pipeline.run()` batch is.

Each is a torch tensor (a view of the batch, no copy) that also answers DALI's calls: `as_cpu()`,
`source_info()`, `layout()` and `shape()` (callable, where torch has attributes of those names),
`copy_to_external`, `reinterpret`. The batches that hand them out are in `tensor_list`.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import torch

from .errors import ArgumentError
from .tensor_input import from_user, reinterpreted


def copy_to(t: torch.Tensor, ptr: Any) -> None:
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    address = ptr if isinstance(ptr, int) else ctypes.cast(ptr, ctypes.c_void_p).value
    if not address:
        raise ArgumentError("copy_to_external: the destination pointer is null")
    ctypes.memmove(address, t.data_ptr(), t.numel() * t.element_size())


class _Shape(tuple):
    """A sample's shape: a tuple (compares equal to torch.Size) that can also be called, as DALI's
    `shape()` is (it then gives a list)."""

    def __call__(self) -> list[int]:
        return list(self)

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


class _Layout:
    """A sample's `layout`: torch's layout attribute (compares and hashes as `torch.strided` does)
    that can also be called, as DALI's `layout()` is (it then gives the DALI layout string)."""

    __slots__ = ("torch_layout", "dali")

    def __init__(self, torch_layout: torch.layout, dali: str) -> None:
        self.torch_layout = torch_layout
        self.dali = dali

    def __call__(self) -> str:
        return self.dali

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Layout):
            return self.torch_layout == other.torch_layout
        return self.torch_layout == other

    def __hash__(self) -> int:
        return hash(self.torch_layout)

    def __repr__(self) -> str:
        return repr(self.torch_layout)


class TensorCPU(torch.Tensor):
    """A sample as `out[i]` gives it: a torch tensor (views the batch, no copy) with DALI's
    `as_cpu()`, `source_info()` and a callable `shape` (`t.shape()` is DALI's list, `t.shape` torch's)
    and `layout` (`t.layout()` is DALI's layout string, `t.layout` compares as torch's). `dtype` is
    torch's (it compares equal to DALI's `types.X` of the same name).
    Results of torch ops on it are plain torch tensors."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __new__(cls, data: Any = None, layout: str | None = None) -> "TensorCPU":
        t = torch.empty(0) if data is None else from_user(data, cls.__name__)
        out = t.as_subclass(cls)
        if layout and len(layout) != out.dim():
            raise ArgumentError(f"{cls.__name__}: layout {layout!r} has {len(layout)} dimensions, the data "
                                f"have {out.dim()}")
        out._dali_layout = layout or ""
        return out

    def dali_layout(self) -> str:
        """DALI's `layout()` of this sample: the layout of the batch it came from ("" if none);
        `layout` stays torch's attribute."""
        return getattr(self, "_dali_layout", "")

    @property  # type: ignore[override]
    def shape(self) -> _Shape:
        return _Shape(torch.Tensor.shape.__get__(self))

    @property  # type: ignore[override]
    def layout(self) -> _Layout:
        """`t.layout == torch.strided` as in torch; `t.layout()` is DALI's layout string (as `dali_layout()`).
        Pass `t.layout.torch_layout` where torch wants a real `torch.layout` argument."""
        return _Layout(torch.Tensor.layout.__get__(self), self.dali_layout())

    def as_cpu(self) -> "TensorCPU":
        if self.device.type == "cpu":
            return self
        out = with_layout(self.cpu(), TensorCPU, self.dali_layout())
        out._source_info = self.source_info()  # type: ignore[attr-defined]
        return out

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy's description of a host sample's memory (DALI's samples have one); absent (an
        AttributeError, so NumPy uses `__array__`) for device data and types NumPy lacks."""
        try:
            return self.as_subclass(torch.Tensor).detach().numpy().__array_interface__
        except (RuntimeError, TypeError):
            raise AttributeError("__array_interface__") from None

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        t = self.as_subclass(torch.Tensor)
        a = (t if t.dtype != torch.bfloat16 else t.float()).numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __deepcopy__(self, memo: dict[int, Any]) -> "TensorCPU":
        """A copy of the data, of the same class, with its layout and source_info (torch's default
        deep copy needs `new_empty` to keep the subclass)."""
        out = with_layout(self.as_subclass(torch.Tensor).clone(), type(self), self.dali_layout())
        if hasattr(self, "_source_info"):
            out._source_info = self._source_info  # type: ignore[attr-defined]
        memo[id(self)] = out
        return out

    def source_info(self) -> str:
        """The file or record this sample was read from (a reader's output and what was made from
        it); "" for data that came from no reader."""
        return getattr(self, "_source_info", "")

    def copy_to_external(self, ptr: Any, *args: Any, **kwargs: Any) -> None:
        copy_to(self, ptr)

    def reinterpret(self, dtype: Any) -> None:
        """DALI's `reinterpret`: this sample's bytes, in place, as elements of `dtype` of the same size."""
        self.data = reinterpreted(self.as_subclass(torch.Tensor), dtype)

    def get_property(self, key: str) -> str | None:
        """DALI's sample properties by name: "layout", "source_info" (None where unset or unknown)."""
        value = {"layout": self.dali_layout(), "source_info": self.source_info()}.get(key)
        return value or None

    def set_layout(self, layout: str | None) -> None:
        if layout and len(layout) != self.dim():
            raise ArgumentError(f"set_layout: layout {layout!r} has {len(layout)} dimensions, the sample {self.dim()}")
        self._dali_layout = layout or ""

    def _as_gpu(self) -> "TensorGPU":
        """DALI's copy to the device (the data stay on the host without CUDA, as TensorListGPU's)."""
        t = self.as_subclass(torch.Tensor)
        return with_layout(t.cuda() if torch.cuda.is_available() else t, TensorGPU, self.dali_layout())


class TensorGPU(TensorCPU):
    """A device sample as `out[i]` gives it; `as_cpu()` copies it to the host."""

    def as_cpu(self) -> TensorCPU:
        out = with_layout(self.cpu(), TensorCPU, self.dali_layout())
        out._source_info = self.source_info()  # type: ignore[attr-defined]
        return out

    def device_id(self) -> int:
        return int(self.device.index or 0) if self.is_cuda else 0


def with_layout(t: torch.Tensor, cls: type[TensorCPU], layout: str, source_info: str | None = None) -> TensorCPU:
    """`t` as a sample of class `cls` (no copy) with DALI's layout string and, given, its source."""
    out = t.as_subclass(cls)
    out._dali_layout = layout
    if source_info is not None:
        out._source_info = source_info  # type: ignore[attr-defined]
    return out
