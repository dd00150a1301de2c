"""Ops that rearrange a sample's axes: transpose, squeeze, expand_dims and element_extract.

Their output layout follows the batch's input layout (DALI's rules, read per batch), so they run
as batch ops and tell the ops after them that their layout is known only once a batch ran
(`layout_known`). A dense batch is handled as one tensor (one permute, one reshape, one gather)."""
from __future__ import annotations

from typing import Any, Sequence

import torch

from ..errors import ArgumentError
from ..functional import tensor_axes as K
from ..tensor_list import TensorList
from ._operator import BatchContext, BuildArgumentError, Operator
from ._registry import register
from ._schema import Arg, OpSchema


class BatchShapeOp(Operator):
    """A batch op whose output layout is worked out from each batch's input layout."""

    sample_wise = False

    def layout_known(self, index: int) -> bool:
        return False

    def output_layout(self, index: int) -> str | None:
        return ""

    def get(self, args: dict[str, list[Any]], name: str, i: int) -> Any:
        return args[name][i] if name in args else self.args.get(name)

    def sample_ndim(self, tl: TensorList) -> int:
        """The number of dimensions every sample of the batch has (DALI requires one)."""
        if tl.dense is not None:
            return tl.dense.dim() - 1
        dims = {t.dim() for t in tl.samples}
        if len(dims) > 1:
            raise ArgumentError(f"{self.name}: the samples of a batch must have the same number of dimensions, "
                                f"got {sorted(dims)}")
        return dims.pop() if dims else 0


