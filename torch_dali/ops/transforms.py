"""transforms.translation / scale / rotation / shear / crop / combine: affine matrices as data.

Each sample is a float32 (ndim, ndim + 1) matrix [A | t] (row-major, points as columns: x' =
A x + t). With an input matrix T0 the new transform M is applied after it (M @ T0), or before it
with `reverse_order=True` (T0 @ M); `combine(T1, T2, ...)` applies T1 first. The matrices feed
`warp_affine` and `coord_transform` directly. CPU only, as in DALI. Sequences of matrices
(fn.per_frame inputs, layout "F**") and per-frame arguments give a matrix per frame (`run_frames`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import affine as A
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema
from .per_frame import per_frame_mismatch

# The impl classes end in "Op": `ops.transforms.Translation` (made from the schemas) is the user's class.
_LAYOUT = "**"  # DALI marks transform matrices with an anonymous 2D layout


def _vec(v: Any) -> list[float]:
    if v is None:
        return []
    if isinstance(v, (int, float)):
        return [float(v)]
    return [float(x) for x in np.asarray(v, dtype=np.float64).reshape(-1)]


def _to_homogeneous(t: torch.Tensor) -> np.ndarray:
    n = int(t.shape[0])
    m = np.eye(n + 1, dtype=np.float32)
    m[:n] = t.detach().cpu().numpy()
    return m


def _frame_count(v: Any) -> int:
    """Frames in one sample of a per-frame argument (a bare value is one frame for all)."""
    return len(v) if isinstance(v, (list, tuple)) else 1


def _frame_value(v: Any, f: int) -> Any:
    if not isinstance(v, (list, tuple)):
        return v
    return v[f] if len(v) > 1 else v[0]


def run_frames(op: Operator, inputs: list[TensorList], args: dict[str, list[Any]], batch_size: int,
               plain: Callable[[list[TensorList], dict[str, list[Any]], int], list[torch.Tensor]]
               ) -> list[TensorList]:
    """`plain` per sample, or per frame when an input is a sequence of matrices (layout "F...",
    from fn.per_frame) or an argument is given per frame: the output is then one (frames, ndim,
    ndim + 1) sequence per sample. Each sample's frame count comes from its first sequence input
    (other sequence inputs must have as many frames), else from its first per-frame argument; a
    per-frame argument holds that many values or one for every frame."""
    seq = [tl.layout().startswith("F") for tl in inputs]
    names = list(op.per_frame_names)
    n = len(inputs[0]) if inputs else batch_size
    if not any(seq) and not names:
        return [TensorList(plain(inputs, args, n), _LAYOUT)]
    counts = []
    for i in range(n):
        ref: tuple[int, str] | None = None
        for k, tl in enumerate(inputs):
            if not seq[k]:
                continue
            x = tl[i]
            if x.dim() != 3:
                raise ArgumentError(f"{op.name}: input {k} is marked as sequences (layout '{tl.layout()}') but "
                                    f"sample {i} has shape {tuple(x.shape)}, not (frames, ndim, ndim + 1)")
            got = (int(x.shape[0]), f"input {k}")
            if ref is None:
                ref = got
            elif got[0] != ref[0]:
                raise ArgumentError(f"{op.name}: sample {i} has {got[0]} frames in {got[1]} but {ref[0]} in "
                                    f"{ref[1]}; sequence inputs must have as many frames as each other")
        for k in names:
            m = _frame_count(args[k][i])
            if ref is None:
                ref = (m, f"argument `{k}`")
            elif m != 1 and m != ref[0]:
                raise ArgumentError(per_frame_mismatch(op.name, i, k, m, ref[0], ref[1]))
        if ref is None or ref[0] == 0:  # (None cannot happen: an input or an argument is per frame)
            what = ref[1] if ref is not None else "nothing per frame"
            raise ArgumentError(f"{op.name}: sample {i} has no frames ({what} is an empty sequence)")
        counts.append(ref[0])
    flat_in: list[list[torch.Tensor]] = [[] for _ in inputs]
    flat_args: dict[str, list[Any]] = {k: [] for k in args}
    for i, c in enumerate(counts):
        for f in range(c):
            for k, tl in enumerate(inputs):
                flat_in[k].append(tl[i][f] if seq[k] else tl[i])
            for k, vals in args.items():
                flat_args[k].append(_frame_value(vals[i], f) if k in names else vals[i])
    mats = plain([TensorList(x, _LAYOUT) for x in flat_in], flat_args, sum(counts))
    out, at = [], 0
    for c in counts:
        out.append(torch.stack(mats[at:at + c]))
        at += c
    return [TensorList(out, "F" + _LAYOUT)]


class _Transform(Operator):
    """Per sample: the op's matrix (`define`), composed with the input matrix if there is one."""

    sample_wise = False
    per_frame_ok = True  # sequences of matrices and per-frame arguments: `run_frames`
    own_frames = True
    max_ndim = 6

    def get(self, args: dict[str, list[Any]], name: str, i: int) -> Any:
        return args[name][i] if name in args else self.args.get(name)

    def input_ndim(self, inputs: list[TensorList]) -> int | None:
        if not inputs:
            return None
        tl = inputs[0]
        shapes = {tuple(t.shape) for t in tl}
        if len(shapes) > 1:
            raise ArgumentError(f"{self.name}: all input matrices must have the same shape, got "
                                f"{sorted(shapes)}")
        for t in tl:
            if t.dtype != torch.float32:
                raise ArgumentTypeError(f"{self.name}: input matrices must be float32, got {t.dtype}")
        shape = next(iter(shapes)) if shapes else ()
        if len(shape) != 2 or shape[1] != shape[0] + 1:
            raise ArgumentError(f"{self.name}: the input must be (ndim, ndim + 1) affine matrices, got "
                                f"shape {shape}")
        return shape[0]

    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        raise NotImplementedError

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        raise NotImplementedError

    def sized(self, name: str, v: Any, ndim: int) -> list[float]:
        vals = _vec(v)
        if len(vals) == 1 and ndim > 1 and name in self.broadcast:
            vals = vals * ndim
        if len(vals) != ndim:
            raise ArgumentError(f"{self.name}: `{name}` must have {ndim} values for a {ndim}D transform, "
                                f"got {len(vals)}")
        return vals

    broadcast: tuple[str, ...] = ()

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        return run_frames(self, inputs, args, ctx.batch_size, self.run_plain)

    def run_plain(self, inputs: list[TensorList], args: dict[str, list[Any]], n: int) -> list[torch.Tensor]:
        """One matrix per sample (or per frame, when `run_frames` unfolded sequences)."""
        in_ndim = self.input_ndim(inputs)
        out = []
        for i in range(n):
            ndim = self.ndim(args, i, in_ndim)
            if in_ndim is not None and ndim != in_ndim:
                raise ArgumentError(f"{self.name}: the input is a {in_ndim}D transform but the arguments "
                                    f"describe a {ndim}D one")
            if not 1 <= ndim <= self.max_ndim:
                raise ArgumentError(f"{self.name}: transforms of 1 to {self.max_ndim} dimensions are "
                                    f"supported, got {ndim}")
            m = self.define(args, i, ndim)
            if inputs:
                t0 = _to_homogeneous(inputs[0][i])
                m = A.f32_matmul(t0, m) if self.args["reverse_order"] else A.f32_matmul(m, t0)
            out.append(torch.from_numpy(np.ascontiguousarray(m[:ndim], dtype=np.float32)))
        return out


