"""Indexing DataNodes as DALI does: `images[0]`, `shape[1]`, `table[per_sample_index]`,
`frames[::2, 10:20]`.

`DataNode.__getitem__` (installed here, as arithmetic.py installs the operators) adds a
`_tensor_subscript` node: per leading dimension an index (`at_k`: an int or a per-sample CPU
DataNode; the dimension goes away) or a slice (`lo_k:hi_k:step_k`, each may be per-sample).
`None` in a subscript is a full slice (`:`), as in DALI 2.4. A subscript of only full slices adds
`_subscript_dim_check`, which passes the data through after checking it has enough dimensions.
`newaxis` (DALI's `dali.newaxis`, optionally named: `dali.newaxis("C")`) inserts a dimension of
extent 1 at its place in the output: the subscript, then `expand_dims` (DALI's lowering).
Not supported: `...` (DALI neither).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._utils.hacks import not_iterable
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import subscript as K
from ..tensor_list import TensorList
from ._operator import BatchContext
from ._registry import call_op, lookup, register
from ._schema import Arg, OpSchema, adopted, plain_kwargs
from .tensor_axes import BatchShapeOp

MAX_SUBSCRIPTS = 32  # DALI 2.4's schema has at_0..at_31 (and lo/hi/step alike)
_PARTS = ("at", "lo", "hi", "step")


def _as_index(op: str, name: str, v: Any) -> int | None:
    if v is None:
        return None
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise ArgumentTypeError(f"{op}: `{name}` must be an integer per sample, got {v!r}")
    return int(v)


class TensorSubscript(BatchShapeOp):
    """Per sample: the subscripts its arguments give (constants or per-sample values)."""

    def setup(self) -> None:
        self.count = int(self.args["num_subscripts"])
        if not 0 <= self.count <= MAX_SUBSCRIPTS:
            raise ArgumentError(f"{self.name}: `num_subscripts` must be in [0, {MAX_SUBSCRIPTS}], got {self.count}")
        given = [k for k in range(MAX_SUBSCRIPTS) for p in _PARTS if self._given(f"{p}_{k}")]
        beyond = [k for k in given if k >= self.count]
        if beyond:
            raise ArgumentError(f"{self.name}: a subscript is given for dimension {beyond[0]}, but "
                                f"`num_subscripts` is {self.count}")
        self.indexed = []  # per subscripted dimension: whether it is indexed (and goes away)
        for k in range(self.count):
            has_at = self._given(f"at_{k}")
            if has_at and any(self._given(f"{p}_{k}") for p in ("lo", "hi", "step")):
                raise ArgumentError(f"{self.name}: dimension {k} has both an index (`at_{k}`) and a range")
            self.indexed.append(has_at)
        self.per_sample = any(name.split("_")[0] in _PARTS for name in self.node.arg_inputs)

    def _check_index_batch(self, name: str, index: TensorList) -> None:
        """DALI 2.4 takes a per-sample subscript only as an integer scalar: float and bool samples
        are refused, and so is a 1-element 1-D sample (the argument values would hold its number)."""
        for i, t in enumerate(index):
            if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
                raise ArgumentTypeError(f"{self.name}: `{name}` must be of an integer type, got "
                                        f"{str(t.dtype).replace('torch.', '')} (sample {i})")
            if t.dim() != 0:
                raise ArgumentError(f"{self.name}: `{name}` must be a scalar (0-d) per sample, got a "
                                    f"{t.dim()}-d sample of shape {list(t.shape)} (sample {i})")

    def _given(self, name: str) -> bool:
        return self.args.get(name) is not None or name in self.node.arg_inputs

    def _subs(self, args: dict[str, list[Any]], i: int) -> list[K.Subscript]:
        subs = []
        for k in range(self.count):
            vals = [_as_index(self.name, f"{p}_{k}", self.get(args, f"{p}_{k}", i)) for p in _PARTS]
            subs.append(K.Subscript(*vals))
        return subs

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        for name, index in ctx.arg_batches.items():
            self._check_index_batch(name, index)
        tl = inputs[0]
        n = len(tl)
        self.sample_ndim(tl)
        layout = K.kept_layout(tl.layout(), self.indexed)
        try:
            if tl.dense is not None and not self.per_sample and n:
                first = self._subs(args, 0)
                K.subscript(tl.dense[0], first)  # checks them on one sample: every sample has its shape
                # the same subscripts for every sample: one view of the whole batch
                return [TensorList(K.subscript(tl.dense, [K.Subscript()] + first), layout)]
            outs = []
            for i, t in enumerate(tl.samples):
                try:
                    outs.append(K.subscript(t, self._subs(args, i)))
                except K.SubscriptError as e:
                    raise ArgumentError(f"{self.name}: {e} (sample {i}, of shape {list(t.shape)})") from None
        except K.SubscriptError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        if outs and all(o.shape == outs[0].shape for o in outs) and outs[0].device.type == "cpu":
            return [TensorList(torch.stack(outs), layout)]
        return [TensorList(outs, layout)]


class SubscriptDimCheck(BatchShapeOp):
    """The input as it is, once it is known to have at least `num_subscripts` dimensions."""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        ndim = self.sample_ndim(tl)
        want = int(self.args["num_subscripts"])
        if len(tl) and want > ndim:
            raise ArgumentError(f"{self.name}: too many indices ({want}) for a {ndim}-D tensor")
        return [tl]


def _subscript_args() -> tuple[Arg, ...]:
    docs = {"at": "index in dimension {k} (the dimension goes away)", "lo": "slice start in dimension {k}",
            "hi": "slice end (exclusive) in dimension {k}", "step": "slice step in dimension {k}"}
    return tuple(Arg(f"{p}_{k}", "int", None, docs[p].format(k=k), tensor=True)
                 for k in range(MAX_SUBSCRIPTS) for p in _PARTS)


register(OpSchema(
    name="_tensor_subscript", impl=TensorSubscript, class_name_override="_TensorSubscript",
    doc="NumPy-like indexing of every sample (what `node[...]` adds): an index or a slice per leading dimension.",
    args=(Arg("num_subscripts", "int", doc="how many leading dimensions are subscripted"), *_subscript_args()),
))
register(OpSchema(
    name="_subscript_dim_check", impl=SubscriptDimCheck, class_name_override="_SubscriptDimCheck",
    doc="Passes the input through after checking it has at least `num_subscripts` dimensions (`node[:, :]`).",
    args=(Arg("num_subscripts", "int", doc="the number of full-range subscripts"),),
))


# -- DataNode.__getitem__ ------------------------------------------------------------------------------

class NewAxis:
    """DALI's `newaxis`: in a DataNode subscript, a new dimension of extent 1; `newaxis("C")` names
    it in the output's layout (name every new axis of a subscript, or none)."""

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"newaxis: the axis name must be a one-character string, got {type(name).__name__}")
            if len(name) != 1:
                raise ValueError(f"newaxis: the axis name must be one character, got {name!r}")
        self.name = name

    def __call__(self, name: str | None = None) -> "NewAxis":
        return NewAxis(name)

    def __repr__(self) -> str:
        return "newaxis" if self.name is None else f"newaxis({self.name!r})"


