"""Ops that reinterpret a tensor without changing its bytes: `reshape`, `reinterpret` (also the
element type), and `cast_like` (a cast to the type of a second input).

Shape rules, as DALI 2.4 documents and does: `shape` may hold one negative extent, filled in from
the volume; `rel_shape` multiplies input extents (`src_dims` picks which; -1 there inserts a new
dimension of extent 1); the shape may also come as a second input (one 1-D integer tensor per
sample). Without `layout`, the input's layout is kept when the number of dimensions is unchanged
and dropped otherwise.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from .. import types
from ..errors import ArgumentError
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema
from .arith_kernels import cast_sat
from .basic import Cast


# why a shape that does not hold the input's bytes is refused
_SAME_BYTES = "a reshape keeps each sample's size in bytes"


def _fill_negative(op: str, dims: list[float], in_shape: list[int], what: str, volume: int | None = None) -> list[int]:
    """`dims` with its one negative extent filled in from the input volume (`volume`: counted in
    the output type); `what` names where the shape came from, as given (`rel_shape` [0.5, -1])."""
    volume = math.prod(in_shape) if volume is None else volume
    neg = [i for i, d in enumerate(dims) if d < 0]
    if len(neg) > 1:
        raise ArgumentError(f"{op}: {what} has {len(neg)} negative extents; at most one may be inferred")
    out = [int(math.floor(d + 0.5)) if i not in neg else -1 for i, d in enumerate(dims)]  # DALI rounds half up
    if neg:
        w = neg[0]
        known = math.prod(d for d in out if d >= 0)
        if known == 0:
            if w < len(in_shape) < len(dims):  # the output adds dimensions: point to `src_dims` (as DALI does)
                raise ArgumentError(f"{op}: {what}: the negative extent at dimension {w} of a {len(dims)}-dimensional "
                                    f"output cannot be worked out from a {len(in_shape)}-dimensional input; map "
                                    "input dimensions to output dimensions with `src_dims`")
            raise ArgumentError(f"{op}: {what}: the negative extent at dimension {w} cannot be worked out, the other "
                                f"extents multiply to 0 (input shape {list(in_shape)})")
        if volume % known:
            raise ArgumentError(f"{op}: {what}: cannot infer the negative extent: the input has {volume} "
                                f"elements, not a multiple of {known} ({_SAME_BYTES})")
        out[w] = volume // known
    return out


class Reshape(Operator):
    """A view of the sample with another shape (and layout). A batch op: the output keeps the
    input's layout only when the number of dimensions is unchanged, known per batch."""

    sample_wise = False

    def setup(self) -> None:
        a = self.args
        given = [f"`{k}`" for k in ("shape", "rel_shape") if a.get(k) is not None or k in self.node.arg_inputs]
        if len(self.node.inputs) > 1:
            given.insert(0, "the shape input")
        if len(given) > 1:
            raise ArgumentError(f"{self.name}: the shape is given more than once ({', '.join(given)}); the shape "
                                "input, `shape` and `rel_shape` are mutually exclusive")
        self.dtype = types.to_torch_dtype(a["dtype"]) if a.get("dtype") is not None else None

    def _target(self, x: torch.Tensor, inputs: list[torch.Tensor], args: dict[str, Any],
                volume: int | None = None) -> list[int]:
        op = self.name
        get = lambda k: args[k] if k in args else self.args.get(k)  # noqa: E731
        in_shape = list(x.shape)
        src = get("src_dims")
        src = None if src is None else ([src] if isinstance(src, (int, float)) else [int(d) for d in src])
        if src is not None:
            bad = [k for k, d in enumerate(src) if not -1 <= d < len(in_shape)]
            if bad:
                raise ArgumentError(f"{op}: `src_dims` {src} holds {src[bad[0]]} at position {bad[0]}, out of bounds "
                                    f"for an input of {len(in_shape)} dimensions (entries are 0 to "
                                    f"{len(in_shape) - 1}, or -1 for a new dimension)")
        if len(inputs) > 1:
            shape = inputs[1].reshape(-1).tolist()
            return _fill_negative(op, shape, in_shape, f"the shape input {shape}")
        shape = get("shape")
        if shape is not None:
            dims = [shape] if isinstance(shape, (int, float)) else list(shape)
            return _fill_negative(op, dims, in_shape, f"`shape` {dims}")
        rel = get("rel_shape")
        if rel is not None:
            rel = [rel] if isinstance(rel, (int, float)) else list(rel)
            if src is not None:
                if len(src) != len(rel):
                    raise ArgumentError(f"{op}: `src_dims` {src} ({len(src)} entries) and `rel_shape` {rel} "
                                        f"({len(rel)} entries) must be as long as each other")
                base = [in_shape[d] if d >= 0 else 1 for d in src]
            else:
                extra = 1 if rel and rel[-1] < 0 and len(rel) == len(in_shape) + 1 else 0
                if len(rel) > len(in_shape) + extra:
                    raise ArgumentError(f"{op}: `rel_shape` {rel} has {len(rel)} extents for an input of "
                                        f"{len(in_shape)} dimensions; new dimensions come from `src_dims` "
                                        "(-1 inserts one)")
                base = in_shape[:len(rel)] + [1] * (len(rel) - len(in_shape))
            dims = [b * r if r >= 0 else -1.0 for b, r in zip(base, rel)]
            return _fill_negative(op, dims, in_shape, f"`rel_shape` {rel}", volume)
        if src is not None:
            return [in_shape[d] if d >= 0 else 1 for d in src]
        return in_shape

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = given = inputs[0]
        if self.dtype is not None and self.dtype != x.dtype:
            x, target = self._retyped(x, inputs, args)
        else:
            target = self._target(x, inputs, args)
        if math.prod(target) != x.numel():
            # why, by where the shape came from: `src_dims` alone, or a shape/rel_shape
            why = ("`src_dims` only drops, reorders or adds unit dimensions, so the element count must stay"
                   if self._src_dims_only(inputs, args) else _SAME_BYTES)
            raise ArgumentError(f"{self.name}: cannot reshape a sample of shape {list(given.shape)} ({x.numel()} "
                                f"{'elements' if x is given else 'elements as ' + str(self.args['dtype'])}) to "
                                f"{target} ({math.prod(target)} elements): {why}")
        out = x.reshape(target)
        layout = self.args.get("layout")
        if layout and len(layout) != out.dim():
            raise ArgumentError(f"{self.name}: layout {layout!r} has {len(layout)} dimensions, the output has "
                                f"{out.dim()}")
        return out

    def _src_dims_only(self, inputs: list[torch.Tensor], args: dict[str, Any]) -> bool:
        given = lambda k: k in args or self.args.get(k) is not None  # noqa: E731
        return len(inputs) < 2 and not given("shape") and not given("rel_shape")

    def _retyped(self, x: torch.Tensor, inputs: list[torch.Tensor],
                 args: dict[str, Any]) -> tuple[torch.Tensor, list[int]]:
        """The same bytes as `dtype`, and the target shape, as DALI 2.4 works it out: a `shape`
        (given or input) counts output elements; `rel_shape` scales the input's extents (a negative
        one is filled from the bytes); otherwise the shape `src_dims` makes (or the input's) has
        its innermost extent scaled by the ratio of element sizes (int32 (1,4,3) as uint8 with
        `src_dims` [0,2,1] is (1,3,16))."""
        src, dst = x.element_size(), torch.empty((), dtype=self.dtype).element_size()
        given = lambda k: k in args or self.args.get(k) is not None  # noqa: E731
        if len(inputs) > 1 or given("shape"):
            target = None
        elif given("rel_shape"):
            target = self._target(x, inputs, args, volume=x.numel() * src // dst)
        else:
            target = self._target(x, inputs, args) or [1]
            inner = target[-1]
            if (inner * src) % dst:
                raise ArgumentError(f"{self.name}: the innermost extent ({inner} x {src} bytes) is not a multiple "
                                    f"of the size of {self.args['dtype']!r} ({dst} bytes)")
            target[-1] = inner * src // dst
        if (x.numel() * src) % dst:
            raise ArgumentError(f"{self.name}: a sample of {x.numel() * src} bytes is not a whole number of "
                                f"{self.args['dtype']!r} elements ({dst} bytes each)")
        flat = x.contiguous().reshape(-1).view(torch.uint8).view(self.dtype)
        return flat, (self._target(flat, inputs, args) if target is None else target)

    def output_layout(self, index: int) -> str | None:
        if self.args.get("layout") is not None:
            return self.args["layout"]
        return None  # decided per batch below

    def run_batch(self, ctx: Any, inputs: list[Any], args: dict[str, list[Any]]) -> list[Any]:
        out = super().run_batch(ctx, inputs, args)
        return [self._fix_layout(inputs[0], out[0])]

    def _fix_layout(self, src: Any, out: Any) -> Any:
        if self.args.get("layout") is None:
            keep = src.layout() if len(out) and out.samples[0].dim() == len(src.layout()) else ""
            out.set_layout(keep)
        return out


class CastLike(Cast):
    """Casts the first input to the element type of the second."""

    def setup(self) -> None:
        self.dtype = None  # taken from the second input, sample by sample

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        return cast_sat(inputs[0], inputs[1].dtype)


_RESHAPE_ARGS = (
    Arg("shape", "ints", None, "the output shape (one extent may be negative: inferred)", tensor=True),
    Arg("rel_shape", "floats", None, "the output shape relative to the input's", tensor=True),
    Arg("src_dims", "ints", None, "which input dimensions to keep, in order (-1: a new one of extent 1)",
        tensor=True),
    Arg("layout", "layout", None, "the output layout (default: the input's if the dimensions match)"),
)
register(OpSchema(name="reshape", impl=Reshape, min_inputs=1, max_inputs=2, devices=("cpu", "gpu"),
                  input_kinds=("", "cpu"),
                  doc="The input with another shape and/or layout; the data are not copied.",
                  args=_RESHAPE_ARGS))
register(OpSchema(name="reinterpret", impl=Reshape, min_inputs=1, max_inputs=2, devices=("cpu", "gpu"),
                  input_kinds=("", "cpu"),
                  doc="The input's bytes seen as another type, shape and/or layout; the data are not copied.",
                  args=_RESHAPE_ARGS + (Arg("dtype", "dtype", None, "the output element type (same bytes)"),)))
register(OpSchema(name="cast_like", impl=CastLike, min_inputs=2, max_inputs=2, devices=("cpu", "gpu"),
                  input_kinds=("", "any"),
                  doc="Casts the first input to the type of the second (float to integer rounds and saturates)."))


class Shapes(Operator):
    """The shape of each sample as a 1-D tensor (`x.shape()` on a DataNode makes this)."""

    sample_wise = False

    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])

    def run_batch(self, ctx: Any, inputs: list[Any], args: dict[str, list[Any]]) -> list[Any]:
        from ..tensor_list import TensorList
        tl = inputs[0]
        if tl.dense is not None:
            one = torch.tensor(tl.dense.shape[1:], dtype=torch.int64).to(self.dtype)
            return [TensorList(one.unsqueeze(0).expand(len(tl), -1).clone(), "")]
        return [TensorList([torch.tensor(t.shape, dtype=torch.int64).to(self.dtype) for t in tl.samples], "")]

    def output_layout(self, index: int) -> str:
        return ""


register(OpSchema(name="shapes", impl=Shapes, devices=("cpu", "gpu"), input_devices="any",
                  doc="The shape of each sample, as a 1-D tensor.",
                  args=(Arg("dtype", "dtype", types.INT64, "the element type of the result", aliases=("type",)),)))