class TranslationOp(_Transform):
    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        return len(_vec(self.get(args, "offset", i)))

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        return A.translation(_vec(self.get(args, "offset", i)))


class ScaleOp(_Transform):
    broadcast = ("scale",)

    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        n = len(_vec(self.get(args, "scale", i)))
        if n > 1:
            return n
        if in_ndim is not None:
            return in_ndim
        return self.args["ndim"] if self.args.get("ndim") else 1

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        center = self.get(args, "center", i)
        return A.scale(self.sized("scale", self.get(args, "scale", i), ndim),
                       None if center is None else self.sized("center", center, ndim))


class RotationOp(_Transform):
    max_ndim = 3

    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        return 3 if self.get(args, "axis", i) is not None else 2

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        angle = _vec(self.get(args, "angle", i))
        if len(angle) != 1:
            raise ArgumentError(f"{self.name}: `angle` must be one value per sample, got {len(angle)}")
        axis = self.get(args, "axis", i)
        center = self.get(args, "center", i)
        return A.rotation(angle[0], None if axis is None else self.sized("axis", axis, 3),
                          None if center is None else self.sized("center", center, ndim))


class ShearOp(_Transform):
    max_ndim = 3

    def setup(self) -> None:
        given = [k for k in ("shear", "angles") if self.args.get(k) is not None or k in self.node.arg_inputs]
        if len(given) != 1:
            raise ArgumentError(f"{self.name}: give exactly one of `shear` and `angles`, got "
                                f"{' and '.join(given) or 'neither'}")
        self.key = given[0]

    def _factors(self, args: dict[str, list[Any]], i: int) -> np.ndarray:
        v = np.asarray(self.get(args, self.key, i), dtype=np.float64)
        size = v.size
        ndim = {2: 2, 6: 3}.get(size)
        if ndim is None or (v.ndim == 2 and v.shape != (ndim, ndim - 1)) or v.ndim > 2:
            raise ArgumentError(f"{self.name}: `{self.key}` must have D*(D-1) values (2 for 2D, 6 for 3D) "
                                f"or be a D x (D-1) matrix, got shape {v.shape}")
        if self.key == "angles":
            if ((v < -90) | (v > 90)).any():
                raise ArgumentError(f"{self.name}: `angles` must be in [-90, 90] degrees, got {v.tolist()}")
            v = A.tan_f32(v.astype(np.float32) * np.float32(np.pi / 180)).astype(np.float64)
        return v.reshape(ndim, ndim - 1)

    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        return int(self._factors(args, i).shape[0])

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        center = self.get(args, "center", i)
        return A.shear(self._factors(args, i), None if center is None else self.sized("center", center, ndim))


