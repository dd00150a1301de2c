"""Layouts for image ops: which axis is H, W, C (and F, D), and a canonical form the HWC kernels run on.

An op learns its input's layout when the pipeline is built (`Operator.connect`): the producer's
declared output layout, followed back through ops that keep their input's layout (an external
source's `layout=`, a decoder's HWC...). An empty layout means DALI's default for that number of
dimensions (HWC for 3, FHWC for 4, ...); any other layout the op does not list is refused, naming
it. The kernels written for HWC images run on every accepted layout through `Canonical`: the
sample is permuted (a view) to H, W, then the other axes with C last, and those others are merged
into one "channel" axis, so frames of a sequence are processed together in one call.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import torch

from ..errors import ArgumentError, PipelineError

# what DALI 2.4 accepts per op (its schemas' supported layouts), and the default for an input with
# no layout, by number of dimensions (DALI's choice; crop's 4-D default is DHWC, the others FHWC)
FLIP = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW", "HW")
CROP = ("HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW", "HW")
RESIZE = ("HWC", "FHWC", "CHW", "FCHW", "CFHW", "HW")
RANDOM_RESIZED_CROP = ("HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW", "HW")
COLOR = ("HWC", "FHWC", "DHWC")
DEFAULT = {2: "HW", 3: "HWC", 4: "FHWC", 5: "FDHWC"}
DEFAULT_CROP = {2: "HW", 3: "HWC", 4: "DHWC", 5: "FDHWC"}


def static_layout(plan: Any, data: Any, depth: int = 0) -> tuple[str, bool]:
    """The layout the batch `data` (a DataNode) will have, from the ops' declared output layouts
    (None: the layout of the op's first input), and whether that is known before it runs (an
    external source without `layout=` learns it from the data fed: `layout_known` False)."""
    op = plan.op(data.node)
    known = op.layout_known(data.index)
    lay = op.output_layout(data.index)
    if lay is not None or not known:
        return lay or "", known
    if not data.node.inputs or depth > 200:
        return "", True
    return static_layout(plan, data.node.inputs[0], depth + 1)


def resolve(op: str, layout: str, ndim: int, allowed: Sequence[str], defaults: dict[int, str] = DEFAULT) -> str:
    """The layout to use for a sample of `ndim` dimensions: `layout`, or the default for `ndim`;
    refused (naming it and what the op takes) unless in `allowed`."""
    if not layout:
        layout = defaults.get(ndim, "")
        if not layout or layout not in allowed:
            raise ArgumentError(f"{op}: cannot process a {ndim}-dimensional input with no layout; it takes "
                                f"{', '.join(allowed)} (set the layout, e.g. external_source(layout=...))")
    check_allowed(op, layout, allowed)
    if len(layout) != ndim:
        raise ArgumentError(f'{op}: the input layout "{layout}" has {len(layout)} dimensions, the sample has '
                            f"{ndim} (shape {ndim})")
    return layout


def require_frames(op: str, layout: str) -> str:
    """`layout`, which must be a sequence's: per-frame arguments need frames to go with."""
    if not layout.startswith("F"):
        raise ArgumentError(f"{op}: an argument is given per frame (fn.per_frame), but input 0 (layout "
                            f"'{layout}') is not a sequence of frames")
    return layout


class InputLayoutError(PipelineError, ValueError):
    """A batch whose layout (or number of dimensions) the op does not take, found as it runs: a
    PipelineError naming the op, and a ValueError as DALI raises for it."""


def refuse_input(node: Any, e: Exception) -> InputLayoutError:
    """`e` (the op's refusal of its input's layout) as the InputLayoutError of the op at `node`."""
    return InputLayoutError(f"{node.describe()} failed: {e}", op=node.schema.display_name(), origin=node.origin)


def check_allowed(op: str, layout: str, allowed: Sequence[str]) -> None:
    if layout not in allowed:
        raise ArgumentError(f'{op}: the input layout "{layout}" is not supported; it takes {", ".join(allowed)}')


