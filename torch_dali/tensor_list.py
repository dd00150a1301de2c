"""TensorList: one batch of one pipeline output, a torch tensor per sample (or one dense tensor).

`TensorList` is what ops and the executor pass around (`tl[i]` is a torch tensor). What
`Pipeline.run()` hands the user are DALI's classes, `TensorListCPU` / `TensorListGPU`: the same
batch (no copy), whose samples (`out[i]`) are `TensorCPU` / `TensorGPU` with DALI's methods
(`shape()`, `layout()`, `as_cpu()`, `np.array(out[i])`, DLPack). `as_tensor()` and `samples`
give torch tensors on every class.
"""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np
import torch

from . import types
from .errors import ArgumentError, ArgumentTypeError


def _from_user(x: Any, where: str) -> torch.Tensor:
    """One array-like (NumPy, torch, DLPack, TensorCPU, scalar) as a torch tensor, sharing memory
    where it can (read-only NumPy arrays are copied: torch tensors are writable)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, _Tensor):
        return x._t
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise ArgumentTypeError(f"{where}: got a NumPy array of Python objects; give numbers")
        if not x.flags.writeable:
            x = x.copy()
        try:
            return torch.from_numpy(x)
        except (TypeError, ValueError):  # negative strides
            return torch.from_numpy(np.ascontiguousarray(x).copy())
    if isinstance(x, (bool, int, float, np.generic)):
        return torch.from_numpy(np.asarray(x))
    if hasattr(x, "__dlpack__"):
        return torch.from_dlpack(x)
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return _from_user(np.asarray(x), where)
    raise ArgumentTypeError(f"{where}: cannot make a tensor out of {type(x).__name__}")


class TensorList:
    """A batch held as torch tensors. `at(i)` gives NumPy on the CPU and a torch tensor on the GPU.

    When every sample has the same shape the batch may be backed by one dense tensor
    (`as_tensor()` is then free and DLPack export is zero-copy).
    """

    def __init__(self, samples: Sequence[torch.Tensor] | torch.Tensor, layout: str = "") -> None:
        if isinstance(samples, torch.Tensor):
            self._dense: torch.Tensor | None = samples
            self._samples: list[torch.Tensor] | None = None
        else:
            self._dense = None
            self._samples = list(samples)
        self._layout = layout or ""

    # -- construction helpers -------------------------------------------------------------
    @property
    def samples(self) -> list[torch.Tensor]:
        if self._samples is None:
            self._samples = list(self._dense.unbind(0)) if self._dense is not None else []
        return self._samples

    @property
    def device(self) -> torch.device:
        if self._dense is not None:
            return self._dense.device
        return self._samples[0].device if self._samples else torch.device("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    # -- DALI's API ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._dense.shape[0]) if self._dense is not None else len(self._samples or [])

    def __getitem__(self, i: int) -> Any:
        return self.samples[i]

    def __iter__(self):
        return iter(self.samples)

    def at(self, i: int) -> Any:
        """Sample `i`: a NumPy array for CPU batches (as DALI), a torch tensor for GPU batches."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"TensorList.at: index {i} out of range for a batch of {len(self)}")
        t = self.samples[i]
        if t.device.type == "cpu":
            return t.numpy() if t.dtype != torch.bfloat16 else t.float().numpy()
        return t

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        layout = layout or ""
        if layout and any(t.dim() != len(layout) for t in self.samples):
            raise ArgumentError(f"set_layout: layout {layout!r} has {len(layout)} dimensions, the samples "
                                f"have {sorted({t.dim() for t in self.samples})}")
        self._layout = layout

    def shape(self) -> list[tuple[int, ...]]:
        return [tuple(t.shape) for t in self.samples]

    @property
    def dtype(self) -> types.DALIDataType:
        """The element type, as DALI names it (`types.UINT8`)."""
        if self._dense is not None:
            return types.from_torch_dtype(self._dense.dtype)
        return types.from_torch_dtype(self.samples[0].dtype) if self.samples else types.NO_TYPE

    def ndim(self) -> int:
        """Dimensions of a sample (DALI's `ndim()`)."""
        if self._dense is not None:
            return self._dense.dim() - 1
        return self.samples[0].dim() if self.samples else 0

    def is_dense_tensor(self) -> bool:
        if self._dense is not None:
            return True
        s = self.samples
        return all(t.shape == s[0].shape for t in s)

    def as_tensor(self) -> torch.Tensor:
        """The batch as one tensor with a leading batch dimension (samples must share a shape)."""
        if self._dense is None:
            if not self.is_dense_tensor():
                raise ArgumentError(
                    "TensorList.as_tensor: samples have different shapes "
                    f"({sorted(set(self.shape()))[:3]}...); pad or crop them to one shape first")
            self._dense = torch.stack(self.samples) if self.samples else torch.empty(0)
        return self._dense

    def as_reshaped_tensor(self, shape: Sequence[int]) -> torch.Tensor:
        """The batch as one tensor of `shape` (its element count must match)."""
        return self.as_tensor().reshape([int(s) for s in shape])

    def as_cpu(self) -> "TensorList":
        if self.device.type == "cpu":
            return self
        data = self._dense.cpu() if self._dense is not None else [t.cpu() for t in self.samples]
        return _cpu_class(type(self))(data, self._layout)

    asCPU = as_cpu  # DALI's legacy spelling

    def as_array(self) -> np.ndarray:
        return self.as_cpu().as_tensor().numpy()

    def data_ptr(self) -> int:
        """Address of the dense batch (DALI's `data_ptr()`; samples must share a shape)."""
        return int(self.as_tensor().data_ptr())

    def copy_to_external(self, ptr: Any, *args: Any, **kwargs: Any) -> None:
        """Copies the dense batch to the memory at `ptr` (an int or a ctypes pointer)."""
        _copy_to(self.as_tensor(), ptr)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.as_tensor().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.as_tensor().__dlpack_device__()

    def __repr__(self) -> str:
        kind = "TensorListGPU" if self.is_cuda else "TensorListCPU"
        return f"{kind}(batch={len(self)}, layout={self._layout!r}, shapes={self.shape()[:2]}...)"


