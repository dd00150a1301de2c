"""Arithmetic on DataNodes (`images / 255`, `labels - 1`, `a < b`, `~mask`, `math.sqrt(x)`), as DALI.

Each expression is one graph node (so it serializes): the operation and its operands, which are
inputs (DataNodes) or typed scalar constants (Python numbers, NumPy scalars, `types.Constant`),
folded into the node's arguments rather than made into constant nodes. Types, broadcasting and
layouts follow DALI 2.4 (see `arith_kernels` for the types): samples broadcast NumPy-style; the
output has the most dimensions of its inputs and the layout of the inputs that have that many (or
none); any two layouts given must be equal or one a suffix of the other. All-dense batches run as
one torch op per batch; others sample by sample on the pipeline's threads.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from . import arith_kernels as K
from ._operator import BatchContext, BuildArgumentError, Operator
from ._registry import call_op, lookup, register
from ._schema import Arg, OpSchema, adopted


class ConstantOverflow(BuildArgumentError, OverflowError):
    """An integer constant outside its type's range, refused at build (DALI 2.4: an OverflowError)."""


def _check_fits(op: str, value: Any, dt: torch.dtype) -> None:
    """Wrapping `x + 2**31` to -2**31, or `Constant(300).uint8()` to 44, would silently change the
    expression; uint64 keeps its whole range (DALI refuses values past int64's)."""
    if dt == torch.bool or dt.is_floating_point:
        return
    lo, hi = (0, 2**64 - 1) if dt == torch.uint64 else (torch.iinfo(dt).min, torch.iinfo(dt).max)
    if not lo <= value <= hi:
        raise ConstantOverflow(f"{op}: the constant {value} is outside the range of {str(dt).replace('torch.', '')} "
                               f"[{lo}, {hi}]")


# names written by earlier versions (YAML) -> the operation
_LEGACY = {"truediv": "fdiv", "floordiv": "div", "neg": "minus", "pos": "plus", "and": "bitand", "or": "bitor",
           "xor": "bitxor", "ne": "neq", "le": "leq", "ge": "geq"}


def _parse_operand(op: str, s: str) -> tuple[str, Any, torch.dtype | None]:
    """`in:0` -> ("in", 0, None); `const:int32:7` -> ("const", 7, torch.int32)."""
    parts = s.split(":", 2)
    try:
        if parts[0] == "in" and len(parts) == 2:
            return "in", int(parts[1]), None
        if parts[0] == "const" and len(parts) == 3:
            dt = types.to_torch_dtype(parts[1])
            raw = parts[2]
            value: Any = (raw == "True") if dt == torch.bool else float(raw) if K.kind(dt) == "f" else int(raw)
            return "const", value, dt
    except (ValueError, KeyError, TypeError):
        pass
    raise ArgumentError(f"{op}: bad operand {s!r} (expected 'in:N' or 'const:TYPE:VALUE')")