class CropOp(_Transform):
    _NAMES = ("from_start", "from_end", "to_start", "to_end")
    _DEFAULTS = {"from_start": 0.0, "from_end": 1.0, "to_start": 0.0, "to_end": 1.0}
    broadcast = _NAMES

    def get(self, args: dict[str, list[Any]], name: str, i: int) -> Any:
        v = super().get(args, name, i)
        return self._DEFAULTS[name] if v is None and name in self._DEFAULTS else v

    def ndim(self, args: dict[str, list[Any]], i: int, in_ndim: int | None) -> int:
        sizes = [len(_vec(self.get(args, k, i))) for k in self._NAMES]
        n = max(sizes)
        if any(s not in (1, n) for s in sizes):
            raise ArgumentError(f"{self.name}: `from_start`, `from_end`, `to_start` and `to_end` must "
                                f"have the same number of values or one each, got {sizes}")
        return n

    def define(self, args: dict[str, list[Any]], i: int, ndim: int) -> np.ndarray:
        vals = [self.sized(k, self.get(args, k, i), ndim) for k in self._NAMES]
        return A.crop(*vals, absolute=self.args["absolute"])


class CombineOp(Operator):
    """T1, T2, ..., Tn -> Tn @ (... @ (T2 @ T1)) (T1 applied first); with reverse_order
    ((T1 @ T2) @ ...) @ Tn."""

    sample_wise = False
    per_frame_ok = True
    own_frames = True

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        return run_frames(self, inputs, args, ctx.batch_size, self.run_plain)

    def run_plain(self, inputs: list[TensorList], args: dict[str, list[Any]], n: int) -> list[torch.Tensor]:
        shape0 = None
        for k, tl in enumerate(inputs):
            for t in tl:
                if t.dtype != torch.float32:
                    raise ArgumentTypeError(f"{self.name}: input {k} must be float32 matrices, got {t.dtype}")
                if t.dim() != 2 or t.shape[1] != t.shape[0] + 1:
                    raise ArgumentError(f"{self.name}: input {k} must be (ndim, ndim + 1) affine matrices, "
                                        f"got shape {tuple(t.shape)}")
                if shape0 is None:
                    shape0 = tuple(t.shape)
                elif tuple(t.shape) != shape0:
                    raise ArgumentError(f"{self.name}: all input transforms must have the same shape, got "
                                        f"{shape0} and {tuple(t.shape)} (input {k})")
        n = len(inputs[0])
        if any(len(tl) != n for tl in inputs):
            raise ArgumentError(f"{self.name}: the inputs have different batch sizes")
        out = []
        for i in range(n):
            # In float64, rounded once at the end: DALI chains float32 products, whose error grows
            # with the chain (10 random 7x7 inputs: 2.5e-5 off the exact product, past DALI's own
            # test's tolerance); here the result is the exact product correctly rounded, within
            # an ulp of DALI's float32 chain.
            mats = [_to_homogeneous(tl[i]).astype(np.float64) for tl in inputs]
            m = mats[0]
            for nxt in mats[1:]:
                m = m @ nxt if self.args["reverse_order"] else nxt @ m
            out.append(torch.from_numpy(np.ascontiguousarray(m[:-1], dtype=np.float32)))
        return out


