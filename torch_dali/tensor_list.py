"""TensorList: one batch of one pipeline output, a torch tensor per sample (or one dense tensor).

`TensorList` is what ops and the executor pass around (`tl[i]` is a torch tensor). What
`Pipeline.run()` hands the user are DALI's classes, `TensorListCPU` / `TensorListGPU`: the same
batch (no copy), whose samples (`out[i]`, `for t in out`) are `TensorCPU` / `TensorGPU`: torch
tensors with DALI's `as_cpu()` and a callable `shape`; their `as_tensor()` is one too. `samples`
gives plain torch tensors on every class (and `plain(tl).as_tensor()` one plain tensor).
"""
from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
import torch

from . import types
from .errors import ArgumentError, ArgumentTypeError
from .packed import PackedSamples
from .samples import TensorCPU, TensorGPU, copy_to, with_layout
from .tensor_input import from_user, reinterpreted


class NotDenseError(ArgumentError, RuntimeError):
    """as_tensor() of samples of different shapes: a RuntimeError, as DALI 2.4's is (and a
    ValueError, as torch_dali's argument errors are)."""


class TensorList:
    """A batch held as torch tensors. `at(i)` gives NumPy on the CPU and a torch tensor on the GPU.

    When every sample has the same shape the batch may be backed by one dense tensor
    (`as_tensor()` is then free and DLPack export is zero-copy).
    """

    # each sample's file or record, set on a pipeline's outputs made from a reader (source_info())
    _sources: Sequence[Any] | None = None
    # (n, 4) int64 (y, x, H, W): sample i is the part at (y, x) of an H x W image. Set by a GPU
    # decoder that decoded only what its one consumer reads (Operator.input_regions); None: whole.
    regions: Any = None
    # the enum element type (types.INTERP_TYPE...) of a pipeline output holding enum values (as int32)
    enum_type: Any = None
    # 1-D samples as parts of one buffer (readers' encoded data), until someone asks for `samples`
    _packed: PackedSamples | None = None

    def with_enum_type(self, enum_type: Any) -> "TensorList":
        """This batch (the same data, layout and names) as a batch of enum values of `enum_type`
        (types.INTERP_TYPE...): its `dtype` says so; the batch itself is left as it is."""
        out = copy.copy(self)
        out.enum_type = enum_type
        return out

    def set_sources(self, names: Sequence[Any] | None) -> None:
        """Each sample's file or record (what its `source_info()` gives; names may be lazy)."""
        self._sources = names

    def __init__(self, samples: Sequence[torch.Tensor] | torch.Tensor, layout: str = "") -> None:
        if isinstance(samples, torch.Tensor):
            self._dense: torch.Tensor | None = samples
            self._samples: list[torch.Tensor] | None = None
        else:
            self._dense = None
            self._samples = list(samples)
        self._layout = layout or ""

    @classmethod
    def from_packed(cls, packed: PackedSamples, layout: str = "") -> "TensorList":
        """A batch of 1-D samples held as parts of one buffer; `samples` makes their views when
        first asked (ops that read `packed` never do)."""
        tl = cls([], layout)
        tl._samples, tl._packed = None, packed
        return tl

    # -- construction helpers -------------------------------------------------------------
    @property
    def samples(self) -> list[torch.Tensor]:
        if self._samples is None:
            if self._dense is not None:
                self._samples = list(self._dense.unbind(0))
            else:
                self._samples = self._packed.views() if self._packed is not None else []
        return self._samples

    @property
    def packed(self) -> PackedSamples | None:
        """The samples as parts of one buffer, while no one has asked for them one by one (after
        that, `samples` is what the batch holds: code may have replaced them)."""
        return self._packed if self._samples is None else None

    @property
    def device(self) -> torch.device:
        if self._dense is not None:
            return self._dense.device
        if self._samples is None and self._packed is not None:
            return self._packed.buffer.device
        return self._samples[0].device if self._samples else torch.device("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def dense(self) -> torch.Tensor | None:
        """The one tensor backing the whole batch (batch dimension first) when there is one, else
        None: a cheap test for the batched paths (unlike `as_tensor()`, it never stacks)."""
        return self._dense

    def fresh_handle(self) -> Any:
        """Puts the batch's data in a new object and returns that object (or None when there is no
        data): the dense tensor as a fresh alias of its storage, or the samples as a new list. Batch
        objects made from this one afterwards (`user_view`, `plain`) share it, so it lives exactly
        as long as some of them do: what the executor watches to learn the consumer is done."""
        if self._dense is not None:
            self._dense = self._dense.detach()
            return self._dense
        if self._samples is not None or self._packed is not None:
            self._samples = _WatchableList(self.samples)
            return self._samples
        return None

    # -- DALI's API ---------------------------------------------------------------------------
    def __len__(self) -> int:
        if self._dense is not None:
            return int(self._dense.shape[0])
        if self._samples is None and self._packed is not None:
            return len(self._packed)
        return len(self._samples or [])

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
            self._no_enum_view("at")
            return t.numpy() if t.dtype != torch.bfloat16 else t.float().numpy()
        return t

    def _no_enum_view(self, what: str) -> None:
        if self.enum_type is not None:
            raise TypeError(f"{what}: this batch holds enum values ({self.enum_type!r}), which have no NumPy "
                            "type; fn.cast them to an integer type in the pipeline to read them as numbers")

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        layout = layout or ""
        if layout and any(t.dim() != len(layout) for t in self.samples):
            raise ArgumentError(f"set_layout: layout {layout!r} has {len(layout)} dimensions, the samples "
                                f"have {sorted({t.dim() for t in self.samples})}")
        self._layout = layout

    def shape(self) -> list[tuple[int, ...]]:
        if self.packed is not None:
            return [(s,) for s in self.packed.sizes.tolist()]
        return [tuple(t.shape) for t in self.samples]

    @property
    def dtype(self) -> types.DALIDataType:
        """The element type, as DALI names it (`types.UINT8`)."""
        if self.enum_type is not None:
            return self.enum_type
        if self._dense is not None:
            return types.from_torch_dtype(self._dense.dtype)
        if self.packed is not None:
            return types.from_torch_dtype(self.packed.buffer.dtype) if len(self.packed) else types.NO_TYPE
        return types.from_torch_dtype(self.samples[0].dtype) if self.samples else types.NO_TYPE

    def ndim(self) -> int:
        """Dimensions of a sample (DALI's `ndim()`)."""
        if self._dense is not None:
            return self._dense.dim() - 1
        if self.packed is not None:
            return 1 if len(self.packed) else 0
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
                raise NotDenseError(
                    "TensorList.as_tensor: samples have different shapes "
                    f"({sorted(set(self.shape()))[:3]}...); pad or crop them to one shape first")
            self._dense = torch.stack(self.samples) if self.samples else torch.empty(0)
        return self._dense

    def reinterpret(self, dtype: Any) -> None:
        """DALI's `reinterpret`: the batch's bytes, in place, as elements of `dtype` of the same size."""
        if self._dense is not None:
            self._dense, self._samples = reinterpreted(self._dense, dtype), None
        elif self.samples:
            self._samples[:] = [reinterpreted(t, dtype) for t in self._samples]

    def as_reshaped_tensor(self, shape: Sequence[int]) -> torch.Tensor:
        """The batch as one tensor of `shape` (its element count must match)."""
        return self.as_tensor().reshape([int(s) for s in shape])

    def as_cpu(self) -> "TensorList":
        if self.device.type == "cpu":
            return self
        data = self._dense.cpu() if self._dense is not None else [t.cpu() for t in self.samples]
        out = _cpu_class(type(self))(data, self._layout)
        out.enum_type = self.enum_type
        return out

    asCPU = as_cpu  # DALI's legacy spelling

    def as_array(self) -> np.ndarray:
        self._no_enum_view("as_array")
        return self.as_cpu().as_tensor().numpy()

    def data_ptr(self) -> int:
        """Address of the dense batch (DALI's `data_ptr()`; samples must share a shape)."""
        return int(self.as_tensor().data_ptr())

    def copy_to_external(self, ptr: Any, *args: Any, **kwargs: Any) -> None:
        """Copies the dense batch to the memory at `ptr` (an int or a ctypes pointer)."""
        copy_to(self.as_tensor(), ptr)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.as_tensor().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.as_tensor().__dlpack_device__()

    def __repr__(self) -> str:
        return _describe_batch(self, with_data=False)

    def __str__(self) -> str:
        return _describe_batch(self, with_data=True)


_PAD = " " * 4


def _sample_text(t: torch.Tensor) -> str:
    a = t.detach().cpu()
    a = a.float() if a.dtype == torch.bfloat16 else a
    return np.array2string(a.numpy(), prefix=_PAD, edgeitems=2)


def _elide(items: list[str], keep: int | None, sep: str) -> str:
    if keep is not None and len(items) > 2 * keep + 1:
        items = items[:keep] + ["..."] + items[-keep:]
    return sep.join(items)


def _describe_batch(tl: "TensorList", with_data: bool) -> str:
    """DALI's text for a batch (DALI 2.4's print() / repr(), measured): the class name, then one
    item a line, indented by 4: the samples as NumPy prints them (print() only; a batch of more than
    5 samples and more than 1000 elements shows the first and last 2), dtype=DALIDataType.X,
    layout="..." (when there is one), device="cpu"|"gpu", num_samples=N and shape=[...] (more than
    16 shapes, or more than 5 with over 100 dimensions in all, show the first and last 2; past 75
    characters one shape a line)."""
    kind = "TensorListGPU" if tl.is_cuda else "TensorListCPU"
    shapes = tl.shape()
    items: list[str] = []
    if with_data:
        samples = list(tl.samples)
        if not samples:
            items.append("[]")
        else:
            total = sum(max(int(np.prod(s, dtype=np.int64)), 1) for s in shapes)
            keep = 2 if len(samples) > 5 and total > 1000 else None
            if keep is not None:
                samples = samples[:keep] + samples[-keep:]
            ndim = samples[0].dim()
            sep = ", " if ndim == 0 else ",\n" + "\n" * (ndim - 1) + _PAD
            texts = [_sample_text(t) for t in samples]
            if keep is not None:
                texts = texts[:keep] + ["..."] + texts[keep:]
            items.append("[" + sep.join(texts) + "]")
    items.append(f"dtype={tl.dtype}")
    if tl.layout():
        items.append(f'layout="{tl.layout()}"')
    items.append(f'device="{"gpu" if tl.is_cuda else "cpu"}"')
    items.append(f"num_samples={len(tl)}")
    texts = [str(tuple(s)) for s in shapes]
    crop = len(shapes) > 16 or (len(shapes) > 5 and len(shapes) * len(shapes[0]) > 100)
    joined = _elide(texts, 2 if crop else None, ", ")
    if len(joined) > 75:
        joined = _elide(texts, 2 if crop else None, ", \n" + _PAD + " " * len("shape=["))
    items.append(f"shape=[{joined}])")
    return f"{kind}(\n{_PAD}" + (",\n" + _PAD).join(items)


def _alike_samples(name: str, samples: list[torch.Tensor], given: Sequence[Any]) -> str:
    """Checks that the samples of a batch built from a list share the element type, the number of
    dimensions and (where a sample has one) the layout, as DALI does; returns the first sample's
    layout, the batch's when none is given."""
    if not samples:
        return ""
    layouts = [x.dali_layout() if isinstance(x, TensorCPU) else "" for x in given]
    first = samples[0]
    for i, t in enumerate(samples[1:], 1):
        if t.dtype != first.dtype:
            raise ArgumentTypeError(f"{name}: the samples of a batch share one element type; sample {i} "
                                    f"is {t.dtype}, sample 0 {first.dtype}")
        if t.dim() != first.dim() or (layouts[i] and layouts[i] != layouts[0]):
            raise ArgumentTypeError(f"{name}: sample {i} (shape {tuple(t.shape)}, layout {layouts[i]!r}) does "
                                    f"not fit a batch whose sample 0 has {first.dim()} dimensions and "
                                    f"layout {layouts[0]!r}")
    return layouts[0]


class _DaliTensorList(TensorList):
    """What DALI's TensorListCPU and TensorListGPU share (they are unrelated classes in DALI, so
    `isinstance(x, TensorListCPU)` does not hold for a device batch here either)."""

    _sample_cls: type[TensorCPU] = TensorCPU

    def __init__(self, data: Any, layout: str | None = None) -> None:
        name = type(self).__name__
        if isinstance(data, TensorList):
            dense = data._dense
            super().__init__(dense if dense is not None else list(data.samples), layout or data.layout())
        elif isinstance(data, (list, tuple)):
            for i, x in enumerate(data):  # DALI's samples of the other device's class are refused
                if isinstance(x, TensorCPU) and isinstance(x, TensorGPU) != (self._sample_cls is TensorGPU):
                    raise ArgumentTypeError(f"{name}: sample {i} is a {type(x).__name__}; a {name} is made of "
                                            f"{self._sample_cls.__name__}s (use as_cpu() or _as_gpu())")
            samples = [from_user(x, f"{name}, sample {i}") for i, x in enumerate(data)]
            own = _alike_samples(name, samples, data)
            super().__init__(samples, layout or own)
        else:
            t = from_user(data, name)
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
        return self._sample(self.samples[int(i)], int(i) % n)

    def __iter__(self):
        return (self._sample(t, i) for i, t in enumerate(self.samples))

    def _sample(self, t: torch.Tensor, i: int = -1) -> TensorCPU:
        src = self._sources
        return with_layout(t, self._sample_cls, self._layout,
                           str(src[i]) if src is not None and 0 <= i < len(src) else None)

    def as_tensor(self) -> TensorCPU:
        """The batch as one tensor (as TensorList's), as DALI's class: `as_tensor().as_cpu()`."""
        return with_layout(TensorList.as_tensor(self), self._sample_cls, "")

    def _as_gpu(self) -> "TensorListGPU":
        """DALI's copy to the device (without CUDA the data stay on the host)."""
        out = TensorListGPU(self, self._layout)
        out._sources, out.enum_type = self._sources, self.enum_type
        return out

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
        elif self.samples and any(not t.is_cuda for t in self._samples):
            self._samples = [t.cuda() for t in self._samples]

    def as_cpu(self) -> TensorListCPU:
        if self._dense is not None:
            data: Any = self._dense.cpu()
        else:
            data = [t.cpu() for t in self.samples]
        out = TensorListCPU(data, self._layout)
        out._sources, out.enum_type = self._sources, self.enum_type
        return out

    def device_id(self) -> int:
        return int(self.device.index or 0) if self.is_cuda else 0

    def at(self, i: int) -> Any:
        """Sample `i` as DALI's `at` gives it: a TensorGPU (`as_cpu()` copies it over); without
        CUDA the data are on the host and this is a NumPy array, as a host batch's."""
        t = TensorList.at(self, i)
        return self._sample(t, int(i) % len(self)) if isinstance(t, torch.Tensor) else t


def _cpu_class(cls: type) -> type:
    return TensorListCPU if issubclass(cls, _DaliTensorList) else TensorList


class _WatchableList(list):
    """A list a weak reference (and so a finalizer) can point at; a plain list cannot be."""


def user_view(tl: TensorList) -> TensorList:
    """The batch as DALI's class for its device, sharing the data (what Pipeline.run() returns)."""
    if isinstance(tl, _DaliTensorList):
        return tl
    cls = TensorListGPU if tl.is_cuda else TensorListCPU
    out = cls.__new__(cls)
    out._dense, out._samples, out._layout = tl._dense, tl._samples, tl._layout
    out._packed, out._sources, out.enum_type = tl._packed, tl._sources, tl.enum_type
    return out


def plain(tl: TensorList) -> TensorList:
    """The batch as the executor's class (`tl[i]` a torch tensor), sharing the data."""
    if type(tl) is TensorList:
        return tl
    out = TensorList.__new__(TensorList)
    out._dense, out._samples, out._layout = tl._dense, tl._samples, tl._layout
    out._packed, out.enum_type = tl._packed, tl.enum_type
    return out