class Arithmetic(Operator):
    sample_wise = False

    def setup(self) -> None:
        a = self.args
        self.op = _LEGACY.get(a["op"], a["op"])
        n_in = len(self.node.inputs)
        if a.get("operands"):
            self.operands = [_parse_operand(self.name, s) for s in a["operands"]]
        else:  # the form of earlier versions: inputs, then `scalar` (first with `reverse`)
            self.operands = [("in", k, None) for k in range(n_in)]
            if a.get("scalar") is not None:
                s = a["scalar"]
                const = ("const", s, None)  # typed against the input below
                self.operands = [const] + self.operands if a.get("reverse") else self.operands + [const]
        want = K.arity(self.op)
        if len(self.operands) != want:
            raise ArgumentError(f"{self.name}: `{K.display(self.op)}` takes {want} operand(s), got "
                                f"{len(self.operands)}")
        for kind, v, dt in self.operands:
            if kind == "const" and dt is not None:
                _check_fits(self.name, v, dt)
        used = sorted(v for kind, v, _ in self.operands if kind == "in")
        if used != list(range(n_in)):
            raise ArgumentError(f"{self.name}: operands {a.get('operands')} do not use each of the {n_in} "
                                "input(s) once")

    def _constant(self, value: Any, dt: torch.dtype | None, like: torch.dtype) -> torch.Tensor:
        if dt is None:  # a legacy scalar: an integer stays one with integer inputs
            is_int = float(value).is_integer() and K.kind(like) != "f"
            dt = torch.int32 if is_int else torch.float32
            value = int(value) if is_int else float(value)
            _check_fits(self.name, value, dt)
        return K.constant_tensor(value, dt, self.device)

    # -- one batch -------------------------------------------------------------------------------
    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        n = len(inputs[0]) if inputs else ctx.batch_size
        if any(len(t) != n for t in inputs):
            raise ArgumentError(f"{self.name}: the inputs have different batch sizes {[len(t) for t in inputs]}")
        layout = self._out_layout(inputs)
        first_dtype = self._dtype_of(inputs[0]) if inputs else torch.float32
        consts = {k: self._constant(v, dt, first_dtype) for k, (kind, v, dt) in enumerate(self.operands)
                  if kind == "const"}
        if n and all(t.dense is not None for t in inputs):
            return [TensorList(self._dense(inputs, consts), layout)]

        def one(i: int) -> torch.Tensor:
            xs = [inputs[v][i] if kind == "in" else consts[k] for k, (kind, v, _) in enumerate(self.operands)]
            return self._apply(xs, i)
        return [TensorList(ctx.map(one, n), layout)]

    @staticmethod
    def _dtype_of(tl: TensorList) -> torch.dtype:
        return tl.dense.dtype if tl.dense is not None else (tl.samples[0].dtype if len(tl) else torch.float32)

    def _dense(self, inputs: list[TensorList], consts: dict[int, torch.Tensor]) -> torch.Tensor:
        """All inputs dense: one op over the whole batch (sample dims aligned on the right)."""
        nd = max(t.dense.dim() - 1 for t in inputs)
        xs = []
        for k, (kind, v, _) in enumerate(self.operands):
            if kind == "const":
                xs.append(consts[k])
                continue
            d = inputs[v].dense
            extra = nd - (d.dim() - 1)
            xs.append(d.reshape(d.shape[0], *([1] * extra), *d.shape[1:]) if extra else d)
        shapes = [tuple(inputs[v].dense.shape[1:]) for kind, v, _ in self.operands if kind == "in"]
        return self._apply(xs, None, shapes)

    def _apply(self, xs: list[torch.Tensor], sample: int | None,
               shapes: list[tuple[int, ...]] | None = None) -> torch.Tensor:
        out = K.result_type(self.op, [x.dtype for x in xs])
        try:
            return K.compute(self.op, xs, out)
        except RuntimeError as e:
            if "must match the size" not in str(e) and "broadcast" not in str(e):
                raise
            if shapes is None:  # sample by sample: the inputs' samples as they are
                shapes = [tuple(xs[k].shape) for k, (kind, _, _) in enumerate(self.operands) if kind == "in"]
            raise self._broadcast_error(shapes, sample) from None

    def _broadcast_error(self, shapes: list[tuple[int, ...]], sample: int | None) -> ArgumentError:
        """Each input's sample shape, the dimension where the extents clash (counted in each shape;
        found from the innermost outwards) and the sample (0 for a dense batch: all alike)."""
        ndim = max(len(sh) for sh in shapes)
        rev_d = 0
        for rev_d in range(ndim):
            ext = [sh[len(sh) - 1 - rev_d] for sh in shapes if rev_d < len(sh)]
            if len({e for e in ext if e != 1}) > 1:
                break
        idx = 0 if sample is None else sample
        clash = ", ".join(f"{sh[len(sh) - 1 - rev_d]} at dimension {len(sh) - 1 - rev_d} of {list(sh)}"
                          for sh in shapes if rev_d < len(sh))
        return ArgumentError(f"{self.name} `{K.display(self.op)}`: the input shapes "
                             f"{' and '.join(str(list(sh)) for sh in shapes)} of sample {idx} cannot be broadcast "
                             f"together ({clash}); extents must match or be 1, compared from the innermost")

    def _out_layout(self, inputs: list[TensorList]) -> str:
        """The layout of the inputs with the most dimensions (checked compatible), or ""."""
        dims = [(t.dense.dim() - 1) if t.dense is not None else (t.samples[0].dim() if len(t) else 0)
                for t in inputs]
        lays = [t.layout() for t in inputs]
        check_layouts(f"{self.name} `{K.display(self.op)}`", lays)
        top = max(dims) if dims else 0
        at_top = {lay for lay, d in zip(lays, dims) if d == top and lay}
        return at_top.pop() if at_top else ""

    def output_layout(self, index: int) -> str | None:
        return None


def check_layouts(what: str, layouts: list[str]) -> None:
    """DALI's rule for the operands of an arithmetic expression: the layouts given must be equal
    or one a suffix of the other (`HWC` and `C` go together, `HW` and `AB` do not)."""
    given = [lay for lay in layouts if lay]
    for i, a in enumerate(given):
        for b in given[i + 1:]:
            short, long_ = (a, b) if len(a) <= len(b) else (b, a)
            if not long_.endswith(short):
                raise ArgumentError(f"{what}: the input layouts {a!r} and {b!r} do not match. They must be "
                                    "equal or one must be a suffix of the other")