def _copy_to(t: torch.Tensor, ptr: Any) -> None:
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    address = ptr if isinstance(ptr, int) else ctypes.cast(ptr, ctypes.c_void_p).value
    if not address:
        raise ArgumentError("copy_to_external: the destination pointer is null")
    ctypes.memmove(address, t.data_ptr(), t.numel() * t.element_size())


# -- DALI's classes --------------------------------------------------------------------------------

class _Tensor:
    """One sample as DALI hands it out (`TensorCPU` / `TensorGPU`): a torch tensor inside."""

    __slots__ = ("_t", "_layout")

    def __init__(self, data: Any, layout: str | None = None) -> None:
        self._t = _from_user(data, type(self).__name__)
        self._layout = layout or ""
        if self._layout and len(self._layout) != self._t.dim():
            raise ArgumentError(f"{type(self).__name__}: layout {self._layout!r} has {len(self._layout)} "
                                f"dimensions, the data has {self._t.dim()}")

    @classmethod
    def _wrap(cls, t: torch.Tensor, layout: str) -> "_Tensor":
        obj = cls.__new__(cls)
        obj._t = t
        obj._layout = layout
        return obj

    def shape(self) -> list[int]:
        return list(self._t.shape)

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        self._layout = layout or ""

    @property
    def dtype(self) -> types.DALIDataType:
        return types.from_torch_dtype(self._t.dtype)

    def ndim(self) -> int:
        return self._t.dim()

    def source_info(self) -> str:
        return ""

    def squeeze(self, dim: int | None = None) -> bool:
        """Drops dimensions of extent 1 (all, or `dim`) in place; whether any was dropped."""
        before = self._t.dim()
        self._t = self._t.squeeze() if dim is None else self._t.squeeze(dim)
        if self._layout and self._t.dim() != before:
            self._layout = ""
        return self._t.dim() != before

    def data_ptr(self) -> int:
        return int(self._t.data_ptr())

    def copy_to_external(self, ptr: Any, *args: Any, **kwargs: Any) -> None:
        _copy_to(self._t, ptr)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._t.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._t.__dlpack_device__()

    def __len__(self) -> int:
        return int(self._t.shape[0]) if self._t.dim() else 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.dtype!r}, layout={self._layout!r}, shape={self.shape()})"


class TensorCPU(_Tensor):
    """A sample in host memory; `np.array(t)` views it."""

    def as_cpu(self) -> "TensorCPU":
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        t = self._t if self._t.dtype != torch.bfloat16 else self._t.float()
        a = t.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)


