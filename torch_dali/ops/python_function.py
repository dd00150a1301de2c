"""Python functions as ordinary ops: PythonFunction (NumPy/CuPy), TorchPythonFunction (torch),
DLTensorPythonFunction (DLPack). They run inside the normal executor, prefetching on.

Reproducibility: before each call the global RNGs (torch CPU and CUDA, `random`, NumPy) are seeded
from the op's counter-based key for that sample, so a torchvision random transform inside the
function draws the same parameters for the same pipeline seed. The cost: calls of one op run one
after another on the pipeline's thread (a global RNG cannot be shared by threads and stay
reproducible) plus ~20 µs of seeding per call. Dense GPU batches of a per-sample torch function
take a faster path: the function is vectorised with `torch.vmap` (one launch for the batch) when it
is vmappable and draws no random numbers.
"""
from __future__ import annotations

import contextlib
import os
import queue
import random as _pyrandom
import threading
import traceback
import weakref
from typing import Any, Callable, Iterator

import numpy as np
import torch
import torch.utils.dlpack

from .. import types
from .._thread_priority import lower_this_thread
from ..errors import PipelineError
from ..rng import hash_key
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, positive

MAX_INPUTS = 64


_RNG_LOCK = threading.RLock()
# the callers' RNG states while a call runs seeded (outermost first): a child forked meanwhile
# gets them back instead of a sample's seeded state
_SAVED: list[tuple[Any, ...]] = []


def _after_fork_in_child() -> None:
    """The forking thread is the child's only thread: a lock a parent thread held is dead, and
    the global RNGs are put back to what the caller had if a parent thread was inside `_seeded`."""
    global _RNG_LOCK
    _RNG_LOCK = threading.RLock()
    if _SAVED:
        torch_state, py_state, np_state, _ = _SAVED[0]
        torch.default_generator.set_state(torch_state)
        _pyrandom.setstate(py_state)
        np.random.set_state(np_state)
        _SAVED.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def _seeded(seed: int, device: torch.device) -> Iterator[None]:
    """Runs the body with the global RNGs (torch on the op's device, `random`, NumPy) seeded for
    this sample, then puts the previous states back, so the training loop's own draws (dropout...)
    are not disturbed. The lock keeps two pipelines' Python ops from seeding over each other."""
    with _RNG_LOCK:
        gen_cuda = torch.cuda.default_generators[device.index or 0] if device.type == "cuda" else None
        saved = (torch.default_generator.get_state(), _pyrandom.getstate(), np.random.get_state(),
                 gen_cuda.get_state() if gen_cuda is not None else None)
        _SAVED.append(saved)
        torch.default_generator.manual_seed(seed)
        _pyrandom.seed(seed)
        np.random.seed(seed & 0xFFFFFFFF)
        if gen_cuda is not None:
            gen_cuda.manual_seed(seed)
        try:
            yield
        finally:
            _SAVED.pop()
            torch.default_generator.set_state(saved[0])
            _pyrandom.setstate(saved[1])
            np.random.set_state(saved[2])
            if gen_cuda is not None:
                gen_cuda.set_state(saved[3])


class _Hung(Exception):
    """A watched call did not return in time (the function's own TimeoutError stays its own)."""


# Watcher threads told to end (closed, or left with a call past its timeout). The executor's exit
# handler waits for them, bounded (`executor.watch`): one still inside torch as the interpreter
# finalizes aborts the process ("terminate called without an active exception").
_ENDING: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


def ending_threads() -> list[threading.Thread]:
    return [t for t in list(_ENDING) if t.is_alive()]


class _Watcher:
    """Runs an op's calls on a daemon thread of its own, so a call that never returns is reported
    after `timeout` and left behind without keeping the interpreter from exiting (a
    ThreadPoolExecutor's threads are joined at exit: one hung call would hang the exit)."""

    def __init__(self, name: str) -> None:
        self._jobs: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        lower_this_thread()
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args, stream, box, done = job
            try:
                with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
                    box.append((True, fn(*args)))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box.append((False, e))
            # the call's arguments die now, not with this thread's frame (at exit, maybe mid-finalization)
            job = fn = args = stream = box = None
            done.set()

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], stream: Any, timeout: float) -> Any:
        """fn(*args) on the watcher's thread, on the caller's CUDA stream (the current stream is
        per thread); _Hung when it has not returned in time."""
        box: list[tuple[bool, Any]] = []
        done = threading.Event()
        self._jobs.put((fn, args, stream, box, done))
        if not done.wait(timeout):
            raise _Hung
        ok, value = box[0]
        if ok:
            return value
        raise value

    def close(self) -> None:
        """The thread ends after the call it is in, if any (a hung one: never, but it is a daemon)."""
        self._jobs.put(None)
        _ENDING.add(self._thread)