register(OpSchema(
    name="arithmetic", impl=Arithmetic, min_inputs=1, max_inputs=3, class_name_override="ArithmeticGenericOp",
    doc="Elementwise arithmetic, comparison, bitwise and math functions on inputs and typed scalar constants; "
        "what `a + b`, `a < b` and `math.sqrt(a)` make.",
    args=(Arg("op", "str", doc="the operation (add, sub, mul, div, fdiv, mod, pow, fpow, min, max, atan2, "
                               "clamp, eq, neq, lt, leq, gt, geq, bitand, bitor, bitxor, lshift, rshift, "
                               "plus, minus, bitnot, abs, sqrt, exp, ...)",
              check=lambda v: None if _LEGACY.get(v, v) in K.ALL_OPS else "a known operation"),
          Arg("operands", "str_list", None, doc="the operands in order: 'in:N' (input N) or "
                                                "'const:TYPE:VALUE' (a typed scalar)"),
          Arg("scalar", "float", None, doc="earlier form: a constant operand"),
          Arg("reverse", "bool", False, doc="earlier form: the scalar is the left operand"))))


# -- building expressions from Python ---------------------------------------------------------------

def _has_nested_node(v: Any) -> bool:
    from ..graph.node import DataNode
    return isinstance(v, (list, tuple)) and any(isinstance(x, DataNode) or _has_nested_node(x) for x in v)


def _const_text(c: types.ScalarConstant) -> str:
    return f"const:{types.to_torch_dtype(c.dtype)}:{c.value!r}".replace("torch.", "")


def expression(op: str, *operands: Any) -> Any:
    """The DataNode of `op` applied to operands (DataNodes, numbers, NumPy scalars or arrays,
    types.Constant); on the GPU when any input is there."""
    from ..graph.node import DataNode
    name = K.display(op)
    items: list[str] = []
    nodes: list[DataNode] = []
    for k, x in enumerate(operands):
        if _has_nested_node(x):
            raise ArgumentTypeError(
                f"The input {k} of operator `{name}` must be a DataNode or a compatible constant. Got a "
                f"`{type(x).__name__}` with nested DataNode(s); an op with several outputs returns a tuple: "
                "pick one")
        if not isinstance(x, (DataNode, types.ScalarConstant)):
            from ..graph.branch_values import check_defined
            check_defined(x)  # a variable an `if` on a DataNode set in one branch only
            try:
                x = types.Constant(x)
            except (TypeError, ValueError) as e:
                raise ArgumentTypeError(f"input {k} of operator `{name}`: cannot use a {type(x).__name__} as an "
                                        f"operand ({e})") from None
        if isinstance(x, DataNode):
            items.append(f"in:{len(nodes)}")
            nodes.append(x)
        else:
            items.append(_const_text(x))
    if not nodes:
        raise ArgumentTypeError(f"operator `{name}` needs at least one DataNode operand, got only constants")
    nodes = [adopted(n) for n in nodes]
    if any(n.device == "gpu" for n in nodes):
        nodes = [n.gpu() for n in nodes]
    return call_op(lookup("arithmetic"), tuple(nodes), {"op": op, "operands": items})


def _binary(op: str, reverse: bool = False) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        return expression(op, other, self) if reverse else expression(op, self, other)
    return method


def _unary(op: str) -> Callable[[Any], Any]:
    def method(self: Any) -> Any:
        return expression(op, self)
    return method


def install(cls: type) -> None:
    """Gives DataNode its operators (comparisons included: they make BOOL nodes, as in DALI)."""
    for py, op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "fdiv"), ("floordiv", "div"),
                   ("mod", "mod"), ("pow", "pow"), ("and", "bitand"), ("or", "bitor"), ("xor", "bitxor"),
                   ("lshift", "lshift"), ("rshift", "rshift")):
        setattr(cls, f"__{py}__", _binary(op))
        setattr(cls, f"__r{py}__", _binary(op, reverse=True))
    for py, op in (("eq", "eq"), ("ne", "neq"), ("lt", "lt"), ("le", "leq"), ("gt", "gt"), ("ge", "geq")):
        setattr(cls, f"__{py}__", _binary(op))
    for py, op in (("neg", "minus"), ("pos", "plus"), ("abs", "abs"), ("invert", "bitnot")):
        setattr(cls, f"__{py}__", _unary(op))
    cls.__hash__ = object.__hash__  # type: ignore[assignment] - nodes stay usable as dict keys


def _install() -> None:
    from ..graph.node import DataNode
    install(DataNode)


_install()