def int_list(v: Any) -> list[int]:
    """A per-sample or constant list-of-integers argument as a list."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [int(a) for a in v]
    return [int(v)]


class Transpose(BatchShapeOp):
    """Output dimension i is input dimension perm[i] (default: all reversed)."""

    def setup(self) -> None:
        lay = self.args.get("output_layout")
        if lay is not None and not lay:
            raise ArgumentError(f"{self.name}: an empty `output_layout` is not supported; leave it out")
        perm = self.args.get("perm")
        if perm:  # not a permutation of its own length: wrong for any input, so refused at build (DALI 2.4)
            try:
                K.check_perm(self.name, perm, len(perm))
            except ArgumentError as e:
                raise BuildArgumentError(str(e)) from None

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        ndim = self.sample_ndim(tl)
        perm = self.args.get("perm")
        perm = list(range(ndim))[::-1] if perm is None else K.check_perm(self.name, perm, ndim)
        layout = self._layout(tl.layout(), perm, ndim)
        if len(tl) == 0:
            return [TensorList([], layout)]
        if tl.dense is not None:
            return [TensorList(K.transpose(tl.dense, perm, batched=True), layout)]
        return [TensorList(ctx.map(lambda i: K.transpose(tl[i], perm), len(tl)), layout)]

    def _layout(self, layout: str, perm: Sequence[int], ndim: int) -> str:
        given = self.args.get("output_layout")
        if given is not None:
            if len(given) != ndim:
                raise ArgumentError(f'{self.name}: `output_layout` "{given}" has {len(given)} dimensions, the '
                                    f"samples have {ndim}")
            return given
        if self.args["transpose_layout"] and layout:
            return "".join(layout[p] for p in perm)
        return layout


class Squeeze(BatchShapeOp):
    """Removes dimensions of extent 1 named by `axes` (per sample) or `axis_names`."""

    def setup(self) -> None:
        has_axes = self.args.get("axes") is not None or "axes" in self.node.arg_inputs
        has_names = self.args.get("axis_names") is not None
        if has_axes and has_names:
            raise ArgumentError(f"{self.name}: both `axes` and `axis_names` are given; give only one of them")
        if not has_axes and not has_names:
            raise ArgumentError(f"{self.name}: give `axes` or `axis_names` (the dimensions to remove)")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout = tl.layout()
        ndim = self.sample_ndim(tl)
        names = self.args.get("axis_names")
        fixed = K.axes_from_names(self.name, names, layout) if names is not None else None
        n = len(tl)
        per = [fixed if fixed is not None else int_list(self.get(args, "axes", i)) for i in range(n)]
        axes0 = per[0] if per else (fixed or [])
        out_layout = "".join(a for k, a in enumerate(layout) if k not in axes0) if layout else ""
        if any(sorted(p) != sorted(axes0) for p in per):
            raise ArgumentError(f"{self.name}: every sample must remove the same dimensions, got {per}")
        if tl.dense is not None and n:
            shape = K.squeeze_shape(self.name, list(tl.dense.shape[1:]), axes0)
            return [TensorList(tl.dense.reshape([n, *shape]), out_layout)]
        outs = [t.reshape(K.squeeze_shape(self.name, list(t.shape), per[i])) for i, t in enumerate(tl.samples)]
        return [TensorList(outs, out_layout)]


class ExpandDims(BatchShapeOp):
    """Inserts dimensions of extent 1 at output positions `axes` (named by `new_axis_names`)."""

    def setup(self) -> None:
        axes, names = self.args["axes"], self.args["new_axis_names"]
        if names and len(names) != len(axes):
            raise ArgumentError(f"{self.name}: `axes` {list(axes)} adds {len(axes)} dimensions, `new_axis_names` "
                                f"{names!r} names {len(names)}; give one name per new dimension")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        axes, names = int_list(self.args["axes"]), self.args["new_axis_names"] or ""
        ndim = self.sample_ndim(tl)
        layout = tl.layout()
        K.expand_shape(self.name, [1] * ndim, axes)  # checks the positions before the layout is built
        if names:
            if ndim > 0 and not layout:
                raise ArgumentError(f"{self.name}: `new_axis_names` is given, but this {ndim}-dimensional input has no "
                                    "layout to insert the names into")
            out_layout = K.expand_layout(layout, axes, names)
        else:
            out_layout = "" if axes else layout  # new unnamed dimensions clear the layout (DALI)
        n = len(tl)
        if tl.dense is not None and n:
            shape = K.expand_shape(self.name, list(tl.dense.shape[1:]), axes)
            return [TensorList(tl.dense.reshape([n, *shape]), out_layout)]
        return [TensorList([t.reshape(K.expand_shape(self.name, list(t.shape), axes)) for t in tl.samples],
                           out_layout)]


class ElementExtract(BatchShapeOp):
    """One output per entry of `element_map`: that element of the outermost (F) axis."""

    def setup(self) -> None:
        emap = int_list(self.args["element_map"])
        if not emap:
            raise ArgumentError(f"{self.name}: `element_map` must name at least one element")
        self.emap = emap

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        # Checked when the op runs, as DALI does (its errors are then RuntimeErrors, not build-time ones).
        neg = [e for e in self.emap if e < 0]
        if neg:
            raise ArgumentError(f"{self.name}: `element_map` {self.emap} holds the negative index {neg[0]}")
        tl = inputs[0]
        layout = tl.layout()
        ndim = self.sample_ndim(tl)
        if ndim < 2 and len(tl):
            raise ArgumentError(f"{self.name}: the input has {ndim} dimension(s); it needs two or more (the frames, "
                                "then each element's own)")
        if layout and layout[0] != "F":
            raise ArgumentError(f"{self.name}: the input layout '{layout}' is not a sequence's (its first name is "
                                "not 'F')")
        out_layout = layout[1:]
        for i, t in enumerate(tl.samples if tl.dense is None else [tl.dense[0]] if len(tl) else []):
            bad = [e for e in self.emap if e >= int(t.shape[0])]
            if bad:
                raise ArgumentError(f"{self.name}: `element_map` index {bad[0]} is out of bounds for sample {i}, a "
                                    f"sequence of {int(t.shape[0])} elements")
        if tl.dense is not None:
            return [TensorList(tl.dense[:, e].contiguous(), out_layout) for e in self.emap]
        return [TensorList([t[e].contiguous() for t in tl.samples], out_layout) for e in self.emap]


register(OpSchema(
    name="transpose", impl=Transpose,
    doc="Reorders the dimensions: output dimension i is input dimension perm[i]; the layout follows.",
    args=(Arg("perm", "int_list", None, "the permutation (default: the dimensions reversed)"),
          Arg("transpose_layout", "bool", True, "permute the layout's names with the data (else keep it)"),
          Arg("output_layout", "layout", None, "the output layout (overrides transpose_layout)")),
))
register(OpSchema(
    name="squeeze", impl=Squeeze,
    doc="Removes dimensions of extent 1 (named by index or by layout name).",
    args=(Arg("axes", "ints", None, "indices of the dimensions to remove", tensor=True),
          Arg("axis_names", "layout", None, "layout names of the dimensions to remove")),
))
register(OpSchema(
    name="expand_dims", impl=ExpandDims,
    doc="Inserts dimensions of extent 1 at the given output positions.",
    args=(Arg("axes", "int_list", doc="output positions of the new dimensions"),
          Arg("new_axis_names", "layout", "", "layout names of the new dimensions (else the layout is cleared)")),
))
register(OpSchema(
    name="element_extract", impl=ElementExtract, num_outputs=lambda a: max(1, len(int_list(a.get("element_map")))),
    doc="Extracts elements of sequences (slices of the outermost dimension), one output per index.",
    args=(Arg("element_map", "ints", doc="indices of the elements to extract"),),
))
