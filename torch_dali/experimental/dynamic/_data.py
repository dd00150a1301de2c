"""`ndd.Tensor` and `ndd.Batch`, the data of the dynamic mode, and how ops are applied to them.

A Tensor holds one sample as a torch tensor (`_storage`: torch_dali's `backend.TensorCPU` /
`TensorGPU`, the class `Pipeline.run()` samples have); a Batch holds samples as a TensorList
(`_storage`, made when first needed) and/or as a list of Tensors. `as_tensor` / `as_batch` share
memory with their source where they can (NumPy arrays, torch tensors, DLPack objects, other
Tensors); `tensor` / `batch` copy. Arithmetic uses the kernels of torch_dali's arithmetic op
(DALI's type promotion); every other op runs through `torch_dali.eager.apply`, the same kernels
and pipelines as `fn.*`.
"""
from __future__ import annotations

import enum
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from ... import eager
from ... import types as dali_types
from ...backend import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU
from ...ops import arith_kernels as K
from ...ops._registry import lookup
from ...ops._schema import COMMON_ARGS
from ...tensor_list import TensorList
from . import _device as D
from . import _type as T
from ._device import Device

__all__ = ["Tensor", "Batch", "tensor", "as_tensor", "batch", "as_batch"]


# -- conversion of user data -----------------------------------------------------------------------

def _enum_type(x: Any) -> T.DType | None:
    return T.ENUM_TYPES.get(type(x)) if isinstance(x, enum.Enum) else None


def _python_scalar_dtype(x: Any) -> torch.dtype | None:
    if isinstance(x, (bool, np.bool_)):
        return torch.bool
    if isinstance(x, int):
        return torch.int32
    if isinstance(x, float):
        return torch.float32
    return None


def _from_nested(data: Any) -> tuple[torch.Tensor, T.DType | None]:
    """Python scalars / (nested) lists: ints are INT32, floats FLOAT, bools BOOL (as DALI)."""
    flat = data
    while isinstance(flat, (list, tuple)) and flat:
        flat = flat[0]
    et = _enum_type(flat)
    if et is not None:
        return torch.tensor(np.vectorize(int, otypes=[np.int32])(np.array(data, dtype=object)) if isinstance(
            data, (list, tuple)) else int(data), dtype=torch.int32), et
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.float32)
    elif arr.dtype == np.int64 and not isinstance(data, (np.ndarray, np.generic)):
        arr = arr.astype(np.int32)
    if arr.dtype == object:
        raise TypeError(f"ndd: cannot make a tensor of {type(data).__name__} data")
    return torch.from_numpy(np.array(arr)), None


def _to_torch(data: Any, copy: bool) -> tuple[torch.Tensor, T.DType | None, str | None]:
    """(torch tensor, enum dtype if any, layout found) of any data a Tensor is made from; shares
    memory unless `copy`."""
    if isinstance(data, TensorCPU):
        layout = data.dali_layout() or None
        t = data.as_subclass(torch.Tensor)
        return (t.clone() if copy else t), None, layout
    if isinstance(data, torch.Tensor):
        return (data.clone() if copy else data), None, None
    if isinstance(data, np.ndarray):
        if data.dtype == object:
            raise TypeError("ndd: NumPy arrays of objects cannot be tensors")
        if not copy and data.flags.writeable and data.dtype.isnative:
            try:
                return torch.from_numpy(data), None, None
            except (TypeError, ValueError):
                pass
        return torch.from_numpy(np.array(data)), None, None
    if isinstance(data, TensorList):
        dense = data.as_tensor()
        return (dense.clone() if copy else dense), None, None
    if hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
        try:
            t = torch.from_dlpack(data)
            return (t.clone() if copy else t), None, None
        except (TypeError, BufferError, RuntimeError):
            pass
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return _to_torch(np.asarray(data), copy)
    t, et = _from_nested(data)
    return t, et, None


def _cast(t: torch.Tensor, dt: T.DType) -> torch.Tensor:
    if t.dtype == dt.torch_dtype:
        return t
    if dt.kind is T.DType.Kind.enum:
        return t.to(torch.int32)
    return K.cast_sat(t, dt.torch_dtype)


def _check_layout(layout: str | None, ndim: int, what: str) -> str | None:
    if layout is None or layout == "":
        return None
    layout = str(layout)
    if len(layout) != ndim:
        raise ValueError(f"{what}: layout {layout!r} has {len(layout)} dimensions, the data have {ndim} dimensions")
    return layout