class OutputLayoutError(PipelineError, ValueError):
    """An `output_layouts` entry whose length is not the returned samples' number of dimensions:
    a PipelineError naming the op, and a ValueError as DALI raises for it."""


class _PythonFunctionBase(Operator):
    sample_wise = False
    order_sensitive = True  # a user's function may keep state between batches
    kind = "python_function"
    no_input_sets = True  # as DALI's: a list of DataNodes as an input is a TypeError, not input sets
    no_prune = True  # runs even when no output is used (DALI's schema says so: side effects)

    def setup(self) -> None:
        self.function: Callable[..., Any] = self.args["function"]
        self.num_outputs = int(self.args["num_outputs"])
        layouts = self.args.get("output_layouts")
        if isinstance(layouts, (list, tuple)) and len(layouts) > self.num_outputs:
            raise PipelineError(f"{self.name} '{self.node.name}': the length of `output_layouts` ({len(layouts)}) "
                                f"is greater than the number of outputs ({self.num_outputs})",
                                op=self.name, origin=self.node.origin)
        self.batch_processing = bool(self.args["batch_processing"])
        self._vmap_ok: bool | None = None if self.kind == "torch_python_function" else False
        self._vmapped: Any = None
        self.fname = getattr(self.function, "__qualname__", repr(self.function))
        self.timeout = self.args.get("timeout")
        self.reproducible = bool(self.args.get("reproducible", True))
        self._watch: Any = None

    def _rng(self, key: int, device: torch.device) -> Any:
        if not self.reproducible:
            return contextlib.nullcontext()
        return _seeded(key & 0x7FFFFFFFFFFFFFFF, device)

    def _call(self, *args: Any) -> Any:
        """Calls the function; with `timeout`, on a watcher thread so a hung call is reported."""
        if self.timeout is None:
            return self.function(*args)
        if self._watch is None:
            self._watch = _Watcher(f"torch_dali-pyfn-{self.node.name}")
        stream = torch.cuda.current_stream(self.device) if self.device.type == "cuda" else None
        try:
            return self._watch.call(self.function, args, stream, self.timeout)
        except _Hung:
            # the hung call keeps its (daemon) thread; the next call gets a fresh one
            self._watch.close()
            self._watch = None
            raise TimeoutError(f"did not return within timeout={self.timeout} s (the call is left "
                               "running on a daemon thread: Python calls cannot be interrupted)") from None

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    # conversions between the executor's torch tensors and what the function sees ---------------
    def to_user(self, t: torch.Tensor) -> Any:
        return t

    def from_user(self, x: Any, where: str) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return x
        raise TypeError(f"{where} returned {type(x).__name__}, expected a torch.Tensor")

    # running -----------------------------------------------------------------------------------
    def _fail(self, where: str, e: BaseException) -> PipelineError:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        return PipelineError(f"{self.node.describe()}: function {self.fname} failed {where}: "
                             f"{type(e).__name__}: {e}\n--- traceback of the function ---\n{tb}",
                             op=self.name, origin=self.node.origin)

    def _outputs(self, result: Any, where: str) -> tuple[Any, ...]:
        if self.num_outputs == 0:
            return ()
        if self.num_outputs == 1:
            # DALI 2.4 takes a tuple's first value as the one output
            return (result[0],) if isinstance(result, tuple) and result else (result,)
        # several outputs come as a tuple (DALI 2.4 refuses a list there too)
        if not isinstance(result, tuple) or len(result) != self.num_outputs:
            raise TypeError(f"{where} returned {type(result).__name__}"
                            f"{'' if not isinstance(result, tuple) else f' of {len(result)}'}; "
                            f"expected a tuple of num_outputs={self.num_outputs} values")
        return tuple(result)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        cuda = ctx.device.type == "cuda"
        n = len(inputs[0]) if inputs else ctx.batch_size
        if self._vmap_ok is not False and cuda and not self.batch_processing and inputs and self.timeout is None:
            outs = self._try_vmap(inputs)
            if outs is not None:
                return outs
        per_out: list[list[torch.Tensor]] = [[] for _ in range(self.num_outputs)]
        if self.batch_processing:
            where = f"for batch {ctx.iteration}"
            try:
                with self._rng(hash_key(self.node.seed, ctx.iteration), ctx.device):
                    result = self._call(*[[self.to_user(t) for t in tl.samples] for tl in inputs])
                outs = self._outputs(result, f"{self.fname} {where}")
                for k, o in enumerate(outs):
                    if not isinstance(o, (list, tuple)) or len(o) != n:
                        raise TypeError(f"{self.fname} {where}: output {k} must be a list of {n} samples "
                                        f"(batch_processing=True), got {type(o).__name__}")
                    per_out[k] = [self.from_user(x, f"{self.fname} output {k} sample {i}") for i, x in enumerate(o)]
            except PipelineError:
                raise
            except Exception as e:
                raise self._fail(where, e) from e
        else:
            for i in range(n):
                sc = ctx.sample(i)
                where = f"on sample {i}" + (f" ({sc.source})" if sc.source else "")
                try:
                    with self._rng(hash_key(self.node.seed, ctx.iteration, i), ctx.device):
                        result = self._call(*[self.to_user(tl[i]) for tl in inputs])
                    for k, o in enumerate(self._outputs(result, f"{self.fname} {where}")):
                        per_out[k].append(self.from_user(o, f"{self.fname} output {k} {where}"))
                except PipelineError:
                    raise
                except Exception as e:
                    raise self._fail(where, e) from e
        return [self._check(k, o, ctx.device) for k, o in enumerate(per_out)]

    def _try_vmap(self, inputs: list[TensorList]) -> list[TensorList] | None:
        if not all(tl.is_dense_tensor() for tl in inputs):
            return None
        try:
            if self._vmapped is None:  # made once: making it costs as much as a small call
                self._vmapped = torch.vmap(self.function, randomness="error")
            result = self._vmapped(*[tl.as_tensor() for tl in inputs])
            outs = self._outputs(result, self.fname)
            if not all(isinstance(o, torch.Tensor) for o in outs):
                raise TypeError
        except Exception:  # noqa: BLE001 - not vmappable: use the per-sample loop from now on
            self._vmap_ok = False
            return None
        self._vmap_ok = True
        for k, o in enumerate(outs):
            self._check_dtype(k, o.dtype)
        return [TensorList(o, self._layout(k, o.dim() - 1)) for k, o in enumerate(outs)]

    def _check_dtype(self, k: int, dtype: torch.dtype) -> None:
        """An element type the pipeline has no DALIDataType for (complex) is refused here: DALI 2.4
        reads complex64 samples as float32 pairs, without an error."""
        try:
            types.from_torch_dtype(dtype)
        except KeyError:
            raise PipelineError(f"{self.name} '{self.node.name}': function {self.fname} output {k} is {dtype}, an "
                                "element type pipelines cannot hold (they have booleans, integers and floats); "
                                "convert it, e.g. complex to two real channels", op=self.name,
                                origin=self.node.origin) from None

    def _check(self, k: int, samples: list[torch.Tensor], device: torch.device) -> TensorList:
        if samples:
            first = samples[0]
            for i, t in enumerate(samples):
                if t.dtype != first.dtype or t.dim() != first.dim() or t.device.type != first.device.type:
                    raise PipelineError(
                        f"{self.name} '{self.node.name}': function {self.fname} output {k} is inconsistent "
                        f"across the batch: sample 0 is {first.dtype} {tuple(first.shape)} on {first.device}, "
                        f"sample {i} is {t.dtype} {tuple(t.shape)} on {t.device}; every sample must share "
                        "dtype, number of dimensions and device", op=self.name, origin=self.node.origin)
            self._check_dtype(k, first.dtype)
            if first.device.type != device.type:
                samples = [t.to(device) for t in samples]
        return TensorList(samples, self._layout(k, samples[0].dim() if samples else None))

    def _layout(self, k: int, ndim: int | None) -> str:
        """Output k's layout from `output_layouts`, for samples of `ndim` dimensions."""
        layouts = self.args.get("output_layouts")
        layout = layouts[k] if isinstance(layouts, list) and k < len(layouts) else (layouts or "")
        layout = layout if isinstance(layout, str) else ""
        if layout and ndim is not None and len(layout) != ndim:
            # a layout must name every dimension; DALI 2.4 refuses the batch (ValueError)
            raise OutputLayoutError(
                f"{self.name} '{self.node.name}': output_layouts gives output {k} the layout '{layout}' "
                f"({len(layout)} dimensions), but function {self.fname} returned {ndim}-dimensional samples",
                op=self.name, origin=self.node.origin)
        return layout

    def output_layout(self, index: int) -> str:
        return ""


