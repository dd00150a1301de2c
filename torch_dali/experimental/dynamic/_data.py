"""`ndd.Tensor` and `ndd.Batch`, the data of the dynamic mode.

A Tensor holds one sample as a torch tensor (`_storage`: torch_dali's `backend.TensorCPU` /
`TensorGPU`, the class `Pipeline.run()` samples have); a Batch holds samples as a TensorList
(`_storage`, made when first needed) and/or as a list of Tensors. `as_tensor` / `as_batch` share
memory with their source where they can (NumPy arrays, torch tensors, DLPack objects, other
Tensors); `tensor` / `batch` copy. Their arithmetic and the ops applied to them: `_invoke`.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
import torch

from ...backend import TensorCPU, TensorListCPU, TensorListGPU
from ...tensor_list import TensorList
from . import _device as D
from . import _type as T
from ._convert import cast, check_layout, place, to_torch, wrap
from ._device import Device

__all__ = ["Tensor", "Batch", "tensor", "as_tensor", "batch", "as_batch", "sample_of"]


# -- Tensor ----------------------------------------------------------------------------------------

class Tensor:
    """One sample: `shape`, `dtype` (an ndd.DType), `layout` (None if none), `device`; `cpu()`,
    `gpu()`, `torch()`, NumPy (`np.asarray(t)`) and DLPack interop; indexing (`t[1:3, ..., 0]`) and
    arithmetic with Tensors, Batches and numbers."""

    __array_priority__ = 100  # `np_array + tensor` calls Tensor.__radd__

    def __init__(self, data: Any = None, dtype: Any = None, device: Any = None, layout: str | None = None,
                 copy: bool = True, pad: bool = False, **unsupported: Any) -> None:
        if unsupported:
            raise NotImplementedError(f"ndd.Tensor: argument(s) {sorted(unsupported)} are not supported by "
                                      "torch_dali's dynamic mode")
        want = T.as_dtype(dtype) if dtype is not None else None
        if isinstance(data, Tensor):
            t, et, found = data._storage.as_subclass(torch.Tensor), data._dtype, data.layout
            if copy:
                t = t.clone()
        elif isinstance(data, Batch):
            t = data._dense(pad)
            # DALI 2.4: the samples' layout behind an "N" for the batch dimension
            et, found = data.dtype, ("N" + data.layout if data.layout else None)
            if copy:
                t = t.clone()
        else:
            t, et, found = to_torch(data, copy)
        if want is not None:
            if want.kind is T.DType.Kind.enum or et is not None:
                t = t.to(torch.int32) if t.dtype != torch.int32 else t
            else:
                t = cast(t, want)
            et = want
        else:
            et = et or T.DType.from_torch(t.dtype)
        dev = D.device(device) if device is not None else None
        t = place(t, dev)
        if layout is None:
            layout = found
        self._dtype: T.DType = et
        self._storage: TensorCPU = wrap(t, check_layout(layout, t.dim(), "ndd.Tensor"))

    # -- properties --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self._storage.as_subclass(torch.Tensor).shape)

    @property
    def ndim(self) -> int:
        return self._storage.dim()

    @property
    def dtype(self) -> T.DType:
        return self._dtype

    @property
    def layout(self) -> str | None:
        return self._storage.dali_layout() or None

    @property
    def device(self) -> Device:
        t = self._storage
        return Device("gpu", t.device.index or 0) if t.is_cuda else Device.CPU

    @property
    def size(self) -> int:
        return int(self._storage.numel())

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.bytes

    @property
    def itemsize(self) -> int:
        return self._dtype.bytes

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"item(): the tensor has {self.size} elements, not one")
        return self._storage.as_subclass(torch.Tensor).reshape(()).item()

    # -- evaluation and placement ------------------------------------------------------------
    def evaluate(self) -> "Tensor":
        """Returns self: torch_dali computes a Tensor when it is made."""
        return self

    def cpu(self) -> "Tensor":
        return self.to_device("cpu")

    def gpu(self, index: int | None = None) -> "Tensor":
        return self.to_device(Device("gpu", index))

    def to_device(self, device: Any, force_copy: bool = False) -> "Tensor":
        dev = D.device(device)
        if dev == self.device and not force_copy:
            return self
        return Tensor(self, device=dev, copy=force_copy)

    def torch(self, copy: bool = False) -> torch.Tensor:
        """The data as a plain torch tensor (shared memory unless `copy`)."""
        t = self._storage.as_subclass(torch.Tensor)
        return t.clone() if copy else t

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.cpu()._storage.__array__(dtype, copy)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.torch().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.torch().__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> Any:
        if not self._storage.is_cuda:
            raise AttributeError("__cuda_array_interface__: the tensor is on the CPU")
        return self.torch().__cuda_array_interface__

    def _is_same_tensor(self, other: "Tensor") -> bool:
        a, b = self._storage, other._storage
        return a is b or (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.dtype == b.dtype)

    # -- indexing --------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "Tensor":
        t, layout = _subscript(self.torch(), self.layout, index)
        out = Tensor.__new__(Tensor)
        out._dtype = self._dtype
        out._storage = wrap(t, layout)
        return out

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of a tensor with more than one element is ambiguous")
        return builtins_bool(self.item())

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self), separator=" ", prefix="    ")
        lay = f"\n    layout=\"{self.layout}\"," if self.layout else ""
        return (f"Tensor(\n    {body},\n    dtype={self._dtype},{lay}\n    device=\"{self.device}\",\n"
                f"    shape={self.shape})")

    # arithmetic: installed below (_install_arithmetic)


builtins_bool = bool


def _subscript(t: torch.Tensor, layout: str | None, index: Any) -> tuple[torch.Tensor, str | None]:
    """NumPy-style basic indexing (integers, slices with any step, `...`) and the layout that remains
    (dimensions indexed by an integer leave it). None (a new axis) is a ValueError, as in DALI 2.4."""
    idx = index if isinstance(index, tuple) else (index,)
    if any(i is None for i in idx):
        raise ValueError("ndd: indexing with None (a new axis) is not supported; use ndd.expand_dims")
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = len(idx) - n_ell
    if n_real > t.dim():
        raise IndexError(f"too many indices: the tensor has {t.dim()} dimensions, {n_real} were indexed")
    full: list[Any] = []
    for i in idx:
        if i is Ellipsis:
            full.extend([slice(None)] * (t.dim() - n_real))
        else:
            full.append(i)
    full.extend([slice(None)] * (t.dim() - len(full)))
    keep: list[int] = []
    for d, i in enumerate(full):
        if isinstance(i, Tensor):
            i = i.item()
        if isinstance(i, slice):
            size = t.shape[d]
            start, stop, step = i.indices(size)
            if step == 1:
                t = t.narrow(d, start, max(0, stop - start))
            else:
                t = t.index_select(d, torch.arange(start, stop, step, device=t.device, dtype=torch.long))
            keep.append(d)
        else:
            k = int(i)
            size = t.shape[d]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of range for dimension {d} of size {size}")
            full[d] = k % size
            t = t.select(d, k % size).unsqueeze(d)  # squeezed below, keeping dims aligned
    for d in reversed(range(len(full))):
        if d not in keep:
            t = t.squeeze(d)
    out_layout = "".join(layout[d] for d in keep) if layout else None
    return t, (out_layout or None)


def tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None,
           pad: bool = False) -> Tensor:
    """A Tensor holding a copy of `data` (optionally converted to `dtype`, placed on `device`);
    `pad=True`: a Batch of samples of different shapes is padded with zeros to the largest."""
    return Tensor(data, dtype=dtype, device=device, layout=layout, copy=True, pad=pad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None,
              pad: bool = False) -> Tensor:
    """A Tensor sharing `data`'s memory where it can (a Tensor is returned as is when nothing
    changes; a Batch becomes one tensor whose first dimension is the sample, padded with zeros
    to the largest sample with `pad=True`)."""
    if isinstance(data, Tensor) and dtype is None and layout is None and (
            device is None or D.device(device) == data.device):
        return data
    return Tensor(data, dtype=dtype, device=device, layout=layout, copy=False, pad=pad)


# -- Batch -----------------------------------------------------------------------------------------

class _Tensors(Sequence):
    """A Batch's samples as Tensors (`batch.tensors[i]`)."""

    def __init__(self, items: list[Tensor]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._items)

    def __repr__(self) -> str:
        return repr(self._items)