newaxis = NewAxis()


def getitem(node: Any, key: Any) -> Any:
    """`node[key]`: DALI's subscript rules (see the module's doc)."""
    node = adopted(node)  # made outside the pipeline being traced: copy it in first, as an op's inputs are
    every = key if isinstance(key, tuple) else (key,)
    keys = [v for v in every if not isinstance(v, NewAxis)]  # the subscripts of input dimensions
    new_axes: list[int] = []  # output positions of the new dimensions
    names = []
    out_dim = 0
    for v in every:
        if isinstance(v, NewAxis):
            new_axes.append(out_dim)
            if v.name is not None:
                names.append(v.name)
        if v is None or isinstance(v, (slice, NewAxis)):
            out_dim += 1
    if names and len(names) != len(new_axes):
        raise ValueError("DataNode subscript: name every new axis (newaxis('X')) or none of them")
    if len(keys) > MAX_SUBSCRIPTS:
        raise ArgumentError(f"DataNode subscript: at most {MAX_SUBSCRIPTS} dimensions can be subscripted, "
                            f"got {len(keys)}")
    sliced = _subscript(node, keys, skip_check=bool(new_axes) and isinstance(every[-1], NewAxis))
    if not new_axes:
        return sliced
    return call_op(lookup("expand_dims"), (sliced,), {"axes": new_axes, "new_axis_names": "".join(names)})


def _subscript(node: Any, keys: list[Any], skip_check: bool) -> Any:
    """`node` subscripted by `keys` (no new axes): `_tensor_subscript`, or for full slices only the
    dimension check (left out when a new axis comes last: expand_dims checks the rank then)."""
    from ..graph.node import DataNode
    kwargs: dict[str, Any] = {}
    for k, v in enumerate(keys):
        if v is None:
            continue  # a full slice, as DALI reads it
        if v is Ellipsis:
            raise NotImplementedError("DataNode subscript: `...` (Ellipsis) is not supported (nor in DALI)")
        if isinstance(v, slice):
            for part, x in (("lo", v.start), ("hi", v.stop), ("step", v.step)):
                if x is not None:
                    kwargs[f"{part}_{k}"] = _index_value(x, f"{part}_{k}")
            continue
        kwargs[f"at_{k}"] = _index_value(v, f"at_{k}")
    if not kwargs:
        if skip_check:
            return node
        return call_op(lookup("_subscript_dim_check"), (node,), {"num_subscripts": len(keys)})
    kwargs = plain_kwargs({**kwargs, "num_subscripts": len(keys)})
    if any(isinstance(x, DataNode) and x.device != "cpu" for x in kwargs.values()):
        raise ArgumentError("DataNode subscript: a per-sample index must be on the CPU (use .cpu() on it)")
    return call_op(lookup("_tensor_subscript"), (node,), kwargs)


def _index_value(v: Any, where: str) -> Any:
    from .. import types
    from ..graph.node import DataNode
    if isinstance(v, (DataNode, types.ScalarConstant)):
        return v
    if isinstance(v, (float, str, bytes)) or isinstance(v, bool):
        raise TypeError(f"DataNode subscript: invalid index type {type(v).__name__} for `{where}`; "
                        "use integers, slices or per-sample DataNodes")
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if not isinstance(v, (int, np.integer)):
        raise TypeError(f"DataNode subscript: invalid index type {type(v).__name__} for `{where}`")
    return int(v)


def _install() -> None:
    from ..graph.node import DataNode
    DataNode.__getitem__ = getitem  # type: ignore[attr-defined]
    # a DataNode is not a sequence: without this, Python would try node[0], node[1], ... forever;
    # and, as in DALI, not a collections.abc.Iterable (code tests outputs with isinstance)
    not_iterable(DataNode)


_install()
