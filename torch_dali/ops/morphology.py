"""experimental.median_blur, experimental.dilate, experimental.erode: window operations over H and W
of images and sequences (HW, HWC, FHWC, CHW, FCHW); DALI has them on the GPU only (CV-CUDA), these
run on either device. Sizes are (width, height) and anchors (x, y), as CV-CUDA and OpenCV take them.
A dense batch with one window for all samples runs as one set of torch calls; on CUDA, HW/HWC
images of different sizes run in padded groups (`functional.ragged`).
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import morphology as K
from ..functional import ragged as R
from ..functional.ragged import Flat
from ._registry import register
from ._schema import Arg, OpSchema, one_of, positive
from .layout_op import Args, LayoutOp, uniform

IMAGE_LAYOUTS = ("HW", "HWC", "FHWC", "CHW", "FCHW")


def _pair(op: str, name: str, v: Any) -> tuple[int, int]:
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(vals) == 1:
        vals = vals * 2
    if len(vals) != 2:
        raise ArgumentError(f"{op}: `{name}` must have 2 values (width, height), got {v!r}")
    return int(vals[0]), int(vals[1])


class _Window(LayoutOp):
    layouts = IMAGE_LAYOUTS

    def dense_ok(self, args: dict[str, list[Any]], x: torch.Tensor, layout: str) -> bool:
        return all(uniform(v) for v in args.values())

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.apply(x.unsqueeze(0), layout, args)[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.apply(x, layout, {k: v[0] for k, v in args.items()})

    def axes(self, layout: str) -> tuple[int, int]:
        return layout.index("H") + 1, layout.index("W") + 1

    def apply(self, x: torch.Tensor, layout: str, args: Args) -> torch.Tensor:
        raise NotImplementedError

    def work(self, x: torch.Tensor, args: Args) -> Any:
        """`apply`'s checks for one sample, and what it computes as a hashable key (samples with
        equal keys run together); None where the batched form does not take the sample."""
        return None

    def run_group(self, items: torch.Tensor, base: list[int], stride: list[int], hw: list[tuple[int, int]],
                  box: tuple[int, int], key: Any) -> torch.Tensor:
        """`apply` for images read from `items` (see `ragged.pad_gather`) -> (G, box..., C)."""
        raise NotImplementedError

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        """HW or HWC images of different sizes in padded groups (`functional.ragged`), the values
        `apply` gives each."""
        if layout not in ("HWC", "HW") or len({x.dtype for x in samples}) != 1 or any(x.numel() == 0 for x in samples):
            return None
        jobs: dict[Any, list[int]] = {}
        for i, x in enumerate(samples):
            key = self.work(x, {k: v[i] for k, v in args.items()})
            if key is None:
                return None
            jobs.setdefault(key, []).append(i)
        flat = Flat(samples, inner=1 if layout == "HWC" else 0)
        hw = [(int(s[0]), int(s[1])) for s in flat.shapes]
        first = R.starts(flat.rows)
        results, groups = [], []
        for key, members in jobs.items():
            for part in R.size_groups([hw[i] for i in members]):
                group = [members[j] for j in part]
                box = (max(hw[i][0] for i in group), max(hw[i][1] for i in group))
                results.append(self.run_group(flat.items(), [first[i] for i in group], [hw[i][1] for i in group],
                                              [hw[i] for i in group], box, key))
                groups.append(group)
        return flat.split(R.gather_groups(results, groups, hw))


class MedianBlur(_Window):
    def apply(self, x: torch.Tensor, layout: str, args: Args) -> torch.Tensor:
        if x.dtype not in (torch.uint8, torch.uint16, torch.float32):
            raise ArgumentTypeError(f"{self.name}: unsupported input type {x.dtype}; supported types are: "
                                    f"UINT8, UINT16 and FLOAT")
        w, h = _pair(self.name, "window_size", self.get(args, "window_size"))
        if w < 1 or h < 1 or w % 2 == 0 or h % 2 == 0:
            raise ArgumentError(f"{self.name}: `window_size` must be odd and positive, got {(w, h)}")
        ha, wa = self.axes(layout)
        return K.median_blur(x, ha, wa, (h, w))

    def work(self, x: torch.Tensor, args: Args) -> Any:
        if x.dtype not in (torch.uint8, torch.uint16, torch.float32):
            return None  # `apply` names the error
        w, h = _pair(self.name, "window_size", self.get(args, "window_size"))
        return None if w < 1 or h < 1 or w % 2 == 0 or h % 2 == 0 else (h, w)

    def run_group(self, items: torch.Tensor, base: list[int], stride: list[int], hw: list[tuple[int, int]],
                  box: tuple[int, int], key: Any) -> torch.Tensor:
        kh, kw = key
        xp = R.pad_gather(items, base, stride, hw, box, (kh // 2, kh // 2, kw // 2, kw // 2), "clamp")
        return K.median_padded(xp, 1, 2, (kh, kw), box)


class _Morph(_Window):
    dilate = True

    def setup(self) -> None:
        if int(self.args["iterations"]) < 1:
            raise ArgumentError(f"{self.name}: `iterations` must be >= 1, got {self.args['iterations']}")

    def apply(self, x: torch.Tensor, layout: str, args: Args) -> torch.Tensor:
        if x.dtype == torch.bool:
            raise ArgumentTypeError(f"{self.name}: unsupported input type bool")
        w, h = _pair(self.name, "mask_size", self.get(args, "mask_size"))
        ax, ay = _pair(self.name, "anchor", self.get(args, "anchor"))
        if w < 1 or h < 1:
            raise ArgumentError(f"{self.name}: `mask_size` must be positive, got {(w, h)}")
        ax, ay = (w // 2 if ax == -1 else ax), (h // 2 if ay == -1 else ay)
        if not (0 <= ax < w and 0 <= ay < h):
            raise ArgumentError(f"{self.name}: `anchor` {(ax, ay)} must lie within the mask {(w, h)}")
        ha, wa = self.axes(layout)
        return K.morph(x, ha, wa, (h, w), (ay, ax), self.args["border_mode"], int(self.args["iterations"]),
                       self.dilate)

    def work(self, x: torch.Tensor, args: Args) -> Any:
        if x.dtype in (torch.bool, torch.uint16, torch.uint32):
            return None  # errors, or types computed wider: sample by sample
        w, h = _pair(self.name, "mask_size", self.get(args, "mask_size"))
        ax, ay = _pair(self.name, "anchor", self.get(args, "anchor"))
        if w < 1 or h < 1:
            return None
        ax, ay = (w // 2 if ax == -1 else ax), (h // 2 if ay == -1 else ay)
        return (h, w, ay, ax) if 0 <= ax < w and 0 <= ay < h else None

    def run_group(self, items: torch.Tensor, base: list[int], stride: list[int], hw: list[tuple[int, int]],
                  box: tuple[int, int], key: Any) -> torch.Tensor:
        h, w, ay, ax = key
        border = K.MORPH_BORDERS[self.args["border_mode"]]
        fill = K.extreme(items.dtype, not self.dilate)  # a border value that never wins
        out = None
        for i in range(int(self.args["iterations"])):
            prev = out
            xp = R.pad_gather(items, base, stride, hw, box, (ay, h - 1 - ay, ax, w - 1 - ax), border, fill)
            out = K.morph_padded(xp, 1, 2, (h, w), box, self.dilate)
            items = out.reshape(-1, int(out.shape[-1]))
            base, stride = [g * box[0] * box[1] for g in range(len(hw))], [box[1]] * len(hw)
            if prev is not None and K.settled(i, prev, out):  # later iterations would change nothing
                break
        return out


class Dilate(_Morph):
    dilate = True


class Erode(_Morph):
    dilate = False


register(OpSchema(
    name="experimental.median_blur", impl=MedianBlur,
    doc="Replaces each pixel with the median of the window around it (edges replicated).",
    args=(Arg("window_size", "ints", (3, 3), "window (width, height), odd", tensor=True, check=positive),),
))
for _name, _impl, _what in (("experimental.dilate", Dilate, "maximum"), ("experimental.erode", Erode, "minimum")):
    register(OpSchema(
        name=_name, impl=_impl,
        doc=f"The {_what} over a rectangle (mask_size) placed at `anchor`, `iterations` times.",
        args=(Arg("mask_size", "ints", (3, 3), "the rectangle (width, height)", tensor=True),
              Arg("anchor", "ints", (-1, -1), "the rectangle's point over the output pixel (x, y); -1: center",
                  tensor=True),
              Arg("iterations", "int", 1, "how many times to apply it"),
              Arg("border_mode", "str", "constant", "constant (the border never wins), replicate, reflect, "
                  "reflect_101 or wrap", check=one_of(*K.MORPH_BORDERS))),
    ))
