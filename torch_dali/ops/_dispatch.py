"""Which kernel runs a batch or a sample, decided here for every op.

An op's own `run_batch` (for per-sample ops: `run_sample`, sample by sample) is its spec kernel:
pure torch, any device, what the tests hold every other path to. A fast kernel (native code:
the CUDA extension's batched kernels and the C helpers' CPU kernels, in `ops/fast/`) is
registered for an op class with `register_fast` (whole batches) or `register_fast_sample` (one
sample at a time, inside the executor's per-sample chains on CPU threads).
- Batches: for each batch, `run_batch` asks the op's fast kernels, in registration order, whether
  they `supports` the batch (cheap checks: device, dtypes, arguments, the extension loaded) and
  runs the first that does; a kernel may still decline once it has looked at the data (`run`
  returns None: a window outside its image, a negative size asking for a flip), and then the next
  one, or the spec, runs.
- Samples: `sample_runner` picks, once per op when the plan is built, the first per-sample kernel
  whose `supports(op)` holds for the op's constant arguments; it may still decline a sample
  (`run_sample` returns None: an input type it does not take), and then the op's `run_sample` runs.
- Shared spec functions: a `functional` function several ops call (the warp family's resampling)
  may have native stand-ins (`register_fast_function`); ops call it through `call(spec, ...)`,
  which runs the first stand-in that takes the call (a stand-in returns None for what it does not
  take), else the spec function.
No op chooses a native path itself (tests/test_layers.py checks that op modules do not import
native code).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from ..errors import ArgumentTypeError
from ..tensor_list import TensorList


class FastKernel:
    """A faster implementation of one op (or fused op pair) for the batches it `supports`: the same
    result as the op's spec kernel (tests/gpu hold each to it)."""

    #: what it is, for diagnostics ("resize_batch (CUDA extension)")
    name: str = ""

    def supports(self, op: Any, inputs: Sequence[TensorList], args: Any) -> bool:
        """Whether this kernel can run this batch (cheap: nothing is computed that `run` needs)."""
        raise NotImplementedError

    def run(self, op: Any, ctx: Any, inputs: Sequence[TensorList], args: Any) -> list[TensorList] | None:
        """The op's outputs, or None when the data turn out not to suit it (the spec runs)."""
        raise NotImplementedError


_FAST: dict[type, list[FastKernel]] = {}


def register_fast(op_class: type, kernel: FastKernel) -> None:
    """Adds `kernel` to the fast kernels tried for batches of `op_class` (exactly that class:
    a subclass computes something else)."""
    _FAST.setdefault(op_class, []).append(kernel)


def fast_kernels(op: Any) -> list[FastKernel]:
    """The fast kernels registered for `op`'s class, in the order they are tried."""
    return list(_FAST.get(type(op), ()))


def run_batch(op: Any, ctx: Any, inputs: Sequence[TensorList], args: Any) -> list[TensorList]:
    """Runs one batch of `op`: the first registered fast kernel that supports it, else the spec
    (`op.run_batch`). For a fused pair (`Operator.fuse`), `ctx` and `args` are per-op pairs. An op
    given per-frame arguments (fn.per_frame) runs on the batch unfolded into frames."""
    refusal = getattr(op, "enum_refusal", None)  # (a fused pair has none)
    if refusal:
        raise ArgumentTypeError(refusal)
    names = getattr(op, "per_frame_names", None)  # (a fused pair has none)
    if names and not getattr(op, "own_frames", False):
        from .per_frame import run_unfolded  # here: per_frame imports the op base classes

        return run_unfolded(op, ctx, inputs, args, names, _run_batch)
    return _run_batch(op, ctx, inputs, args)


def _run_batch(op: Any, ctx: Any, inputs: Sequence[TensorList], args: Any) -> list[TensorList]:
    for kernel in _FAST.get(type(op), ()):
        if kernel.supports(op, inputs, args):
            out = kernel.run(op, ctx, inputs, args)
            if out is not None:
                return out
    return op.run_batch(ctx, inputs, args)


class FastSampleKernel:
    """A faster implementation of one per-sample op on CPU: the same result as the op's
    `run_sample` (tests hold each to it), for the samples it takes."""

    #: what it is, for diagnostics ("resize (C helper)")
    name: str = ""

    def supports(self, op: Any) -> bool:
        """Whether this kernel can run `op`'s samples, from its constant arguments (asked once, at
        build, after `connect`)."""
        raise NotImplementedError

    def run_sample(self, op: Any, ctx: Any, inputs: list[torch.Tensor], args: dict[str, Any]) -> Any:
        """The op's output for this sample, or None when this sample does not suit it (the op's
        `run_sample` runs)."""
        raise NotImplementedError


_FAST_SAMPLE: dict[type, list[FastSampleKernel]] = {}

SampleRunner = Callable[[Any, list[torch.Tensor], dict[str, Any]], Any]


def register_fast_sample(op_class: type, kernel: FastSampleKernel) -> None:
    """Adds `kernel` to the per-sample kernels tried for ops of exactly `op_class`."""
    _FAST_SAMPLE.setdefault(op_class, []).append(kernel)


def sample_runner(op: Any) -> SampleRunner:
    """What runs one sample of `op` (ctx, inputs, args): the first registered per-sample kernel that
    supports it, falling back to `op.run_sample` for the samples it declines; else `op.run_sample`."""
    refusal = getattr(op, "enum_refusal", None)
    if refusal:
        def refuse(ctx: Any, inputs: list[torch.Tensor], args: dict[str, Any]) -> Any:
            raise ArgumentTypeError(refusal)
        return refuse
    for kernel in _FAST_SAMPLE.get(type(op), ()):
        if kernel.supports(op):
            spec = op.run_sample

            def run(ctx: Any, inputs: list[torch.Tensor], args: dict[str, Any],
                    kernel: FastSampleKernel = kernel) -> Any:
                out = kernel.run_sample(op, ctx, inputs, args)
                return spec(ctx, inputs, args) if out is None else out
            return run
    return op.run_sample


_FAST_FN: dict[Callable[..., Any], list[Callable[..., Any]]] = {}


def register_fast_function(spec: Callable[..., Any], fast: Callable[..., Any]) -> None:
    """Adds `fast` as a stand-in for the spec function `spec`: called with the same arguments, it
    returns the same result, or None for a call it does not take."""
    _FAST_FN.setdefault(spec, []).append(fast)


def call(spec: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`spec(*args, **kwargs)`, computed by the first registered stand-in that takes the call."""
    for fast in _FAST_FN.get(spec, ()):
        out = fast(*args, **kwargs)
        if out is not None:
            return out
    return spec(*args, **kwargs)
