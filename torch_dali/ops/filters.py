"""gaussian_blur, laplacian and filter: convolutions over the spatial axes of images, sequences and
volumes (CPU or CUDA tensors; kernels in `functional.filters`).

Which axes are spatial (DALI 2.4's rule for gaussian_blur and laplacian): every axis but leading
'F'/'C' axes (at most two) and a trailing 'C'; with no layout every axis is spatial (at most 3).
A dense batch whose samples share their arguments runs as one set of torch calls over the batch;
on CUDA, so do HW/HWC images of different sizes (in padded groups, `functional.ragged`).
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import filters as K
from ..functional import ragged as R
from ..functional.crop import convert
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import _dispatch
from ._operator import BatchContext
from ._registry import register
from ._schema import Arg, OpSchema, one_of
from .layouts import require_frames
from .layout_op import Args, LayoutOp, uniform

MAX_AXES = 3


def spatial_axes(layout: str, ndim: int) -> list[int]:
    """The spatial axes of a sample (DALI's rule above), or an error naming the layout."""
    if not layout:
        if ndim > MAX_AXES:
            raise ArgumentError(f"Input data with empty layout cannot have more than {MAX_AXES} "
                                f"dimensions, got input with {ndim} dimensions.")
        return list(range(ndim))
    channel_last = layout.endswith("C")
    start = 0
    while start < len(layout) - channel_last and layout[start] in "FC":
        start += 1
    inner = layout[start:len(layout) - channel_last]
    if "C" in inner:
        raise ArgumentError(f"Only channel-first or channel-last layouts are supported, got: {layout}.")
    if "F" in inner:
        raise ArgumentError(f"For sequences, layout should begin with 'F' or 'C', got: {layout}.")
    if start > 2:
        raise ArgumentError(f"Found more the one occurrence of 'F' or 'C' axes in layout: {layout}.")
    if not inner:
        raise ArgumentError(f"No spatial axes found in the layout: {layout}.")
    if len(inner) > MAX_AXES:
        raise ArgumentError(f"Too many dimensions, found: {len(inner)} data axes, maximum supported is: "
                            f"{MAX_AXES}.")
    return list(range(start, start + len(inner)))


def per_axis(op: str, name: str, value: Any, naxes: int, sample: int | None) -> list[Any]:
    """`value` (one value, or one per spatial axis) as one value per axis."""
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(vals) == 1:
        return vals * naxes
    if len(vals) == naxes:
        return vals
    if sample is None:
        raise ArgumentError(f'{op}: Argument "{name}" expects either a single value or a list of {naxes} '
                            f"elements. {len(vals)} given.")
    raise ArgumentError(f"{op}: Argument {name} for sample {sample} is expected to have 1 or {naxes} "
                        f"elements, got: {len(vals)}")


class _Convolution(LayoutOp):
    """Shared: output type (the input's or float), spatial axes, dense/per-sample dispatch."""

    tensor_args: tuple[str, ...] = ()
    per_frame_ok = True  # frames are filtered independently: takes fn.per_frame arguments

    def setup(self) -> None:
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)

    def out_type(self, x: torch.Tensor) -> torch.dtype:
        if x.dtype == torch.bool:
            raise ArgumentTypeError(f"{self.name}: unsupported input type bool")
        if self.dtype is None or self.dtype == x.dtype:
            return x.dtype
        if self.dtype != torch.float32:
            raise ArgumentError(f"{self.name}: Output data type must be same as input, FLOAT or skipped "
                                f"(defaults to input type), got {self.dtype} for a {x.dtype} input")
        return torch.float32

    def check_layout(self, layout: str, ndim: int) -> str:
        spatial_axes(layout, ndim)  # refuses bad layouts before any sample runs
        return layout

    def per_frame_layout(self, layout: str, ndim: int) -> str:
        """Per-frame arguments need sequences: DALI 2.4 refuses HWC, DHWC and layout-less inputs."""
        return require_frames(self.name, layout)

    def dense_ok(self, args: dict[str, list[Any]], x: torch.Tensor, layout: str) -> bool:
        return all(uniform(v) for v in args.values())

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.apply(x.unsqueeze(0), layout, args, index)[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.apply(x, layout, {k: v[0] for k, v in args.items()}, None)

    def apply(self, x: torch.Tensor, layout: str, args: Args, sample: int | None) -> torch.Tensor:
        raise NotImplementedError

    def work(self, args: Args, naxes: int, sample: int | None) -> tuple[Any, list[int]]:
        """What `apply` computes for a sample, as a hashable key (samples with equal keys run
        together), and the border each spatial axis needs."""
        raise NotImplementedError

    def apply_padded(self, xp: torch.Tensor, key: Any, pads: list[int], lengths: list[int]) -> torch.Tensor:
        """`apply`'s filter on a padded group (G, H, W, C) in the work type (see K.separable)."""
        raise NotImplementedError

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        """HW or HWC images of different sizes: samples with the same windows in padded groups
        (`functional.ragged`), each group one set of torch calls; the values `apply` gives."""
        if layout not in ("HWC", "HW") or len({x.dtype for x in samples}) != 1 \
                or any(x.numel() == 0 for x in samples):
            return None
        out_t = self.out_type(samples[0])
        jobs: dict[Any, list[int]] = {}
        radius: dict[Any, list[int]] = {}
        for i in range(len(samples)):
            key, rad = self.work({k: v[i] for k, v in args.items()}, 2, i)
            jobs.setdefault(key, []).append(i)
            radius[key] = rad
        flat = Flat(samples, inner=1 if layout == "HWC" else 0)
        items = flat.items()
        hw = [(int(s[0]), int(s[1])) for s in flat.shapes]
        first = R.starts(flat.rows)
        results, groups = [], []
        for key, members in jobs.items():
            rh, rw = radius[key]
            for part in R.size_groups([hw[i] for i in members]):
                group = [members[j] for j in part]
                box = (max(hw[i][0] for i in group), max(hw[i][1] for i in group))
                xp = R.pad_gather(items, [first[i] for i in group], [hw[i][1] for i in group], [hw[i] for i in group],
                                  box, (rh, rh, rw, rw), "reflect_101")
                results.append(self.apply_padded(xp.to(K.work_dtype(xp.dtype)), key, [rh, rw], list(box)))
                groups.append(group)
        y = _dispatch.call(convert, R.gather_groups(results, groups, hw), out_t)
        return flat.split(y)


class GaussianBlur(_Convolution):
    def windows(self, args: Args, naxes: int, sample: int | None) -> tuple[list[float], list[int]]:
        idx = 0 if sample is None else sample
        sig = per_axis(self.name, "sigma", self.get(args, "sigma"), naxes, None if "sigma" not in args else idx)
        win = per_axis(self.name, "window_size", self.get(args, "window_size"), naxes,
                       None if "window_size" not in args else idx)
        sigmas, sizes = [], []
        for ax, (s, w) in enumerate(zip(sig, win)):
            s, w = float(s), int(w)
            if s < 0:
                raise ArgumentError(f"`sigma` must have non-negative values, got {s:g} for sample: {idx}, axis: {ax}.")
            if w < 0:
                raise ArgumentError(f"`window_size` must have non-negative values, got {w} for sample: {idx}, "
                                    f"axis : {ax}.")
            if s == 0 and w == 0:
                raise ArgumentError(f"`sigma` and `window_size` shouldn't be 0 at the same time for sample: "
                                    f"{idx}, axis: {ax}.")
            if w == 0:
                w = K.sigma_to_diameter(s)
            elif s == 0:
                s = K.diameter_to_sigma(w)
            if w % 2 == 0:
                raise ArgumentError(f"Kernel window should have odd length, got: {w}.")
            sigmas.append(s)
            sizes.append(w)
        return sigmas, sizes

    def apply(self, x: torch.Tensor, layout: str, args: Args, sample: int | None) -> torch.Tensor:
        axes = spatial_axes(layout, x.dim() - 1)
        out_t = self.out_type(x)
        sigmas, sizes = self.windows(args, len(axes), sample)
        if x.dtype == torch.float16 and x.device.type == "cpu":  # DALI's float16 products and passes
            y = K.gaussian_blur_half(x.float(), [a + 1 for a in axes], sigmas, sizes)
        else:
            y = _dispatch.call(K.gaussian_blur, x.to(K.work_dtype(x.dtype)), [a + 1 for a in axes], sigmas, sizes)
        return _dispatch.call(convert, y, out_t)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        if samples and samples[0].dtype == torch.float16:
            return None  # sample by sample through `apply` (the float16 arithmetic)
        return super().run_ragged(samples, layout, args, seed, iteration)

    def work(self, args: Args, naxes: int, sample: int | None) -> tuple[Any, list[int]]:
        sigmas, sizes = self.windows(args, naxes, sample)
        return (tuple(sigmas), tuple(sizes)), [d // 2 for d in sizes]

    def apply_padded(self, xp: torch.Tensor, key: Any, pads: list[int], lengths: list[int]) -> torch.Tensor:
        return _dispatch.call(K.gaussian_blur, xp, [1, 2], list(key[0]), list(key[1]), pads, lengths)


MAX_LAPLACIAN = 31


class Laplacian(_Convolution):
    def setup(self) -> None:
        super().setup()
        self.normalized = bool(self.args["normalized_kernel"])
        if self.normalized and ("scale" in self.node.arg_inputs or "scale" in self.node.explicit):
            raise ArgumentError(f"{self.name}: Parameter ``scale`` cannot be specified when "
                                f"``normalized_kernel`` is set to True")

    def sizes(self, args: Args, naxes: int, sample: int | None) -> list[list[int]]:
        idx = 0 if sample is None else sample
        deriv = [int(v) for v in per_axis(self.name, "window_size", self.get(args, "window_size"), naxes,
                                          None if "window_size" not in args else idx)]
        for d in deriv:
            if not (3 <= d <= MAX_LAPLACIAN and d % 2 == 1):
                raise ArgumentError(f"Window size must be an odd integer between 3 and {MAX_LAPLACIAN}, got {d} "
                                    f"for sample: {idx}.")
        smooth_arg = self.get(args, "smoothing_size")
        if smooth_arg is None or (isinstance(smooth_arg, (list, tuple)) and not smooth_arg):
            return [[deriv[i]] * naxes for i in range(naxes)]
        smooth = [int(v) for v in per_axis(self.name, "smoothing_size", smooth_arg, naxes,
                                           None if "smoothing_size" not in args else idx)]
        for s in smooth:
            if not (1 <= s <= MAX_LAPLACIAN and s % 2 == 1):
                raise ArgumentError(f"Smoothing window size must be an odd integer between 1 and {MAX_LAPLACIAN}, "
                                    f"got {s} for sample: {idx}.")
        return [[deriv[i] if i == j else smooth[j] for j in range(naxes)] for i in range(naxes)]

    def apply(self, x: torch.Tensor, layout: str, args: Args, sample: int | None) -> torch.Tensor:
        axes = spatial_axes(layout, x.dim() - 1)
        out_t = self.out_type(x)
        sizes, scales = self.windows(args, len(axes), sample)
        if x.dtype == torch.float16 and x.device.type == "cpu":  # DALI's float16 products and sums
            y = K.laplacian_half(x.float(), [a + 1 for a in axes], sizes, scales)
        else:
            y = _dispatch.call(K.laplacian, x.to(K.work_dtype(x.dtype)), [a + 1 for a in axes], sizes, scales)
        return _dispatch.call(convert, y, out_t)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        if samples and samples[0].dtype == torch.float16:
            return None  # sample by sample through `apply` (the float16 arithmetic)
        return super().run_ragged(samples, layout, args, seed, iteration)

    def windows(self, args: Args, naxes: int, sample: int | None) -> tuple[list[list[int]], list[float]]:
        """The window sizes of each partial derivative and their scales."""
        sizes = self.sizes(args, naxes, sample)
        if self.normalized:
            scales = [2.0 ** -(sum(row) - naxes - 2) for row in sizes]
        else:
            idx = 0 if sample is None else sample
            scales = [float(v) for v in per_axis(self.name, "scale", self.get(args, "scale"), naxes,
                                                 None if "scale" not in args else idx)]
        return sizes, scales

    def work(self, args: Args, naxes: int, sample: int | None) -> tuple[Any, list[int]]:
        sizes, scales = self.windows(args, naxes, sample)
        key = (tuple(tuple(row) for row in sizes), tuple(scales))
        return key, [max(row[a] for row in sizes) // 2 for a in range(naxes)]

    def apply_padded(self, xp: torch.Tensor, key: Any, pads: list[int], lengths: list[int]) -> torch.Tensor:
        return _dispatch.call(K.laplacian, xp, [1, 2], [list(row) for row in key[0]], list(key[1]), pads, lengths)


# -- filter ---------------------------------------------------------------------------------------

FILTER_IN_TYPES = (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.int32, torch.float16, torch.float32)


#: the border names DALI 2.4's filter accepts, in any letter case, and the border each means
BORDER_NAMES = {"reflect_101": "reflect_101", "reflect101": "reflect_101", "101": "reflect_101",
                "reflect_1001": "reflect_1001", "reflect1001": "reflect_1001", "1001": "reflect_1001",
                "reflect": "reflect_1001", "wrap": "wrap", "clamp": "clamp", "edge": "clamp",
                "constant": "constant"}


def _border_name(v: Any) -> str | None:
    return None if isinstance(v, str) and v.lower() in BORDER_NAMES else \
        "one of " + ", ".join(repr(c) for c in BORDER_NAMES) + " (any letter case)"


class Filter(LayoutOp):
    """Correlation with a per-sample kernel (input 1), optional per-sample fill value (input 2)."""

    def setup(self) -> None:
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        self.border = BORDER_NAMES[self.args["border"].lower()]
        self.valid = self.args["mode"] == "valid"

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl, kernels = inputs[0], inputs[1]
        fills = inputs[2] if len(inputs) > 2 else None
        n = len(tl)
        if len(kernels) != n or (fills is not None and len(fills) != n):
            raise ArgumentError(f"{self.name}: the filter (and fill value) batches must have {n} samples")
        layout = tl.layout()
        run = lambda i: self.one(tl[i], layout, kernels[i], None if fills is None else fills[i],  # noqa: E731
                                 args["anchor"][i] if "anchor" in args else self.args["anchor"], i)
        return [TensorList(ctx.map(run, n), layout)]

    def one(self, x: torch.Tensor, layout: str, kernel: torch.Tensor, fill: torch.Tensor | None,
            anchor: Any, index: int) -> torch.Tensor:
        if x.dtype not in FILTER_IN_TYPES:
            raise ArgumentTypeError(f"{self.name}: unsupported input type {x.dtype}")
        out_t = x.dtype if self.dtype in (None, x.dtype) else self.dtype
        if out_t not in (x.dtype, torch.float32):
            raise ArgumentError(f"{self.name}: Output data type must be same as input, FLOAT or skipped "
                                f"(defaults to input type), got {self.dtype}")
        axes = spatial_axes(layout, x.dim()) if layout else list(range(x.dim()))
        nk = len(axes)
        if nk not in (2, 3) or kernel.dim() != nk:
            raise ArgumentError(f"{self.name}: sample {index}: a {nk}-D sample needs a {nk}-D filter (2-D or "
                                f"3-D data), got filter shape {tuple(kernel.shape)}")
        if kernel.numel() == 0:
            raise ArgumentError(f"{self.name}: sample {index}: the filter is empty")
        anc = per_axis(self.name, "anchor", anchor, nk, index)
        anc = [int(k) // 2 if int(a) == -1 else int(a) for a, k in zip(anc, kernel.shape)]
        for a, k in zip(anc, kernel.shape):
            if not 0 <= a < int(k):
                raise ArgumentError(f"{self.name}: sample {index}: the anchor {anc} must lie within the filter "
                                    f"of shape {tuple(kernel.shape)}")
        if self.valid and any(int(k) > int(x.shape[a]) for a, k in zip(axes, kernel.shape)):
            raise ArgumentError(f"{self.name}: Filter for sample of idx {index} is bigger than the sample "
                                f"({tuple(kernel.shape)} over {tuple(x.shape)}). This is not allowed if "
                                f"``mode`` is set to ``valid``.")
        wt = K.work_dtype(x.dtype)
        fv = 0.0 if fill is None else fill.to(wt).reshape(-1)[0]
        return _dispatch.call(K.filter_sample, x, axes, kernel, anc, self.border, fv, self.valid, out_t)


_DTYPE = Arg("dtype", "dtype", None, "output type: the input's (default) or FLOAT")

register(OpSchema(
    name="gaussian_blur", impl=GaussianBlur,
    doc="Blurs the spatial axes with a Gaussian: `sigma` gives a window of 2 * ceil(3 * sigma) + 1, a "
        "`window_size` alone gives sigma = ((window_size - 1) / 2 - 1) * 0.3 + 0.8; reflect_101 borders.",
    args=(Arg("sigma", "floats", 0.0, "sigma, one value or one per spatial axis", tensor=True),
          Arg("window_size", "ints", 0, "window diameter, one value or one per spatial axis", tensor=True),
          _DTYPE),
))
register(OpSchema(
    name="laplacian", impl=Laplacian,
    doc="Sum of second derivatives over the spatial axes, each a separable correlation with a "
        "derivative window and smoothing windows (OpenCV's); float32 intermediate, reflect_101 borders.",
    args=(Arg("window_size", "ints", 3, "derivative window size (odd, 3..31), one or one per axis", tensor=True),
          Arg("smoothing_size", "ints", None, "smoothing window size (odd, 1..31; default window_size)",
              tensor=True),
          Arg("scale", "floats", 1.0, "factor per partial derivative (one or one per axis)", tensor=True),
          Arg("normalized_kernel", "bool", False, "scale each partial by 2^-(sum of its window sizes - axes - 2)"),
          _DTYPE),
))
_FILTER_ARGS = (
    Arg("anchor", "ints", -1, "the filter's position over the output point (-1: its center)", tensor=True),
    Arg("border", "str", "reflect_101", "reflect_101 (or 101), reflect_1001 (or 1001, reflect), wrap, "
        "clamp (or edge) or constant; any letter case", check=_border_name),
    Arg("mode", "str", "same", "same (output as large as the input) or valid (only full windows)",
        check=one_of("same", "valid")),
    _DTYPE,
)
for _name in ("filter", "experimental.filter"):  # DALI keeps the experimental name as an alias
    register(OpSchema(
        name=_name, impl=Filter, min_inputs=2, max_inputs=3, args=_FILTER_ARGS,
        input_kinds=("", "cpu_or_same", "cpu_or_same"),
        doc="Correlates 2-D (or 3-D) samples with a per-sample filter (input 1) placed at `anchor`; "
            "input 2 is the fill value of the constant border."))
