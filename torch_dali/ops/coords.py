"""coord_transform and coord_flip: points (..., n) through an affine map or a reflection.

coord_transform computes out = M @ in + T in float32 (products summed left to right, then T:
the same bits on the CPU and on CUDA) and converts to the output type rounding half away from
zero and saturating, as DALI does. Arguments follow DALI's MTTransformAttr rules (scalar M = a
diagonal, scalar T = broadcast, MT = [M | T]).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional.crop import convert
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema

_CT_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.int32, torch.float32)
_MAX_DIM = 6


def _arr(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


class CoordTransform(Operator):
    sample_wise = False
    per_frame_ok = True  # frames are transformed independently: takes fn.per_frame arguments

    def setup(self) -> None:
        fused = self.given("MT")
        if fused and (self.given("M") or self.given("T")):
            raise ArgumentError(f"{self.name}: `MT` cannot be combined with `M` or `T`")
        self.fused = fused
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        for k in ("M", "MT"):
            v = self.args.get(k)
            if v is not None and not isinstance(v, (int, float)) and len(v) == 0:
                raise ArgumentError(f"{self.name}: `{k}` must not be an empty list")

    def given(self, name: str) -> bool:
        return name in self.node.arg_inputs or self.args.get(name) is not None

    def _matrix(self, args: dict[str, list[Any]], i: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(M (m, n), T (m,)) for sample i and n-component input points."""
        name = "MT" if self.fused else "M"
        cols = n + 1 if self.fused else n
        t: np.ndarray | None = None
        if name in args:
            v = _arr(args[name][i])
            if v.ndim == 0:
                m_full = np.eye(n, cols) * float(v)
            elif v.ndim == 2:
                if v.shape[0] < 1 or v.shape[1] != cols:
                    raise ArgumentError(f"{self.name}: per-sample `{name}` must be (m, {cols}) matrices for "
                                        f"{n}-component points, got shape {v.shape}")
                m_full = v
            else:
                raise ArgumentError(f"{self.name}: per-sample `{name}` must be 2D matrices or scalars, got "
                                    f"shape {v.shape}")
        elif self.args.get(name) is not None:
            v = _arr(self.args[name]).reshape(-1)
            if v.size == 1:
                m_full = np.eye(n, cols) * float(v[0])
            else:
                if v.size % cols:
                    raise ArgumentError(f"{self.name}: `{name}` has {v.size} values, not a whole number of "
                                        f"rows of {cols} columns")
                m_full = v.reshape(-1, cols)
        else:
            m_full = np.eye(n, cols)
        if self.fused:
            m, t = m_full[:, :n], m_full[:, n]
        else:
            m = m_full
        rows = m.shape[0]
        if rows > _MAX_DIM:
            raise ArgumentError(f"{self.name}: at most {_MAX_DIM} output components, got {rows}")
        if not self.fused:
            tv = args["T"][i] if "T" in args else self.args.get("T")
            if tv is None:
                t = np.zeros(rows)
            else:
                ta = _arr(tv).reshape(-1)
                if ta.size == 1:
                    t = np.full(rows, float(ta[0]))
                elif ta.size == rows:
                    t = ta
                else:
                    raise ArgumentError(f"{self.name}: `T` must have 1 or {rows} values, got {ta.size}")
        return m.astype(np.float32), t.astype(np.float32)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n_pt = 0
        for x in tl:
            if x.dim() < 2:
                raise ArgumentError(f"{self.name}: each sample must have at least 2 dimensions (points x "
                                    f"components), got shape {tuple(x.shape)}")
            if x.dtype not in _CT_TYPES and any(t.numel() for t in tl):  # DALI skips empty batches
                raise ArgumentTypeError(f"{self.name}: input type must be one of "
                                        f"{', '.join(str(d)[6:] for d in _CT_TYPES)}, got {x.dtype}")
            if self.dtype not in (x.dtype, torch.float32):
                raise ArgumentTypeError(f"{self.name}: `dtype` must be the input's ({x.dtype}) or float32, "
                                        f"got {self.dtype}")
            if x.numel():
                if n_pt and int(x.shape[-1]) != n_pt:
                    raise ArgumentError(f"{self.name}: all samples must have points of the same size, got "
                                        f"{n_pt} and {int(x.shape[-1])}")
                n_pt = int(x.shape[-1])
        if n_pt > _MAX_DIM:
            raise ArgumentError(f"{self.name}: points of at most {_MAX_DIM} components, got {n_pt}")
        out = []
        for i, x in enumerate(tl):
            if n_pt == 0:  # nothing but empty samples: DALI gives 0 components
                out.append(torch.empty((*x.shape[:-1], 0), dtype=self.dtype, device=x.device))
                continue
            m, t = self._matrix(args, i, n_pt)
            mt = torch.from_numpy(m).to(x.device)
            tt = torch.from_numpy(t).to(x.device)
            xf = x.to(torch.float32)
            acc = xf[..., 0:1] * mt[:, 0]
            for j in range(1, n_pt):
                acc = acc + xf[..., j:j + 1] * mt[:, j]
            acc = acc + tt
            out.append(convert(acc, self.dtype) if self.dtype != torch.float32 else acc)
        return [TensorList(out, tl.layout())]