_REVERSE = Arg("reverse_order", "bool", False, "apply this transform before the input one instead of after it")
_CENTER = Arg("center", "float_list", None, "the fixed point of the transform", tensor=True)
_T = dict(devices=("cpu",), min_inputs=0, max_inputs=1)

register(OpSchema(
    name="transforms.translation", impl=TranslationOp, **_T, legacy_names=("TransformTranslation",),
    doc="A translation matrix (ndim from `offset`), applied to the input matrix if there is one.",
    args=(Arg("offset", "float_list", doc="the translation vector", tensor=True), _REVERSE)))
register(OpSchema(
    name="transforms.scale", impl=ScaleOp, **_T,
    doc="A scale matrix (about `center`), applied to the input matrix if there is one.",
    args=(Arg("scale", "float_list", doc="factor per dimension (one value: all)", tensor=True), _CENTER,
          Arg("ndim", "int", None, "number of dimensions when `scale` has one value and there is no input"),
          _REVERSE)))
register(OpSchema(
    name="transforms.rotation", impl=RotationOp, **_T,
    doc="A rotation matrix: 2D, or 3D about `axis`; about `center`; applied to the input matrix if any.",
    args=(Arg("angle", "float", doc="angle in degrees", tensor=True),
          Arg("axis", "float_list", None, "3D rotation axis (need not be normalised)", tensor=True),
          _CENTER, _REVERSE)))
register(OpSchema(
    name="transforms.shear", impl=ShearOp, **_T,
    doc="A shear matrix from factors or angles (2D: 2 values, 3D: 6), about `center`.",
    args=(Arg("shear", "float_list", None, "shear factors: (sx, sy) or (sxy, sxz, syx, syz, szx, szy)",
              tensor=True),
          Arg("angles", "float_list", None, "shear angles in degrees, in [-90, 90]: factor = tan(angle)",
              tensor=True),
          _CENTER, _REVERSE)))
register(OpSchema(
    name="transforms.crop", impl=CropOp, **_T,
    doc="Maps the box [from_start, from_end] onto [to_start, to_end] (e.g. coordinates after a crop).",
    # (None stands for DALI's defaults (0,), (1,), (0,), (1,): DALI callers pass None for "unset")
    args=(Arg("from_start", "float_list", None, "lower corner of the source box (default 0)", tensor=True),
          Arg("from_end", "float_list", None, "upper corner of the source box (default 1)", tensor=True),
          Arg("to_start", "float_list", None, "lower corner of the destination box (default 0)", tensor=True),
          Arg("to_end", "float_list", None, "upper corner of the destination box (default 1)", tensor=True),
          Arg("absolute", "bool", False, "swap start and end where start > end"), _REVERSE)))
register(OpSchema(
    name="transforms.combine", impl=CombineOp, devices=("cpu",), min_inputs=2, max_inputs=99,
    doc="Combines transforms: the result applies the inputs in the order given (reverse_order: "
        "the opposite).",
    args=(Arg("reverse_order", "bool", False, "apply the inputs last to first"),)))