class Batch:
    """A batch of samples (each a Tensor; shapes may differ): `batch_size`, `shape` (a list of
    tuples), `dtype`, `layout`, `device`, `tensors`; `select(i)`, `slice[...]` (per-sample
    indexing), `Batch.broadcast(sample, n)`, `cpu()`, `gpu()`, `torch()`, arithmetic."""

    def __init__(self, tensors: Any = None, dtype: Any = None, device: Any = None, layout: str | None = None,
                 copy: bool = False, **unsupported: Any) -> None:
        if unsupported:
            raise NotImplementedError(f"ndd.Batch: argument(s) {sorted(unsupported)} are not supported by "
                                      "torch_dali's dynamic mode")
        want = T.as_dtype(dtype) if dtype is not None else None
        dev = D.device(device) if device is not None else None
        self._storage: TensorList | None = None
        self._items: list[Tensor] | None = None
        self._whole: torch.Tensor | None = None  # one tensor whose rows are the samples, if any
        if isinstance(tensors, Batch):
            src = tensors
            items = [Tensor(x, dtype=want, device=dev, copy=copy) if (copy or want or dev) else x
                     for x in src.tensors]
            self._dtype = want or src.dtype
            self._layout = layout if layout is not None else src.layout
            self._device = dev or src.device
            self._items = items
            if not copy and want is None and (dev is None or dev == src.device):
                self._storage, self._whole = src._storage, src._whole
        elif isinstance(tensors, TensorList):
            samples = [Tensor(x, dtype=want, device=dev, copy=copy) for x in tensors.samples]
            self._items = samples
            self._dtype = want or (samples[0].dtype if samples else T.DType.from_type_id(tensors.dtype))
            self._layout = layout if layout is not None else (tensors.layout() or None)
            self._device = dev or (samples[0].device if samples else Device.CPU)
        elif isinstance(tensors, (list, tuple)):
            if not tensors and want is None:
                raise ValueError("ndd.Batch: Element type of an empty batch cannot be inferred; give dtype=")
            items = [x if isinstance(x, Tensor) and not copy and want in (None, x.dtype)
                     and (dev is None or dev == x.device) else Tensor(x, dtype=want, device=dev, copy=True)
                     for x in tensors]
            self._items = items
            self._dtype = want or items[0].dtype
            if items and any(x.dtype != items[0].dtype for x in items):
                raise TypeError("ndd.Batch: the samples of a batch must share one element type, got "
                                f"{sorted({str(x.dtype) for x in items})}")
            if items and any(x.ndim != items[0].ndim for x in items):
                raise ValueError("ndd.Batch: the samples of a batch must have the same number of dimensions")
            found = next((x.layout for x in items if x.layout), None)
            self._layout = layout if layout is not None else found
            self._device = dev or (items[0].device if items else Device.CPU)
        else:  # one tensor-like: its first dimension is the sample
            whole = Tensor(tensors, dtype=want, device=dev, copy=copy)
            if whole.ndim == 0:
                raise ValueError("ndd.Batch: a batch needs a leading sample dimension, got a scalar")
            t = whole.torch()
            self._whole = t
            self._items = [sample_of(t[i], whole.dtype) for i in range(t.shape[0])]
            self._dtype = whole.dtype
            inner = whole.layout[1:] if whole.layout else None
            self._layout = layout if layout is not None else inner
            self._device = whole.device
        if self._layout == "":
            self._layout = None
        if self._layout is not None and self._items:
            for x in self._items:
                check_layout(self._layout, x.ndim, "ndd.Batch")
            self._items = [_relayout(x, self._layout) for x in self._items]

    # -- properties --------------------------------------------------------------------------
    @property
    def tensors(self) -> _Tensors:
        return _Tensors(self._samples())

    def _samples(self) -> list[Tensor]:
        if self._items is None:
            st = self._storage
            self._items = [sample_of(x, self._dtype, self._layout) for x in st.samples]
        return self._items

    @property
    def batch_size(self) -> int:
        return len(self._samples())

    @property
    def shape(self) -> list[tuple[int, ...]]:
        return [x.shape for x in self._samples()]

    @property
    def ndim(self) -> int:
        s = self._samples()
        return s[0].ndim if s else 0

    @property
    def dtype(self) -> T.DType:
        return self._dtype

    @property
    def layout(self) -> str | None:
        return self._layout

    @property
    def device(self) -> Device:
        return self._device

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._samples())

    def select(self, index: Any) -> Any:
        """Sample `index` (a Tensor), or a Batch of the samples a slice / list of indices picks."""
        s = self._samples()
        if isinstance(index, slice):
            return Batch(s[index], dtype=self._dtype, layout=self._layout)
        if isinstance(index, (list, tuple)):
            return Batch([s[int(i)] for i in index], dtype=self._dtype, layout=self._layout)
        return s[int(index)]

    @property
    def slice(self) -> "_BatchSlicer":
        """`batch.slice[i, 1:3]`: the same indexing in every sample; an index given as a Batch is
        per-sample (sample k uses its k-th value)."""
        return _BatchSlicer(self)

    @staticmethod
    def broadcast(sample: Any, batch_size: int, device: Any = None, dtype: Any = None) -> "Batch":
        """A batch of `batch_size` copies of one sample (sharing its memory)."""
        t = as_tensor(sample, dtype=dtype, device=device)
        return Batch([t] * int(batch_size))

    def evaluate(self) -> "Batch":
        """Makes the batch's storage (a TensorList); returns self."""
        if self._storage is None:
            data: Any = self._whole if self._whole is not None else [x.torch() for x in self._samples()]
            cls = TensorListGPU if self._device.device_type == "gpu" else TensorListCPU
            st = cls.__new__(cls)
            TensorList.__init__(st, data, self._layout or "")
            self._storage = st
        return self

    def storage(self) -> TensorList:
        """The samples as a TensorList (made if needed)."""
        self.evaluate()
        return self._storage

    def _dense(self, pad: bool = False) -> torch.Tensor:
        """The samples as one tensor: shared memory when the batch was made from one tensor, else
        a stacked copy; samples of different shapes are padded with zeros to the largest extent of
        each dimension with `pad`, else a ValueError (as in DALI 2.4)."""
        if self._whole is not None:
            return self._whole
        s = [x.torch() for x in self._samples()]
        if not s:
            return torch.empty((0,), dtype=self._dtype.torch_dtype)
        if any(x.shape != s[0].shape for x in s):
            if not pad:
                raise ValueError(f"ndd: a batch of samples of different shapes {self.shape} is not dense: it "
                                 "cannot be one tensor (pad=True pads them)")
            full = [max(x.shape[d] for x in s) for d in range(s[0].dim())]
            out = s[0].new_zeros((len(s), *full))
            for k, x in enumerate(s):
                out[(k, *(slice(0, n) for n in x.shape))] = x
            return out
        return torch.stack(s)

    def cpu(self) -> "Batch":
        return self.to_device("cpu")

    def gpu(self, index: int | None = None) -> "Batch":
        return self.to_device(Device("gpu", index))

    def to_device(self, device: Any, force_copy: bool = False) -> "Batch":
        dev = D.device(device)
        if dev == self._device and not force_copy:
            return self
        return Batch(self, device=dev, copy=force_copy)

    def torch(self, copy: bool = False, pad: bool = False) -> torch.Tensor:
        """The batch as one torch tensor (samples must share a shape, or `pad=True` pads them with
        zeros): shared memory when the batch was made from one tensor (`ndd.batch(array)`), else a
        stacked copy."""
        t = self._dense(pad)
        return t.clone() if copy else t

    def __repr__(self) -> str:
        body = ",\n    ".join(np.array2string(np.asarray(x), separator=" ", prefix="    ")
                               for x in self._samples())
        lay = f"\n    layout=\"{self._layout}\"," if self._layout else ""
        return (f"Batch(\n    [{body}],\n    dtype={self._dtype},{lay}\n    device=\"{self._device}\",\n"
                f"    num_samples={self.batch_size},\n    shape={self.shape})")