class PythonFunction(_PythonFunctionBase):
    """NumPy arrays on the CPU, CuPy arrays on the GPU; both zero-copy."""

    def setup(self) -> None:
        super().setup()
        self._cupy: Any = None
        if self.device.type == "cuda":
            try:
                import cupy
            except ImportError as e:
                raise ImportError("PythonFunction on the GPU hands the function CuPy arrays: install "
                                  "cupy (pip install 'torch_dali[gpu]') or use TorchPythonFunction") from e
            self._cupy = cupy

    def to_user(self, t: torch.Tensor) -> Any:
        if t.device.type == "cpu":
            return t.numpy()
        return self._cupy.from_dlpack(t)

    def from_user(self, x: Any, where: str) -> torch.Tensor:
        if isinstance(x, np.ndarray) or np.isscalar(x):
            arr = np.asarray(x)
            if any(s < 0 for s in arr.strides) or not arr.flags.writeable:
                arr = np.ascontiguousarray(arr).copy()
            return torch.from_numpy(arr)
        if self._cupy is not None and isinstance(x, self._cupy.ndarray):
            return torch.from_dlpack(x)
        if isinstance(x, torch.Tensor):
            return x
        raise TypeError(f"{where} returned {type(x).__name__}, expected a NumPy array"
                        + (" or CuPy array" if self._cupy is not None else ""))

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if self._cupy is not None and ctx.stream is not None:
            with self._cupy.cuda.ExternalStream(ctx.stream.cuda_stream, ctx.device.index or 0):
                return super().run_batch(ctx, inputs, args)
        return super().run_batch(ctx, inputs, args)


