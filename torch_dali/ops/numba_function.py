"""`experimental.numba_function` (DALI's NumbaFunction plugin op, CPU): runs a user function
compiled by Numba in nopython mode on the batch's samples, written in place into outputs the op
allocates.

`run_fn(out0, ..., in0, ...)` gets NumPy arrays (per sample; with `batch_processing=True` a list
of samples per output and input). Without `setup_fn` each output has its input's shape and type;
with it, `setup_fn(outs, ins)` is called once per batch with the shapes (`outs[k][s]` is the
shape of output `k`'s sample `s`, a row to fill in). Both functions are compiled when the
pipeline is built, for the declared `out_types`/`in_types` and `outs_ndim`/`ins_ndim`, so a
function Numba cannot compile is refused there. Inputs are read-only to the function (a write
into one is a compile error: the input batch may be read by other ops). Outputs start zeroed.

Numba is optional (`pip install 'torch_dali[numba]'`); without it, building such a pipeline says
so. The GPU variant (numba.cuda kernels with `blocks`/`threads_per_block`) is not implemented:
device='gpu' is refused.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, PipelineError, TorchDaliError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema

MAX_IO = 6  # DALI's limit: at most 6 inputs and 6 outputs

# DALI element types Numba compiles for on the CPU, by name of the numba type
_NUMBA_NAMES = {
    types.DALIDataType.BOOL: "boolean", types.DALIDataType.UINT8: "uint8",
    types.DALIDataType.UINT16: "uint16", types.DALIDataType.UINT32: "uint32",
    types.DALIDataType.UINT64: "uint64", types.DALIDataType.INT8: "int8",
    types.DALIDataType.INT16: "int16", types.DALIDataType.INT32: "int32",
    types.DALIDataType.INT64: "int64", types.DALIDataType.FLOAT: "float32",
    types.DALIDataType.FLOAT64: "float64",
}


class NumbaMissingError(TorchDaliError, ImportError):
    """Numba is not installed (an ImportError, kept one through the build's error wrapping)."""


def _numba() -> Any:
    try:
        import numba
    except ImportError as e:
        raise NumbaMissingError("numba_function compiles `run_fn` with Numba, which is not installed: "
                          "pip install 'torch_dali[numba]' (or pip install numba)") from e
    return numba


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _dtype_list(v: Any) -> list[types.DALIDataType]:
    out = []
    for x in _as_list(v):
        if isinstance(x, torch.dtype):
            x = types.from_torch_dtype(x)
        if not isinstance(x, types.DALIDataType):
            raise ValueError(f"{x!r} is not a DALI data type")
        out.append(x)
    return out


def _check_dtypes(v: Any) -> str | None:
    try:
        _dtype_list(v)
    except (ValueError, KeyError, TypeError):
        return "a data type or a list of data types (types.UINT8, ...)"
    return None


def _check_ndims(v: Any) -> str | None:
    items = _as_list(v)
    ok = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0 for x in items)
    return None if ok else "a non-negative integer or a list of them"


def _check_dims3(v: Any) -> str | None:
    if v is None:
        return None
    items = _as_list(v)
    ok = len(items) == 3 and all(isinstance(x, (int, np.integer)) and x > 0 for x in items)
    return None if ok else "a list of 3 positive integers"


# compiled functions, by (function, signature): a pipeline built again (or a second op with the same
# function) does not compile again
_COMPILED: dict[tuple[Any, str], Any] = {}
_COMPILE_LOCK = threading.Lock()


def _compile(op: str, what: str, numba: Any, func: Callable[..., Any], sig: Any) -> Any:
    """`func` compiled in nopython mode for `sig`; a function Numba cannot compile is refused with
    the start of Numba's own explanation (the full one is the error's cause)."""
    key = (func, str(sig))
    with _COMPILE_LOCK:
        done = _COMPILED.get(key)
        if done is None:
            try:
                done = numba.njit(sig, nogil=True)(func)
            except numba.core.errors.NumbaError as e:
                lines = [ln for ln in str(e).splitlines() if ln.strip()][:6]
                name = getattr(func, "__qualname__", repr(func))
                raise ArgumentError(f"{op}: Numba could not compile `{what}` ({name}) in nopython mode for "
                                    f"the arguments {sig.args}: " + " | ".join(lines)) from e
            _COMPILED[key] = done
        return done


