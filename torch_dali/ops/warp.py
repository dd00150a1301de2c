"""The affine warps: rotate and warp_affine (CPU or CUDA tensors); warp_perspective is in
`warp_perspective.py`.

Layouts, output sizes, types and the sampling conventions are DALI 2.4's; the resampling itself
is `torch_dali.functional.warp`. On CUDA, samples sharing input and output shapes are warped in
one batched call, and so are HWC images of different sizes (the flat form of
`functional.ragged`); on the CPU each sample runs on the pool's threads.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import affine as A
from ..functional import ragged as R
from ..functional import warp as W
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import _dispatch, batching
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema
from .layouts import require_frames

_LAYOUTS = {"HWC": 2, "FHWC": 2, "DHWC": 3, "FDHWC": 3}
_DEFAULT_LAYOUT = {3: "HWC", 4: "FHWC"}  # what DALI assumes for a batch without a layout
_IN_TYPES = (torch.uint8, torch.int16, torch.int32, torch.float32)


def interp_of(v: Any) -> str:
    return v.key if isinstance(v, types.DALIInterpType) else str(v)


def dtype_names(dts: Sequence[torch.dtype]) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dts)


class _Warp(Operator):
    """Shared by the affine warps: layout, types, output sizes, batched resampling."""

    sample_wise = False
    strided_input_ok = True
    interps: tuple[str, ...] = ("nn", "linear")

    def setup(self) -> None:
        self.interp = interp_of(self.args["interp_type"])
        if self.interp not in self.interps:
            raise ArgumentError(f"{self.name}: `interp_type` must be one of "
                                f"{', '.join('INTERP_' + i.upper() for i in self.interps)}, got "
                                f"{self.args['interp_type']!r}")
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        self.fill = self.args.get("fill_value")

    # -- checks ------------------------------------------------------------------------------------
    def layout_of(self, tl: TensorList) -> tuple[str, int, bool]:
        """(layout, spatial ndim, has frames) of the input batch; refuses what DALI refuses."""
        layout = tl.layout()
        if not layout and len(tl):
            layout = _DEFAULT_LAYOUT.get(tl[0].dim(), "")
        if layout not in _LAYOUTS:
            raise ArgumentError(f"{self.name}: input layout must be one of {', '.join(_LAYOUTS)}, got "
                                f"{tl.layout()!r}" + (f" with {tl[0].dim()} dimensions" if len(tl) else ""))
        return layout, _LAYOUTS[layout], layout.startswith("F")

    def out_dtype(self, x: torch.Tensor) -> torch.dtype:
        if x.dtype not in _IN_TYPES:
            raise ArgumentTypeError(f"{self.name}: input type must be one of {dtype_names(_IN_TYPES)}, "
                                    f"got {x.dtype}")
        out = x.dtype if self.dtype is None else self.dtype
        if out != x.dtype and out != torch.float32 and x.dtype != torch.float32:
            raise ArgumentTypeError(f"{self.name}: {x.dtype} input converts only to itself or "
                                    f"float32 (`dtype`), got {out}")
        if out not in _IN_TYPES:
            raise ArgumentTypeError(f"{self.name}: `dtype` must be one of {dtype_names(_IN_TYPES)}, got {out}")
        return out

    def explicit_size(self, args: dict[str, list[Any]], i: int, ndim: int) -> list[int] | None:
        """`size` as spatial extents (outermost first): a constant rounds (halves away from zero)
        and must be positive; a per-sample value is truncated, as DALI does."""
        if "size" in args:
            v = args["size"][i]
            v = [v] if isinstance(v, (int, float)) else list(v)
            if len(v) != ndim:
                raise ArgumentError(f"{self.name}: `size` must have {ndim} values, got {v!r}")
            if any(not math.isfinite(float(s)) or s < 0 for s in v):
                raise ArgumentError(f"{self.name}: `size` must be non-negative, got {v!r}")
            return [int(s) for s in v]
        size = self.args.get("size")
        if size is None or size == []:
            return None
        size = [size] if isinstance(size, (int, float)) else list(size)
        if len(size) != ndim:
            raise ArgumentError(f"{self.name}: `size` must have {ndim} values (no channels), got {size!r}")
        if any(not s > 0 for s in size):
            raise ArgumentError(f"{self.name}: `size` must be positive, got {size!r}")
        return [max(1, int(math.floor(s + 0.5))) for s in size]

    # -- per-op pieces ------------------------------------------------------------------------------
    def plan(self, x: torch.Tensor, spatial: list[int], ndim: int, frames: int, i: int,
             args: dict[str, list[Any]], mats: list[Any]) -> tuple[list[int], torch.Tensor]:
        """(output spatial size, matrices (frames or 1, ndim, ndim + 1)) for sample i."""
        raise NotImplementedError

    def resample(self, imgs: torch.Tensor, mats: torch.Tensor, out_size: list[int],
                 out_dtype: torch.dtype) -> torch.Tensor:
        return _dispatch.call(W.warp_matrix, imgs, mats, out_size, self.interp, self.fill, out_dtype)

    def resample_flat(self, samples: list[torch.Tensor], plans: list[tuple[list[int], torch.Tensor]]
                      ) -> list[torch.Tensor] | None:
        """HWC images of different sizes warped together (`functional.ragged`'s flat form): the
        values `resample` gives each; None for what it does not take (empty images, mixed types)."""
        if len({(x.dtype, int(x.shape[-1])) for x in samples}) != 1 \
                or any(x.numel() == 0 or p[0][0] * p[0][1] == 0 for x, p in zip(samples, plans)):
            return None
        out_dtype = self.out_dtype(samples[0])
        flat = Flat(samples, inner=1)
        out_hw = [(int(p[0][0]), int(p[0][1])) for p in plans]
        ids, y, x = R.positions(out_hw, flat.device)
        coords = W.affine_coords_flat(torch.cat([p[1] for p in plans]), ids, y, x,
                                      stepped=flat.device.type == "cpu")  # as DALI's CPU backend
        sizes, base = flat_geometry(flat, ids)
        out = W.warp_flat(flat.items(), coords, sizes, base, self.interp, self.fill, out_dtype)
        return R.split(out, [(h, w, flat.shapes[0][-1]) for h, w in out_hw])

    def matrices_input(self, inputs: list[TensorList]) -> list[Any]:
        return []

    def plans_2d(self, spatials: list[list[int]], args: dict[str, list[Any]], mats: list[Any]
                 ) -> list[tuple[list[int], torch.Tensor]] | None:
        """`plan` of every image of a batch of 2D images (no frames) at once, or None (sample by
        sample): the same sizes and matrices, without a NumPy call per sample."""
        return None

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout, ndim, has_frames = self.layout_of(tl)
        mats_in = self.matrices_input(inputs)
        n = len(tl)
        spatials: list[list[int]] = []
        for x in tl:
            if x.dim() != ndim + 1 + has_frames:
                raise ArgumentError(f"{self.name}: a {layout} sample must have {ndim + 1 + has_frames} "
                                    f"dimensions, got shape {tuple(x.shape)}")
            spatials.append([int(s) for s in x.shape[has_frames:has_frames + ndim]])
        plans = None if has_frames or ndim != 2 else self.plans_2d(spatials, args, mats_in)
        if plans is None:
            plans = [self.plan(tl[i], spatials[i], ndim, int(tl[i].shape[0]) if has_frames else 1, i, args, mats_in)
                     for i in range(n)]

        def one(i: int) -> torch.Tensor:
            x = tl[i]
            out_size, mats = plans[i]
            imgs = x if has_frames else x.unsqueeze(0)
            y = self.resample(imgs, mats.to(x.device), out_size, self.out_dtype(x))
            return y if has_frames else y[0]

        if self.device.type == "cuda" and n > 1 and tl.is_dense_tensor():
            same = all(p[0] == plans[0][0] and p[1].shape == plans[0][1].shape for p in plans)
            if same and not has_frames:  # the whole batch in one call
                x = tl.as_tensor()
                mats = torch.cat([p[1] for p in plans]).to(x.device)
                return [TensorList(self.resample(x, mats, plans[0][0], self.out_dtype(x[0])), layout)]
        if batching.batched(self, tl) and layout == "HWC":
            out = self.resample_flat(tl.samples, plans)
            if out is not None:
                return [TensorList(out, layout)]
        return [TensorList(ctx.map(one, n) if self.device.type == "cpu" else [one(i) for i in range(n)],
                           layout)]


def flat_geometry(flat: Flat, ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Per point (ids: its sample), its image's (height, width) and first row in the flat items."""
    table = torch.tensor([[s[0], s[1], b] for s, b in zip(flat.shapes, R.starts(flat.rows))], dtype=ids.dtype)
    table = table.t().contiguous().to(ids.device, non_blocking=True)
    h, w, base = (table[k].index_select(0, ids) for k in range(3))
    return [h, w], base


def _scalar(op: str, name: str, v: Any) -> float:
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ArgumentError(f"{op}: `{name}` must be one value per sample, got {v!r}")
        v = v[0]
    return float(v)


class Rotate(_Warp):
    """Turns images (counter-clockwise on screen) or volumes (about `axis`) about their centre."""

    per_frame_ok = True  # frames are turned independently: takes fn.per_frame angles / axes

    def per_frame_layout(self, layout: str, ndim: int) -> str:
        """Per-frame arguments need sequences (DALI 2.4): a layout-less 4-D input is read as FHWC;
        HWC, DHWC and layout-less 3-D inputs are refused."""
        return require_frames(self.name, layout or ("FHWC" if ndim == 4 else ""))

    def plan(self, x: torch.Tensor, spatial: list[int], ndim: int, frames: int, i: int,
             args: dict[str, list[Any]], mats: list[Any]) -> tuple[list[int], torch.Tensor]:
        angle = _scalar(self.name, "angle", args["angle"][i] if "angle" in args else self.args["angle"])
        rad = float(A.deg2rad(angle))
        axis = None
        if ndim == 3:
            axis = args["axis"][i] if "axis" in args else self.args.get("axis")
            if axis is None:
                raise ArgumentError(f"{self.name}: `axis` is required to rotate volumes (DHWC)")
            axis = [axis] if isinstance(axis, (int, float)) else list(axis)
            if len(axis) != 3:
                raise ArgumentError(f"{self.name}: `axis` must have 3 values, got {axis!r}")
            if not any(float(a) != 0 for a in axis):
                raise ArgumentError(f"{self.name}: `axis` must have a non-zero length, got {axis!r}")
        in_xyz = spatial[::-1]
        size = self.explicit_size(args, i, ndim)
        if size is not None:
            out_xyz = size[::-1]
        elif self.args["keep_size"]:
            out_xyz = list(in_xyz)
        else:
            canvas, parity = A.rotated_canvas(in_xyz, rad, axis)
            out_xyz = A.fix_parity(canvas, [parity])
        m = A.rotate_matrix(in_xyz, out_xyz, rad, axis)
        return out_xyz[::-1], torch.from_numpy(m)[None]

    def sequence_frame_args(self, frames: TensorList, fargs: dict[str, list[Any]], counts: list[int]
                            ) -> dict[str, list[Any]]:
        """Per-frame angles (or axes) with the canvas left to fit (no `size`, no `keep_size`): the
        frames of a sequence share one canvas, as DALI 2.4 sizes it: each extent the largest of the
        frames' fitted canvases, its parity that of the majority of the frames (`A.fix_parity`);
        every frame turns about that canvas's centre."""
        if "size" in fargs or self.args.get("size") not in (None, []) or self.args["keep_size"] or not len(frames):
            return fargs
        lay = frames.layout() or ("HWC" if frames[0].dim() == 3 else "DHWC" if frames[0].dim() == 4 else "HW")
        axes = [lay.index(a) for a in "DHW" if a in lay]  # outermost first
        val = lambda k, i: fargs[k][i] if k in fargs else self.args.get(k)  # noqa: E731
        angles = [_scalar(self.name, "angle", val("angle", i)) for i in range(len(frames))]
        if len(axes) == 2:
            rads = (np.asarray(angles, dtype=A.F32) * A.F32(math.pi / 180.0)).tolist()  # as `plans_2d`
            fitted = [A.rotated_canvas([int(x.shape[axes[1]]), int(x.shape[axes[0]])], r, None)
                      for x, r in zip(frames, rads)]
        else:
            fitted = []
            for i, x in enumerate(frames):
                axis = val("axis", i)
                if axis is None:
                    return fargs  # `plan` reports it
                axis = [axis] if isinstance(axis, (int, float)) else list(axis)
                fitted.append(A.rotated_canvas([int(x.shape[a]) for a in axes[::-1]],
                                               float(A.deg2rad(angles[i])), axis))
        sizes: list[Any] = []
        for n in counts:
            part, fitted = fitted[:n], fitted[n:]
            top = [max(c[0][d] for c in part) for d in range(len(axes))]
            out_xyz = A.fix_parity(top, [c[1] for c in part])
            sizes += [[float(v) for v in out_xyz[::-1]]] * n
        return {**fargs, "size": sizes}


    def plans_2d(self, spatials: list[list[int]], args: dict[str, list[Any]], mats: list[Any]
                 ) -> list[tuple[list[int], torch.Tensor]] | None:
        n = len(spatials)
        angles = [_scalar(self.name, "angle", args["angle"][i] if "angle" in args else self.args["angle"])
                  for i in range(n)]
        rads = (np.asarray(angles, dtype=A.F32) * A.F32(math.pi / 180.0)).tolist()  # `A.deg2rad`, elementwise
        ins, outs = [], []
        for i, (h, w) in enumerate(spatials):
            size = self.explicit_size(args, i, 2)
            if size is not None:
                out_xy = size[::-1]
            elif self.args["keep_size"]:
                out_xy = [w, h]
            else:
                canvas, parity = A.rotated_canvas([w, h], rads[i], None)
                out_xy = A.fix_parity(canvas, [parity])
            ins.append([w, h])
            outs.append(out_xy)
        m = torch.from_numpy(A.rotate_matrices(ins, outs, rads))
        return [(o[::-1], m[i:i + 1]) for i, o in enumerate(outs)]


class WarpAffine(_Warp):
    """Maps every output pixel centre through `matrix` (destination to source unless
    `inverse_map=False`) and samples the input there."""

    per_frame_ok = True  # `matrix=fn.per_frame(m)`: one matrix per frame (run_batch)
    own_frames = True

    def setup(self) -> None:
        super().setup()
        m = self.args.get("matrix")
        if len(self.node.inputs) < 2 and "matrix" not in self.node.arg_inputs and not m:
            raise ArgumentError(f"{self.name}: give `matrix` (or the matrices as a second input)")
        other = [k for k in self.per_frame_names if k != "matrix"]
        if other:
            raise ArgumentError(f"{self.name}: argument `{other[0]}` is given per frame (fn.per_frame), but only "
                                "`matrix` may be")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        if "matrix" in self.per_frame_names:
            return self._run_per_frame(ctx, [inputs[0], self._frame_matrices(inputs[0], args["matrix"])],
                                       {k: v for k, v in args.items() if k != "matrix"})
        if len(inputs) > 1 and inputs[1].layout().startswith("F"):
            return self._run_per_frame(ctx, inputs, args)
        return super().run_batch(ctx, inputs, args)

    def _frame_matrices(self, tl: TensorList, values: list[Any]) -> TensorList:
        """`matrix=fn.per_frame(m)` as DALI 2.4 takes it: the input must be a sequence, and one
        (2, 3) matrix serves every frame (unlike matrices given as a second input)."""
        layout, _, has_frames = self.layout_of(tl)
        if not has_frames:
            require_frames(self.name, layout)
        mats = []
        for i, v in enumerate(values):
            m = torch.as_tensor(v, dtype=torch.float32)
            if m.dim() == 3 and m.shape[0] == 1:
                m = m.expand(int(tl[i].shape[0]), *m.shape[1:])
            mats.append(m)
        return TensorList(mats, "F**")

    def _run_per_frame(self, ctx: BatchContext, inputs: list[TensorList],
                       args: dict[str, list[Any]]) -> list[TensorList]:
        """Matrices given per frame (a second input whose layout starts with "F", as fn.per_frame
        or a sequence of fn.transforms makes): frame f of sample i is warped by matrix f. An input
        without frames is used whole for every frame, so the output is a sequence ("F" + layout);
        an input with frames must have as many as there are matrices (DALI 2.4 refuses others)."""
        tl, mt = inputs[0], inputs[1]
        layout, ndim, has_frames = self.layout_of(tl)
        n = len(tl)
        if len(mt) != n:
            raise ArgumentError(f"{self.name}: expected one set of per-frame matrices per sample, got {len(mt)} "
                                f"for {n} samples")

        def one(i: int) -> torch.Tensor:
            x, m = tl[i], mt[i]
            if x.dim() != ndim + 1 + has_frames:
                raise ArgumentError(f"{self.name}: a {layout} sample must have {ndim + 1 + has_frames} "
                                    f"dimensions, got shape {tuple(x.shape)}")
            if m.dim() != 3 or tuple(m.shape[1:]) != (ndim, ndim + 1):
                raise ArgumentError(f"{self.name}: per-frame matrices must be ({ndim}, {ndim + 1}) for each "
                                    f"frame, got shape {tuple(m.shape)} in sample {i}")
            frames = int(m.shape[0])
            if has_frames and int(x.shape[0]) != frames:
                raise ArgumentError(f"{self.name}: sample {i} has {int(x.shape[0])} frames but {frames} "
                                    "per-frame matrices")
            spatial = [int(s) for s in x.shape[has_frames:has_frames + ndim]]
            size = self.explicit_size(args, i, ndim)
            out_size = size if size is not None else spatial
            out_dtype = self.out_dtype(x)
            if frames == 0:
                return torch.empty((0, *out_size, int(x.shape[-1])), dtype=out_dtype, device=x.device)
            mats = torch.cat([self._matrix(m[f], ndim) for f in range(frames)])
            imgs = x if has_frames else x.unsqueeze(0).expand(frames, *x.shape)
            return self.resample(imgs, mats.to(x.device), out_size, out_dtype)

        out_layout = layout if has_frames else "F" + layout
        return [TensorList(ctx.map(one, n) if self.device.type == "cpu" else [one(i) for i in range(n)],
                           out_layout)]

    def matrices_input(self, inputs: list[TensorList]) -> list[Any]:
        if len(inputs) < 2:
            return []
        mt = inputs[1]
        if len(mt) == 1 and len(inputs[0]) != 1 and mt[0].dim() == 3:  # one (N, nd, nd + 1) tensor
            return list(mt[0].unbind(0))
        return list(mt)

    def _matrix(self, v: Any, ndim: int) -> torch.Tensor:
        t = torch.as_tensor(v, dtype=torch.float32) if not isinstance(v, torch.Tensor) else v
        if t.dtype != torch.float32:
            raise ArgumentTypeError(f"{self.name}: the matrices must be float32, got {t.dtype}")
        if t.numel() != ndim * (ndim + 1):
            raise ArgumentError(f"{self.name}: `matrix` must have {ndim * (ndim + 1)} values "
                                f"({ndim}x{ndim + 1}) for {ndim}D data, got {t.numel()}")
        t = t.reshape(ndim, ndim + 1)
        if not self.args["inverse_map"]:
            try:
                inv = A.invert_affine(t.detach().cpu().numpy())
            except ValueError:
                raise ArgumentError(f"{self.name}: `matrix` is singular; inverse_map=False needs an "
                                    f"invertible transform") from None
            t = torch.from_numpy(inv).to(t.device)
        return t[None]

    def plans_2d(self, spatials: list[list[int]], args: dict[str, list[Any]], mats: list[Any]
                 ) -> list[tuple[list[int], torch.Tensor]] | None:
        n = len(spatials)
        if mats:
            return None
        if "matrix" in args:
            vals = args["matrix"]
            if any(np.shape(v) != (2, 3) for v in vals):
                return None  # `plan` names the sample
            m = torch.tensor(vals, dtype=torch.float32).reshape(n, 2, 3)
            if not self.args["inverse_map"]:
                try:
                    m = torch.from_numpy(A.invert_affine(m.numpy()))
                except ValueError:
                    return None  # `plan` names the sample
            per = [m[i:i + 1] for i in range(n)]
        else:
            per = [self._matrix(self.args["matrix"], 2)] * n  # one constant: converted (inverted) once
        out = []
        for i, spatial in enumerate(spatials):
            size = self.explicit_size(args, i, 2)
            out.append((size if size is not None else spatial, per[i]))
        return out

    def plan(self, x: torch.Tensor, spatial: list[int], ndim: int, frames: int, i: int,
             args: dict[str, list[Any]], mats: list[Any]) -> tuple[list[int], torch.Tensor]:
        if mats:
            if len(mats) != len(args.get("matrix", mats)) or i >= len(mats):
                raise ArgumentError(f"{self.name}: expected one matrix per sample, got {len(mats)}")
            m = self._matrix(mats[i], ndim)
        elif "matrix" in args:
            v = args["matrix"][i]
            shape = tuple(np.shape(v))
            # DALI 2.4 also takes a (1, ndim, ndim + 1) sample for an input without frames
            if shape != (ndim, ndim + 1) and not (shape == (1, ndim, ndim + 1) and x.dim() == ndim + 1):
                raise ArgumentError(f"{self.name}: each sample of a per-sample `matrix` must be a "
                                    f"{ndim}x{ndim + 1} tensor, got shape {shape}")
            m = self._matrix(v, ndim)
        else:
            m = self._matrix(self.args["matrix"], ndim)
        size = self.explicit_size(args, i, ndim)
        return (size if size is not None else spatial), m


def _common(extra: tuple[Arg, ...]) -> tuple[Arg, ...]:
    return (
        *extra,
        Arg("size", "floats", None, "output size, spatial dimensions only (e.g. (H, W)); a constant "
            "rounds to the nearest integer", tensor=True),
        Arg("fill_value", "float", None, "value for areas outside the source; without it the border "
            "pixels repeat"),
        Arg("interp_type", "interp_type", types.INTERP_LINEAR, "INTERP_NN or INTERP_LINEAR"),
        Arg("dtype", "dtype", None, "output type: the input's or FLOAT (any, from a float input)",
            aliases=("output_dtype",)),
    )


register(OpSchema(
    name="rotate", impl=Rotate,
    doc="Rotates images (HWC, FHWC) counter-clockwise by `angle` degrees, or volumes (DHWC, FDHWC) "
        "about `axis`; the canvas fits the result unless `size` or `keep_size` says otherwise.",
    args=_common((
        Arg("angle", "float", doc="angle in degrees", tensor=True),
        Arg("axis", "float_list", None, "rotation axis (x, y, z) for volumes", tensor=True),
        Arg("keep_size", "bool", False, "keep the input's size instead of fitting the rotated image"),
    )),
))
register(OpSchema(
    name="warp_affine", impl=WarpAffine, max_inputs=2, input_kinds=("", "cpu_or_same"),
    doc="Applies an affine transform (HWC, FHWC, DHWC, FDHWC): output pixel p (its centre) takes the "
        "input at matrix @ (p, 1), with (0, 0) the corner of the first pixel.",
    args=_common((
        Arg("matrix", "float_list", None, "(2x3 or 3x4, row-major) destination-to-source transform, "
            "unless inverse_map=False", tensor=True),
        Arg("inverse_map", "bool", True, "False: `matrix` maps source to destination (it is inverted)"),
    )),
))