def sample_of(t: torch.Tensor, dt: T.DType, layout: str | None = None) -> Tensor:
    out = Tensor.__new__(Tensor)
    out._dtype = dt
    out._storage = wrap(t, layout)
    return out


def _relayout(x: Tensor, layout: str | None) -> Tensor:
    if x.layout == layout:
        return x
    return sample_of(x.torch(), x.dtype, layout)


class _BatchSlicer:
    def __init__(self, b: Batch) -> None:
        self._b = b

    def __getitem__(self, index: Any) -> Batch:
        b = self._b
        idx = index if isinstance(index, tuple) else (index,)
        out = []
        layout: str | None = None
        for k, x in enumerate(b.tensors):
            mine = tuple(i.tensors[k] if isinstance(i, Batch) else i for i in idx)
            t, layout = _subscript(x.torch(), b.layout, mine)
            out.append(sample_of(t, b.dtype, layout))
        return Batch(out, dtype=b.dtype, layout=layout if out else None)


def batch(tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Batch:
    """A Batch holding copies of the samples (a list of samples, a Batch, or one tensor-like whose
    first dimension is the sample)."""
    return Batch(tensors, dtype=dtype, device=device, layout=layout, copy=True)


def as_batch(tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Batch:
    """A Batch sharing the samples' memory where it can."""
    if isinstance(tensors, Batch) and dtype is None and layout is None and (
            device is None or D.device(device) == tensors.device):
        return tensors
    return Batch(tensors, dtype=dtype, device=device, layout=layout, copy=False)