def gpu_variant_usable(throw: bool = True) -> bool:
    """DALI's `NumbaFunction._check_minimal_numba_version` / `_check_cuda_compatibility`: whether
    the GPU variant (numba.cuda kernels) can run. DALI's tests ask it to skip their GPU cases; here
    that variant is not implemented, so the answer is always no (`throw`: a RuntimeError saying so)."""
    if throw:
        raise RuntimeError("numba_function: torch_dali runs Numba functions on the CPU only; the GPU "
                           "variant (numba.cuda kernels) is not implemented")
    return False


class NumbaFunction(Operator):
    sample_wise = False

    def setup(self) -> None:
        op = self.name
        self.out_types = _dtype_list(self.args["out_types"])
        self.in_types = _dtype_list(self.args["in_types"])
        self.outs_ndim = [int(x) for x in _as_list(self.args["outs_ndim"])]
        self.ins_ndim = [int(x) for x in _as_list(self.args["ins_ndim"])]
        self.batch_processing = bool(self.args["batch_processing"])
        self.run_fn = self.args["run_fn"]
        self.setup_fn = self.args.get("setup_fn")
        n_in = len(self.node.inputs)
        if len(self.out_types) != len(self.outs_ndim):
            raise ArgumentError(f"{op}: `out_types` has {len(self.out_types)} entries and `outs_ndim` "
                                f"{len(self.outs_ndim)}; they describe the same outputs")
        if len(self.in_types) != len(self.ins_ndim):
            raise ArgumentError(f"{op}: `in_types` has {len(self.in_types)} entries and `ins_ndim` "
                                f"{len(self.ins_ndim)}; they describe the same inputs")
        if len(self.in_types) != n_in:
            raise ArgumentError(f"{op}: {n_in} input(s) given but `in_types` describes {len(self.in_types)}")
        if not 1 <= len(self.out_types) <= MAX_IO:
            raise ArgumentError(f"{op}: `out_types` must describe 1 to {MAX_IO} outputs, got {len(self.out_types)}")
        for what, ts in (("in_types", self.in_types), ("out_types", self.out_types)):
            for t in ts:
                if t not in _NUMBA_NAMES:
                    raise ArgumentError(f"{op}: `{what}` holds {t.name}; numba_function takes BOOL, the "
                                        "integer types, FLOAT and FLOAT64 (Numba has no CPU float16)")
        if self.setup_fn is None:
            if (self.out_types, self.outs_ndim) != (self.in_types, self.ins_ndim):
                raise ArgumentError(
                    f"{op}: without `setup_fn` each output takes the shape and type of the input at its "
                    f"position, so `out_types`/`outs_ndim` ({[t.name for t in self.out_types]}, {self.outs_ndim}) "
                    f"must equal `in_types`/`ins_ndim` ({[t.name for t in self.in_types]}, {self.ins_ndim}); "
                    "give a `setup_fn` to set the output shapes")
        numba = _numba()
        nt = numba.types

        def array(t: types.DALIDataType, ndim: int, readonly: bool) -> Any:
            return nt.Array(getattr(nt, _NUMBA_NAMES[t]), ndim, "C", readonly=readonly)

        outs = [array(t, d, False) for t, d in zip(self.out_types, self.outs_ndim)]
        ins = [array(t, d, True) for t, d in zip(self.in_types, self.ins_ndim)]
        self._out_list_types = [nt.ListType(a) for a in outs]
        self._in_list_types = [nt.ListType(a) for a in ins]
        if self.batch_processing:
            sig = nt.void(*self._out_list_types, *self._in_list_types)
        else:
            sig = nt.void(*outs, *ins)
        self._run = _compile(op, "run_fn", numba, self.run_fn, sig)
        self._setup = None
        if self.setup_fn is not None:
            # lists (as DALI's setup_fn gets), each entry a (samples, ndim) array: `outs[k][s]` is
            # a sample's shape to fill in; replacing a list entry changes nothing, as in DALI
            shapes = nt.Array(nt.int64, 2, "C")
            setup_sig = nt.void(nt.ListType(shapes), nt.ListType(shapes))
            self._shapes_type = shapes
            self._setup = _compile(op, "setup_fn", numba, self.setup_fn, setup_sig)
        self._typed_list = numba.typed.List

    def output_layout(self, index: int) -> str:
        return ""

    def _fail(self, msg: str) -> PipelineError:
        return PipelineError(f"{self.node.describe()}: {msg}", op=self.name, origin=self.node.origin)

    def _out_shapes(self, inputs: list[TensorList], n: int) -> list[list[tuple[int, ...]]]:
        if self._setup is None:
            return [[tuple(t.shape) for t in tl.samples] for tl in inputs]
        outs = tuple(np.zeros((n, d), np.int64) for d in self.outs_ndim)
        ins = tuple(np.array([list(t.shape) for t in tl.samples], np.int64).reshape(n, d)
                    for tl, d in zip(inputs, self.ins_ndim))
        as_list = (lambda a: self._typed_list(a) if a else self._typed_list.empty_list(self._shapes_type))  # noqa: E731
        self._setup(as_list(outs), as_list(ins))
        for k, arr in enumerate(outs):
            if (arr < 0).any():
                s = int(np.argwhere(arr < 0)[0][0])
                raise self._fail(f"setup_fn gave output {k} sample {s} the shape {arr[s].tolist()}: "
                                 "extents must be >= 0")
        return [[tuple(int(x) for x in row) for row in arr] for arr in outs]

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        n = len(inputs[0]) if inputs else ctx.batch_size
        for k, tl in enumerate(inputs):
            want = types.to_torch_dtype(self.in_types[k])
            for s, t in enumerate(tl.samples):
                if t.dtype != want:
                    raise self._fail(f"input {k} sample {s} is {t.dtype}, but `in_types[{k}]` is "
                                     f"{self.in_types[k].name}")
                if t.dim() != self.ins_ndim[k]:
                    raise self._fail(f"input {k} sample {s} has {t.dim()} dimensions, but "
                                     f"`ins_ndim[{k}]` is {self.ins_ndim[k]}")
        shapes = self._out_shapes(inputs, n)
        outs = [[torch.zeros(sh, dtype=types.to_torch_dtype(t)) for sh in per]
                for t, per in zip(self.out_types, shapes)]
        ins_np = [[t.contiguous().numpy() for t in tl.samples] for tl in inputs]
        outs_np = [[t.numpy() for t in per] for per in outs]
        if self.batch_processing:
            lists = []
            for kind, arrays in zip([*self._out_list_types, *self._in_list_types], [*outs_np, *ins_np]):
                lst = self._typed_list.empty_list(kind.item_type)
                for a in arrays:
                    lst.append(a)
                lists.append(lst)
            self._run(*lists)
        else:
            ctx.map(lambda i: self._run(*[o[i] for o in outs_np], *[x[i] for x in ins_np]), n)
        return [TensorList(per, "") for per in outs]