def _wrap(t: torch.Tensor, layout: str | None) -> TensorCPU:
    cls = TensorGPU if t.is_cuda else TensorCPU
    out = t.as_subclass(cls)
    out.set_layout(layout or "")
    return out


def _place(t: torch.Tensor, dev: Device | None) -> torch.Tensor:
    if dev is None:
        return t
    target = D.to_torch(dev)
    return t if t.device == target else t.to(target)


# -- Tensor ----------------------------------------------------------------------------------------

class Tensor:
    """One sample: `shape`, `dtype` (an ndd.DType), `layout` (None if none), `device`; `cpu()`,
    `gpu()`, `torch()`, NumPy (`np.asarray(t)`) and DLPack interop; indexing (`t[1:3, ..., 0]`) and
    arithmetic with Tensors, Batches and numbers."""

    __array_priority__ = 100  # `np_array + tensor` calls Tensor.__radd__

    def __init__(self, data: Any = None, dtype: Any = None, device: Any = None, layout: str | None = None,
                 copy: bool = True, **unsupported: Any) -> None:
        if unsupported:
            raise NotImplementedError(f"ndd.Tensor: argument(s) {sorted(unsupported)} are not supported by "
                                      "torch_dali's dynamic mode")
        want = T.as_dtype(dtype) if dtype is not None else None
        if isinstance(data, Tensor):
            t, et, found = data._storage.as_subclass(torch.Tensor), data._dtype, data.layout
            if copy:
                t = t.clone()
        elif isinstance(data, Batch):
            try:
                t = data._dense()
            except RuntimeError as e:  # DALI 2.4: a ragged batch as one tensor is a ValueError
                raise ValueError(str(e)) from None
            et, found = data.dtype, None
            if copy:
                t = t.clone()
        else:
            t, et, found = _to_torch(data, copy)
        if want is not None:
            if want.kind is T.DType.Kind.enum or et is not None:
                t = t.to(torch.int32) if t.dtype != torch.int32 else t
            else:
                t = _cast(t, want)
            et = want
        else:
            et = et or T.DType.from_torch(t.dtype)
        dev = D.device(device) if device is not None else None
        t = _place(t, dev)
        if layout is None:
            layout = found
        self._dtype: T.DType = et
        self._storage: TensorCPU = _wrap(t, _check_layout(layout, t.dim(), "ndd.Tensor"))

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
        out._storage = _wrap(t, layout)
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
    """NumPy-style basic indexing (integers, slices with any step, `...`, None is refused) and the
    layout that remains (dimensions indexed by an integer leave it)."""
    idx = index if isinstance(index, tuple) else (index,)
    if any(i is None for i in idx):
        raise NotImplementedError("ndd: indexing with None (new axes) is not supported")
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


def tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Tensor:
    """A Tensor holding a copy of `data` (optionally converted to `dtype`, placed on `device`)."""
    return Tensor(data, dtype=dtype, device=device, layout=layout, copy=True)


def as_tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Tensor:
    """A Tensor sharing `data`'s memory where it can (a Tensor is returned as is when nothing
    changes; a Batch becomes one tensor whose first dimension is the sample)."""
    if isinstance(data, Tensor) and dtype is None and layout is None and (
            device is None or D.device(device) == data.device):
        return data
    return Tensor(data, dtype=dtype, device=device, layout=layout, copy=False)


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
            self._items = [_sample_of(t[i], whole.dtype) for i in range(t.shape[0])]
            self._dtype = whole.dtype
            inner = whole.layout[1:] if whole.layout else None
            self._layout = layout if layout is not None else inner
            self._device = whole.device
        if self._layout == "":
            self._layout = None
        if self._layout is not None and self._items:
            for x in self._items:
                _check_layout(self._layout, x.ndim, "ndd.Batch")
            self._items = [_relayout(x, self._layout) for x in self._items]

    # -- properties --------------------------------------------------------------------------
    @property
    def tensors(self) -> _Tensors:
        return _Tensors(self._samples())

    def _samples(self) -> list[Tensor]:
        if self._items is None:
            st = self._storage
            self._items = [_sample_of(x, self._dtype, self._layout) for x in st.samples]
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

    def _dense(self) -> torch.Tensor:
        """The samples as one tensor: shared memory when the batch was made from one tensor, else
        a stacked copy; a batch of samples of different shapes is not dense (RuntimeError)."""
        if self._whole is not None:
            return self._whole
        s = [x.torch() for x in self._samples()]
        if not s:
            return torch.empty((0,), dtype=self._dtype.torch_dtype)
        if any(x.shape != s[0].shape for x in s):
            raise RuntimeError(f"ndd: a batch of samples of different shapes {self.shape} is not dense: it "
                               "cannot be one tensor")
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

    def torch(self, copy: bool = False) -> torch.Tensor:
        """The batch as one torch tensor (samples must share a shape): shared memory when the batch
        was made from one tensor (`ndd.batch(array)`), else a stacked copy."""
        t = self._dense()
        return t.clone() if copy else t

    def __repr__(self) -> str:
        body = ",\n    ".join(np.array2string(np.asarray(x), separator=" ", prefix="    ")
                               for x in self._samples())
        lay = f"\n    layout=\"{self._layout}\"," if self._layout else ""
        return (f"Batch(\n    [{body}],\n    dtype={self._dtype},{lay}\n    device=\"{self._device}\",\n"
                f"    num_samples={self.batch_size},\n    shape={self.shape})")