class TorchPythonFunction(_PythonFunctionBase):
    """torch tensors in and out; on the GPU the function runs on the pipeline's stream."""

    kind = "torch_python_function"


class DLTensorPythonFunction(_PythonFunctionBase):
    """DLPack capsules in; capsules (or anything with __dlpack__) out."""

    def to_user(self, t: torch.Tensor) -> Any:
        return torch.utils.dlpack.to_dlpack(t)

    def from_user(self, x: Any, where: str) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return x
        if hasattr(x, "__dlpack__") or type(x).__name__ == "PyCapsule":
            return torch.utils.dlpack.from_dlpack(x)
        raise TypeError(f"{where} returned {type(x).__name__}, expected a DLPack capsule")


def dlpack_from_array(array: Any) -> Any:
    """A DLPack capsule sharing a NumPy array's memory (strides kept): DALI's
    `ops._dlpack_from_array`, what DLTensorPythonFunction's inputs are."""
    import numpy as np
    if not isinstance(array, np.ndarray):
        raise TypeError(f"_dlpack_from_array: expected a NumPy array, got {type(array).__name__}")
    if any(s < 0 for s in array.strides):  # np.fliplr's views: DALI takes them, torch has no negative strides
        array = np.ascontiguousarray(array)
    return torch.utils.dlpack.to_dlpack(torch.from_numpy(array))


def dlpack_to_array(capsule: Any) -> Any:
    """The NumPy array over a CPU DLPack capsule's memory (no copy): DALI's `ops._dlpack_to_array`."""
    t = torch.utils.dlpack.from_dlpack(capsule)
    if t.device.type != "cpu":
        raise TypeError(f"_dlpack_to_array: the capsule holds {t.device} memory; NumPy arrays are CPU memory")
    return t.numpy()


def _args(batch_default: bool) -> tuple[Arg, ...]:
    return (
        Arg("function", "callable", doc="the Python function to call"),
        Arg("num_outputs", "int", 1, doc="how many outputs the function returns",
            check=lambda v: None if v >= 0 else ">= 0"),
        Arg("batch_processing", "bool", batch_default,
            doc="True: the function gets and returns lists of samples; False: called per sample"),
        Arg("output_layouts", "strs", None, doc="layout of each output, e.g. 'HWC'"),
        Arg("timeout", "float", None, doc="seconds a call may take before the pipeline reports it",
            check=positive),
        Arg("reproducible", "bool", True, doc="seed the global RNGs per sample (then restore them) so "
            "random transforms inside the function repeat for a pipeline seed; False skips the seeding "
            "and its lock"),
        Arg("synchronize_stream", "bool", False, doc="accepted for DALI compatibility; the function "
            "already runs on the pipeline's stream, so no host synchronisation is needed"),
    )


_COMMON = dict(min_inputs=0, max_inputs=MAX_INPUTS, num_outputs=lambda a: int(a["num_outputs"]))
register(OpSchema(name="python_function", impl=PythonFunction, args=_args(False), **_COMMON,
                  doc="Runs a Python function on NumPy (CPU) or CuPy (GPU) arrays.",
                  legacy_names=("PythonFunction",)))
register(OpSchema(name="torch_python_function", impl=TorchPythonFunction, args=_args(False), **_COMMON,
                  doc="Runs a Python function on torch tensors (CPU or CUDA), zero-copy.",
                  legacy_names=("TorchPythonFunction",)))
register(OpSchema(name="dl_tensor_python_function", impl=DLTensorPythonFunction, args=_args(True), **_COMMON,
                  doc="Runs a Python function on DLPack capsules.",
                  legacy_names=("DLTensorPythonFunction",)))