class CoordFlip(Operator):
    """Reflects the chosen coordinates about their centre: c' = 2 * centre - c."""

    sample_wise = False

    def setup(self) -> None:
        layout = self.args["layout"]
        if layout and (len(set(layout)) != len(layout) or not set(layout) <= set("xyz")):
            raise ArgumentError(f"{self.name}: `layout` must be made of distinct x, y, z, got {layout!r}")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        out = []
        for i, x in enumerate(tl):
            if x.dtype != torch.float32:
                raise ArgumentTypeError(f"{self.name}: input must be float32, got {x.dtype}")
            if x.dim() != 2:
                raise ArgumentError(f"{self.name}: expected (points, components), got shape {tuple(x.shape)}")
            n = int(x.shape[1])
            if n > 3:
                raise ArgumentError(f"{self.name}: points of 1 to 3 components, got {n}")
            layout = self.args["layout"] or "xyz"[:n]
            if len(layout) != n:
                raise ArgumentError(f"{self.name}: `layout` {layout!r} does not match {n}-component points")
            y = x.clone()
            for d, axis in enumerate(layout):
                flip = args[f"flip_{axis}"][i] if f"flip_{axis}" in args else self.args[f"flip_{axis}"]
                if int(flip):
                    c = args[f"center_{axis}"][i] if f"center_{axis}" in args else self.args[f"center_{axis}"]
                    y[:, d] = 2.0 * float(c) - x[:, d]
            out.append(y)
        return [TensorList(out, tl.layout())]


register(OpSchema(
    name="coord_transform", impl=CoordTransform,
    doc="out = M @ in + T for each point (the last dimension holds the components); M may be a scalar "
        "(diagonal), T a scalar (broadcast), or both given as MT = [M | T].",
    args=(
        Arg("M", "floats", None, "matrix (m x n, row-major) or a scalar for a diagonal", tensor=True),
        Arg("T", "floats", None, "translation (m values) or a scalar", tensor=True),
        Arg("MT", "floats", None, "the block matrix [M | T] (m x (n + 1)); excludes M and T", tensor=True),
        Arg("dtype", "dtype", types.FLOAT, "output type: FLOAT or the input's (rounded, saturated)"),
    ),
))
register(OpSchema(
    name="coord_flip", impl=CoordFlip,
    doc="Flips points (N, 1..3) about a centre, per axis (float32 coordinates, e.g. in [0, 1]).",
    args=(
        Arg("layout", "str", "", "order of the components, e.g. 'xy', 'yx', 'xyz' (default by count)"),
        *(Arg(f"flip_{a}", "int", 1 if a == "x" else 0, f"1 flips the {a} coordinate", tensor=True)
          for a in "xyz"),
        *(Arg(f"center_{a}", "float", 0.5, f"flip centre on the {a} axis", tensor=True) for a in "xyz"),
    ),
))