def _sample_of(t: torch.Tensor, dt: T.DType, layout: str | None = None) -> Tensor:
    out = Tensor.__new__(Tensor)
    out._dtype = dt
    out._storage = _wrap(t, layout)
    return out


def _relayout(x: Tensor, layout: str | None) -> Tensor:
    if x.layout == layout:
        return x
    return _sample_of(x.torch(), x.dtype, layout)


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
            out.append(_sample_of(t, b.dtype, layout))
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


# -- arithmetic ------------------------------------------------------------------------------------

def _operand(x: Any) -> Tensor | Batch:
    if isinstance(x, (Tensor, Batch)):
        return x
    if isinstance(x, enum.Enum):
        raise TypeError(f"ndd: arithmetic on {x!r} is not supported")
    return as_tensor(x)


def _device_name(d: Device) -> str:
    return d.device_type.upper()


def _arith(op: str, *operands: Any) -> Tensor | Batch:
    xs = [_operand(x) for x in operands]
    devs = {x.device.device_type for x in xs}
    if len(devs) > 1:
        a, b = (_device_name(x.device) for x in xs[:2])
        raise ValueError(f"ndd: `{K.display(op)}` got operands on different devices: {a} and {b}")
    for x in xs:
        if x.dtype.kind is T.DType.Kind.enum:
            raise TypeError(f"ndd: arithmetic on {x.dtype} values is not supported")
    out_type = K.result_type(op, [x.dtype.torch_dtype for x in xs])
    batches = [x for x in xs if isinstance(x, Batch)]
    if not batches:
        r = K.compute(op, [x.torch() for x in xs], out_type)  # type: ignore[union-attr]
        layout = next((x.layout for x in xs if x.layout and x.ndim == r.dim()), None)
        return _sample_of(r, T.DType.from_torch(out_type), layout)
    n = batches[0].batch_size
    if any(b.batch_size != n for b in batches):
        raise ValueError(f"ndd: `{K.display(op)}` got batches of different sizes {[b.batch_size for b in batches]}")
    samples = []
    for k in range(n):
        ts = [x.tensors[k].torch() if isinstance(x, Batch) else x.torch() for x in xs]
        samples.append(_sample_of(K.compute(op, ts, out_type), T.DType.from_torch(out_type)))
    layout = next((b.layout for b in batches if b.layout and samples and len(b.layout) == samples[0].ndim), None)
    return Batch(samples, dtype=T.DType.from_torch(out_type), layout=layout)


_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "fdiv", "floordiv": "div", "pow": "pow",
           "mod": "mod", "and": "bitand", "or": "bitor", "xor": "bitxor", "lshift": "lshift", "rshift": "rshift"}
_COMPARE = {"eq": "eq", "ne": "neq", "lt": "lt", "le": "leq", "gt": "gt", "ge": "geq"}


def _install_arithmetic(cls: type) -> None:
    def binary(op: str, reverse: bool) -> Any:
        if reverse:
            return lambda self, other: _arith(op, other, self)
        return lambda self, other: _arith(op, self, other)

    for py, op in _BINARY.items():
        setattr(cls, f"__{py}__", binary(op, False))
        setattr(cls, f"__r{py}__", binary(op, True))
    for py, op in _COMPARE.items():
        setattr(cls, f"__{py}__", binary(op, False))
    cls.__neg__ = lambda self: _arith("minus", self)
    cls.__pos__ = lambda self: _arith("plus", self)
    cls.__abs__ = lambda self: _arith("abs", self)
    cls.__invert__ = lambda self: _arith("bitnot", self)
    cls.__hash__ = None  # `==` is elementwise