_ARGS = (
    Arg("run_fn", "callable", doc="the function to compile and run: run_fn(out0, ..., in0, ...), "
        "filling the outputs in place"),
    Arg("out_types", "any", doc="element type of each output (a list of types.DALIDataType)",
        check=_check_dtypes),
    Arg("in_types", "any", doc="element type of each input, checked against the data", check=_check_dtypes),
    Arg("outs_ndim", "any", doc="number of dimensions of each output", check=_check_ndims),
    Arg("ins_ndim", "any", doc="number of dimensions of each input, checked against the data",
        check=_check_ndims),
    Arg("setup_fn", "callable", None, doc="setup_fn(outs, ins): fills in the output shapes from the "
        "input shapes, once per batch; without it each output has its input's shape"),
    Arg("batch_processing", "bool", False, doc="True: run_fn is called once per batch with a list of "
        "samples per output and input; False: once per sample"),
    Arg("blocks", "any", None, doc="CUDA grid size of the GPU variant (not implemented here); "
        "accepted and unused on the CPU", check=_check_dims3),
    Arg("threads_per_block", "any", None, doc="CUDA block size of the GPU variant (not implemented "
        "here); accepted and unused on the CPU", check=_check_dims3),
)

register(OpSchema(
    name="experimental.numba_function", impl=NumbaFunction, args=_ARGS, devices=("cpu",),
    min_inputs=1, max_inputs=MAX_IO, num_outputs=lambda a: len(_as_list(a["out_types"])),
    class_name_override="NumbaFunction",
    doc="Runs a function compiled by Numba (nopython mode) on the samples, writing outputs in place "
        "(CPU; needs numba)."))