class Canonical:
    """One sample seen as (H, W, K): K merges every axis but H and W, channels last (so a
    per-channel vector for C channels repeats K // C times). `back` undoes it for a result of
    new height and width."""

    def __init__(self, x: torch.Tensor, layout: str) -> None:
        if x.dim() != len(layout):
            raise ArgumentError(f'layout "{layout}" has {len(layout)} dimensions, the sample {x.dim()}')
        self.layout = layout
        h, w = layout.index("H"), layout.index("W")
        rest = [i for i, a in enumerate(layout) if a not in "HWC"]
        chan = [layout.index("C")] if "C" in layout else []
        self.order = [h, w, *rest, *chan]
        self.rest_shape = [int(x.shape[i]) for i in rest + chan]
        self.channels = int(x.shape[chan[0]]) if chan else 1
        self.frames = math.prod(int(x.shape[i]) for i in rest)
        self.hwk = x.permute(self.order).reshape(int(x.shape[h]), int(x.shape[w]), math.prod(self.rest_shape))

    @property
    def plain(self) -> bool:
        """Whether the sample is an HWC image already (no permutation, no frames)."""
        return self.layout == "HWC"

    def per_k(self, values: Sequence[float] | None) -> list[float] | None:
        """A per-channel list (1 or C values) repeated for every merged frame."""
        if values is None:
            return None
        vals = list(values)
        return vals * self.frames if len(vals) == self.channels and self.frames > 1 else vals

    def back(self, y: torch.Tensor, order: str | None = None) -> torch.Tensor:
        """A result (H', W', K) as the input's layout (or `order`, a permutation of it)."""
        out = y.reshape(int(y.shape[0]), int(y.shape[1]), *self.rest_shape)
        canon = "HW" + "".join(a for a in self.layout if a not in "HWC") + ("C" if "C" in self.layout else "")
        target = order or self.layout
        return out.permute([canon.index(a) for a in target]).contiguous()


def crop_axis(x: torch.Tensor, axis: int, start: int, size: int, fill: Sequence[float], c_axis: int) -> torch.Tensor:
    """`size` entries of `axis` from `start`; entries outside the input are `fill` (one value, or
    one per channel along `c_axis`)."""
    n = int(x.shape[axis])
    if start >= 0 and start + size <= n:
        return x.narrow(axis, start, size)
    shape = list(x.shape)
    shape[axis] = size
    vals = list(fill) or [0.0]
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    if len(vals) == 1 or c_axis < 0:
        out.fill_(vals[0])
    else:
        if len(vals) != shape[c_axis]:
            raise ArgumentError(f"`fill_values` must have 1 or {shape[c_axis]} values, got {len(vals)}")
        view = [1] * len(shape)
        view[c_axis] = len(vals)
        out.copy_(torch.tensor(vals, dtype=torch.float64).to(x.dtype).reshape(view).expand(shape))
    lo, hi = max(0, start), min(n, start + size)
    if hi > lo:
        out.narrow(axis, lo - start, hi - lo).copy_(x.narrow(axis, lo, hi - lo))
    return out


def pad_channels(y: torch.Tensor, layout: str, values: torch.Tensor | None = None) -> torch.Tensor:
    """Channels appended up to the next power of two (crop_mirror_normalize's pad_output): zeros,
    or `values` (one per added channel, in y's type)."""
    c = layout.index("C")
    n = int(y.shape[c])
    target = 1 << max(0, (n - 1).bit_length())
    if target == n:
        return y
    shape = list(y.shape)
    shape[c] = target - n
    view = [1] * len(shape)
    view[c] = target - n
    extra = torch.zeros(shape, dtype=y.dtype, device=y.device) if values is None else \
        values.to(y.device, y.dtype).reshape(view).expand(shape)
    return torch.cat([y, extra], dim=c)


def crop_depth(x: torch.Tensor, layout: str, size: float | None, pos: float, rounding: str, policy: str,
               fill: Sequence[float]) -> torch.Tensor:
    """The depth window of a volume (D; or F, when a depth `size` is given for a sequence, as DALI
    treats it), `size` long at relative position `pos`; the window leaving the volume follows the
    out-of-bounds `policy`. Height and width are cut afterwards."""
    from ..functional import crop as C
    from ..functional import regions as R
    axis = "D" if "D" in layout else "F" if (size and "F" in layout) else ""
    if not axis or not size:
        return x
    n = int(x.shape[layout.index(axis)])
    z, _, d, _ = C.crop_window(n, 1, float(size), None, pos, 0.5, rounding)
    z, _, d, _ = C.apply_policy((z, 0, d, 1), n, 1, policy)
    if policy in R.BORDER_POLICIES:  # edge, reflect, wrap: the outside taken from the volume
        a = layout.index(axis)
        return R.slice_window(x, [z if k == a else 0 for k in range(x.dim())],
                              [d if k == a else int(x.shape[k]) for k in range(x.dim())], policy)
    return crop_axis(x, layout.index(axis), z, d, fill, layout.find("C"))