class TensorGPU(_Tensor):
    """A sample in device memory; `as_cpu()` copies it to the host."""

    def as_cpu(self) -> TensorCPU:
        return TensorCPU._wrap(self._t.cpu(), self._layout)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self._t.__cuda_array_interface__

    def device_id(self) -> int:
        return int(self._t.device.index or 0) if self._t.is_cuda else 0


class _DaliTensorList(TensorList):
    """What DALI's TensorListCPU and TensorListGPU share (they are unrelated classes in DALI, so
    `isinstance(x, TensorListCPU)` does not hold for a device batch here either)."""

    _sample_cls: type[_Tensor] = TensorCPU

    def __init__(self, data: Any, layout: str | None = None) -> None:
        name = type(self).__name__
        if isinstance(data, TensorList):
            dense, samples = data._dense, data._samples
            super().__init__(dense if dense is not None else list(samples or []), layout or data.layout())
        elif isinstance(data, (list, tuple)):
            super().__init__([_from_user(x, f"{name}, sample {i}") for i, x in enumerate(data)], layout or "")
        else:
            t = _from_user(data, name)
            if t.dim() == 0:
                raise ArgumentError(f"{name}: a batch needs a leading sample dimension, got a scalar")
            super().__init__(t, layout or "")
        self._place()
        if self._layout and any(t.dim() != len(self._layout) for t in self.samples):
            raise ArgumentError(f"{name}: layout {self._layout!r} has {len(self._layout)} dimensions, the "
                                f"samples have {sorted({t.dim() for t in self.samples})}")

    def _place(self) -> None:
        """Moves the data to the class's device."""

    def __getitem__(self, i: int) -> Any:
        n = len(self)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"{type(self).__name__} indices must be integers, got {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__}: index {i} out of range for a batch of {n}")
        return self._sample_cls._wrap(self.samples[int(i)], self._layout)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @classmethod
    def from_dlpack_list(cls, items: Sequence[Any], layout: str | None = None) -> "_DaliTensorList":
        return cls([torch.from_dlpack(x) for x in items], layout)

    def broadcast(self, n: int) -> "_DaliTensorList":
        """A batch of `n` copies of this one-sample batch."""
        if len(self) != 1:
            raise ArgumentError(f"broadcast: needs a batch of one sample, got {len(self)}")
        return type(self)([self.samples[0]] * int(n), self._layout)


class TensorListCPU(_DaliTensorList):
    """DALI's host batch: built from a NumPy array / torch tensor (first dimension = samples), or a
    list of samples; `out[i]` is a TensorCPU."""

    def _place(self) -> None:
        if self._dense is not None and self._dense.device.type != "cpu":
            self._dense = self._dense.cpu()
        elif self._samples is not None and any(t.device.type != "cpu" for t in self._samples):
            self._samples = [t.cpu() for t in self._samples]


class TensorListGPU(_DaliTensorList):
    """DALI's device batch; `out[i]` is a TensorGPU, `as_cpu()` copies it to the host. Without
    CUDA the data stay where they are (torch_dali runs GPU ops on the CPU then)."""

    _sample_cls = TensorGPU

    def _place(self) -> None:
        if not torch.cuda.is_available():
            return
        if self._dense is not None and not self._dense.is_cuda:
            self._dense = self._dense.cuda()
        elif self._samples is not None and any(not t.is_cuda for t in self._samples):
            self._samples = [t.cuda() for t in self._samples]

    def as_cpu(self) -> TensorListCPU:
        if self._dense is not None:
            data: Any = self._dense.cpu()
        else:
            data = [t.cpu() for t in self.samples]
        return TensorListCPU(data, self._layout)

    def device_id(self) -> int:
        return int(self.device.index or 0) if self.is_cuda else 0


def _cpu_class(cls: type) -> type:
    return TensorListCPU if issubclass(cls, _DaliTensorList) else TensorList


def user_view(tl: TensorList) -> TensorList:
    """The batch as DALI's class for its device, sharing the data (what Pipeline.run() returns)."""
    if isinstance(tl, _DaliTensorList):
        return tl
    cls = TensorListGPU if tl.is_cuda else TensorListCPU
    out = cls.__new__(cls)
    out._dense, out._samples, out._layout = tl._dense, tl._samples, tl._layout
    return out


def plain(tl: TensorList) -> TensorList:
    """The batch as the executor's class (`tl[i]` a torch tensor), sharing the data."""
    if type(tl) is TensorList:
        return tl
    out = TensorList.__new__(TensorList)
    out._dense, out._samples, out._layout = tl._dense, tl._samples, tl._layout
    return out