_install_arithmetic(Tensor)
_install_arithmetic(Batch)


def math_op(op: str, *operands: Any) -> Tensor | Batch:
    """An elementwise math function (`sqrt`, `min`, `clamp`...) with DALI's type rules."""
    return _arith(op, *operands)


# -- ops -------------------------------------------------------------------------------------------

def _arg_value(schema: Any, name: str, v: Any, n: int | None) -> Any:
    """An argument as eager.apply takes it: per-sample TensorLists for Batches (and Tensors of
    per-sample arguments in batch mode), plain values otherwise."""
    if isinstance(v, T.DType):
        return v.type_id
    if isinstance(v, Device):
        return str(v.device_type)
    a = schema.arg(name)
    if isinstance(v, Batch):
        if n is not None and v.batch_size != n:
            raise ValueError(f"ndd.{schema.name}: argument {name!r} has {v.batch_size} samples, the batch {n}")
        return TensorList([x.torch().cpu() for x in v.tensors], v.layout or "")
    if isinstance(v, Tensor):
        if a is not None and a.tensor:
            return TensorList([v.torch().cpu()] * (n or 1), v.layout or "")
        value = v.torch().cpu()
        return value.item() if value.dim() == 0 else value.tolist()
    return v


def _input_list(x: Any, n: int | None) -> TensorList:
    if isinstance(x, Batch):
        samples = [t.torch() for t in x.tensors]
        return TensorList(samples, x.layout or "")
    t = as_tensor(x)
    return TensorList([t.torch()] * (n or 1), t.layout or "")


def invoke(name: str, inputs: Sequence[Any], kwargs: dict[str, Any], *, draw: int | None = None) -> Any:
    """Applies the op of schema `name` to Tensors / Batches (and tensor-likes): Batch inputs or
    per-sample arguments give Batches, Tensors give Tensors; `batch_size=` makes an op without
    inputs give a Batch. `device=` picks where it runs (default: where the inputs are)."""
    schema = lookup(name)
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    batch_size = kwargs.pop("batch_size", None)
    kwargs.pop("max_batch_size", None)
    kwargs.pop("name", None)
    for k in kwargs:
        if schema.arg(k) is None and k not in COMMON_ARGS:
            raise TypeError(f"{name.split('.')[-1]}() got an unexpected keyword argument {k!r}")
    batched = [x for x in [*inputs, *kwargs.values()] if isinstance(x, Batch)]
    n = batched[0].batch_size if batched else (int(batch_size) if batch_size is not None else None)
    if batched and batch_size is not None and int(batch_size) != n:
        raise ValueError(f"ndd.{name}: batch_size={batch_size} does not match the inputs' {n} samples")
    if n is not None and n < 1:
        raise ValueError(f"ndd.{name}: a batch needs at least one sample")
    ins = [_input_list(x, n) for x in inputs]
    args = {k: _arg_value(schema, k, v, n) for k, v in kwargs.items()}
    dev = None if device is None else D.device(device).device_type
    outs = eager.apply(name, ins, args, batch_size=n or 1, device=dev, draw=draw)
    results = [_result(o, n is not None) for o in outs]
    return results[0] if len(results) == 1 else tuple(results)


def _result(tl: TensorList, as_batch_: bool) -> Tensor | Batch:
    samples = tl.samples
    dt = T.DType.from_torch(samples[0].dtype) if samples else T.DType.from_type_id(tl.dtype)
    layout = tl.layout() or None
    if as_batch_:
        return Batch([_sample_of(s, dt, layout) for s in samples], dtype=dt, layout=layout)
    return _sample_of(samples[0], dt, layout)


def from_tensor_list(tl: TensorList, as_batch_: bool = True) -> Tensor | Batch:
    """A pipeline's output batch as a Batch (or its first sample as a Tensor), sharing memory."""
    return _result(tl, as_batch_)


def enum_value(t: Tensor) -> Any:
    """The DALI enum value an enum-typed scalar Tensor holds."""
    cls = {v: k for k, v in T.ENUM_TYPES.items()}.get(t.dtype)
    return dali_types.enum_from_number(cls, int(t.item())) if cls else t.item()
