"""water, sphere, jitter and grid_mask on HWC images (CPU or CUDA; kernels in
`functional.distort`). A dense batch is warped with one gather per tap for all its samples (on
CUDA water and jitter take images of different sizes so too, flat: `functional.ragged`); the
per-sample `mask` (0: leave the sample as it is) is applied to the batch afterwards."""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..io import decode as D
from ..functional import distort as K
from ..functional import jpeg_distortion as JD
from ..functional import ragged as R
from ..functional.ragged import Flat
from . import _dispatch
from ._registry import register
from ._schema import Arg, OpSchema, positive
from .layout_op import Args, LayoutOp, per_sample, scalar
from .noise import sample_keys

WARP_TYPES = (torch.uint8, torch.float32)

# CPU source points of water and sphere, which depend on the image size and the op's constant
# arguments alone: an op run on same-size images (after a resize) works them out once. Bounded by
# bytes, least recently used out first; read only (the samplers never write them).
_POINTS: OrderedDict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor]] = OrderedDict()
_POINTS_LOCK = threading.Lock()
_POINTS_BYTES = 64 * 2**20
_points_held = 0


def _interp(v: Any) -> str:
    return str(types.enum_key(v))


class _Displacement(LayoutOp):
    """Shared: interpolation, types, the mask; subclasses give the source points."""

    layouts: tuple[str, ...] = ("HWC",)
    types: tuple[torch.dtype, ...] = WARP_TYPES

    def setup(self) -> None:
        interp = _interp(self.args.get("interp_type", types.INTERP_NN))
        if interp not in ("nn", "linear"):
            raise ArgumentError(f"{self.name}: Unsupported interpolation type, only NN and LINEAR are supported "
                                f"for this operation, got {interp}")
        self.linear = interp == "linear"

    def points(self, x: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def points_key(self) -> tuple[Any, ...] | None:
        """What the points depend on besides the image size, or None when they are drawn (jitter)."""
        return None

    def cached_points(self, x: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        global _points_held
        own = self.points_key()
        if own is None or x.device.type != "cpu":
            return self.points(x, keys)
        key = (type(self).__name__, own, int(x.shape[1]), int(x.shape[2]))
        with _POINTS_LOCK:
            hit = _POINTS.get(key)
            if hit is not None:
                _POINTS.move_to_end(key)
                return hit
        pts = self.points(x, keys)
        size = sum(t.numel() * t.element_size() for t in pts)
        with _POINTS_LOCK:
            if key not in _POINTS and size <= _POINTS_BYTES:
                _POINTS[key] = pts
                _points_held += size
                while _points_held > _POINTS_BYTES:
                    _, old = _POINTS.popitem(last=False)
                    _points_held -= sum(t.numel() * t.element_size() for t in old)
        return pts

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.warp(x.unsqueeze(0), {k: [v] for k, v in args.items()}, sample_keys(seed, iteration, [index]))[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.warp(x, args, sample_keys(seed, iteration, list(range(int(x.shape[0])))))

    def warp(self, x: torch.Tensor, args: dict[str, list[Any]], keys: torch.Tensor) -> torch.Tensor:
        if x.dtype not in self.types:
            raise ArgumentTypeError(f"{self.name}: Unexpected input type {x.dtype}; it takes "
                                    + ", ".join(str(t).replace("torch.", "") for t in self.types))
        n = int(x.shape[0])
        masks = [int(scalar(self.name, "mask", m)) for m in per_sample(args.get("mask"), n, self.args.get("mask"))]
        if not any(masks):
            return x.clone()
        px, py = self.cached_points(x, keys)
        out = _dispatch.call(K.sample, x, px, py, self.linear, float(self.args.get("fill_value", 0.0)))
        if all(masks):
            return out
        keep = torch.tensor(masks, dtype=torch.bool, device=x.device).reshape(n, 1, 1, 1)
        return torch.where(keep, out, x)


    def points_flat(self, keys: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor, h: torch.Tensor,
                    w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """`points` of the pixels (y, x) of samples `ids` of a flat batch; None: not written."""
        return None

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        """HWC images of different sizes in one call (`functional.ragged`), the values of `warp`."""
        for x in samples:
            if x.dtype not in self.types:
                return None  # the per-sample path names the error
        if len({(x.dtype, int(x.shape[-1])) for x in samples}) != 1 or any(x.numel() == 0 for x in samples):
            return None
        n = len(samples)
        masks = [int(scalar(self.name, "mask", m)) for m in per_sample(args.get("mask"), n, self.args.get("mask"))]
        flat = Flat(samples, inner=1)
        hw = [(int(s[0]), int(s[1])) for s in flat.shapes]
        ids, y, x = R.positions(hw, flat.device)
        table = torch.tensor([[h, w, b] for (h, w), b in zip(hw, R.starts(flat.rows))], dtype=ids.dtype)
        table = table.t().contiguous().to(flat.device, non_blocking=True)
        h, w, base = (table[k].index_select(0, ids) for k in range(3))
        pts = self.points_flat(sample_keys(seed, iteration, list(range(n))), ids, y, x, h, w)
        if pts is None:
            return None
        if not any(masks):
            return flat.split(flat.items().clone())
        out = K.sample_flat(flat.items(), pts[0], pts[1], h, w, base, self.linear, float(self.args.get("fill_value", 0.0)))
        if not all(masks):
            keep = torch.tensor(masks, dtype=torch.bool).to(flat.device, non_blocking=True).index_select(0, ids)
            out = torch.where(keep[:, None], out, flat.items())
        return flat.split(out)


class Water(_Displacement):
    def points_key(self) -> tuple[Any, ...] | None:
        a = self.args
        return tuple(float(a[k]) for k in ("ampl_x", "ampl_y", "freq_x", "freq_y", "phase_x", "phase_y"))

    def points(self, x: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = self.args
        return K.water_points(int(x.shape[1]), int(x.shape[2]), a["ampl_x"], a["ampl_y"], a["freq_x"], a["freq_y"],
                              a["phase_x"], a["phase_y"], x.device)

    def points_flat(self, keys: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor, h: torch.Tensor,
                    w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        a = self.args
        return K.water_points_flat(y, x, a["ampl_x"], a["ampl_y"], a["freq_x"], a["freq_y"], a["phase_x"], a["phase_y"])


class Sphere(_Displacement):
    def points_key(self) -> tuple[Any, ...] | None:
        return ()

    def points(self, x: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return K.sphere_points(int(x.shape[1]), int(x.shape[2]), x.device)


class Jitter(_Displacement):
    def setup(self) -> None:
        super().setup()
        self.linear = False  # the points are whole pixels: every interpolation reads them as they are
        if int(self.args["nDegree"]) < 0:
            raise ArgumentError(f"{self.name}: `nDegree` must be >= 0, got {self.args['nDegree']}")

    def points(self, x: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return K.jitter_points(keys, int(x.shape[1]), int(x.shape[2]), int(self.args["nDegree"]), x.device)

    def points_flat(self, keys: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor, h: torch.Tensor,
                    w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        return K.jitter_points_flat(keys, ids, y, x, h, w, int(self.args["nDegree"]))


class GridMask(LayoutOp):
    layouts = ("HWC", "HW")

    def run_batch(self, ctx: Any, inputs: list[Any], args: dict[str, list[Any]]) -> list[Any]:
        outs = super().run_batch(ctx, inputs, args)
        if not inputs[0].layout():  # read as HWC, but DALI 2.4 gives it no layout (unlike the filters)
            outs[0].set_layout("")
        return outs

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.run_dense(x.unsqueeze(0), layout, {k: [v] for k, v in args.items()}, seed, iteration)[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        if x.dtype in (torch.float16, torch.bool):
            raise ArgumentTypeError(f"{self.name}: Unsupported input type: {x.dtype}")
        n = int(x.shape[0])
        v = {k: torch.tensor([scalar(self.name, k, a) for a in per_sample(args.get(k), n, self.args.get(k))],
                             dtype=torch.float64) for k in ("tile", "ratio", "angle", "shift_x", "shift_y")}
        if bool((v["tile"] <= 0).any()):
            raise ArgumentError(f"{self.name}: Tile argument must be positive, got {v['tile'].tolist()}")
        v["tile"] = v["tile"].floor()  # an integer in DALI
        img = x if layout == "HWC" else x.unsqueeze(-1)
        out = _dispatch.call(K.grid_mask, img, v["tile"], v["ratio"], v["angle"], v["shift_x"], v["shift_y"])
        return out if layout == "HWC" else out.squeeze(-1)


_MASK = Arg("mask", "int", 1, "0 leaves the sample as it is, 1 applies the augmentation", tensor=True)
_FILL = Arg("fill_value", "float", 0.0, "value of the points read from outside the image")
_INTERP = Arg("interp_type", "interp_type", types.INTERP_NN, "INTERP_NN or INTERP_LINEAR")

register(OpSchema(
    name="water", impl=Water,
    doc="Water ripples: the pixel (y, x) reads (x + ampl_x sin(freq_x y + phase_x), "
        "y + ampl_y cos(freq_y x + phase_y)).",
    args=(Arg("ampl_x", "float", 10.0, "wave amplitude along x"), Arg("ampl_y", "float", 10.0, "wave amplitude along y"),
          Arg("freq_x", "float", 2 * math.pi / 128, "wave frequency along x"),
          Arg("freq_y", "float", 2 * math.pi / 128, "wave frequency along y"),
          Arg("phase_x", "float", 0.0, "wave phase along x"), Arg("phase_y", "float", 0.0, "wave phase along y"),
          _FILL, _INTERP, _MASK),
))
register(OpSchema(
    name="sphere", impl=Sphere, doc="A spherical bulge centered in the image.", args=(_FILL, _INTERP, _MASK),
))
register(OpSchema(
    name="jitter", impl=Jitter, random=True,
    doc="Moves each pixel by a random whole number of pixels in [-nDegree // 2, nDegree - nDegree // 2] "
        "on each axis (clamped to the image); keyed per sample.",
    args=(Arg("nDegree", "int", 2, "the size of the moves"), _FILL, _INTERP, _MASK),
))
register(OpSchema(
    name="grid_mask", impl=GridMask,
    doc="Zeroes squares of a (rotated, shifted) grid: tiles of `tile` pixels whose first `ratio` of each "
        "side is black (https://arxiv.org/abs/2001.04086).",
    args=(Arg("tile", "int", 100, "tile size in pixels", tensor=True, check=positive),
          Arg("ratio", "float", 0.5, "black square side / tile side", tensor=True),
          Arg("angle", "float", 0.0, "rotation of the grid in radians", tensor=True),
          Arg("shift_x", "float", 0.0, "x shift, after rotation", tensor=True),
          Arg("shift_y", "float", 0.0, "y shift, after rotation", tensor=True)),
))


# -- jpeg_compression_distortion ------------------------------------------------------------------

class JpegCompressionDistortion(LayoutOp):
    """uint8 RGB images or sequences; frames of a sequence share their sample's quality. On the
    CPU, libjpeg-turbo encodes and decodes each image (DALI's CPU backend runs the same library:
    equal bits); on the GPU, `functional.jpeg_distortion` computes the same steps batched in torch
    (not bit for bit: another DCT and rounding, as DALI's nvJPEG-based GPU backend)."""

    layouts = ("HWC", "FHWC")

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.run_dense(x.unsqueeze(0), layout, {k: [v] for k, v in args.items()}, seed, iteration)[0]

    def _libjpeg(self, images: list[torch.Tensor], qualities: list[int]) -> list[torch.Tensor] | None:
        """Each HWC image through libjpeg at its quality (clamped to 1..100, as DALI), or None (the
        torch path) for GPU data, empty images or no codec."""
        if any(x.device.type != "cpu" or x.numel() == 0 for x in images):
            return None
        out = []
        for x, q in zip(images, qualities):
            y = D.jpeg_round_trip(x, min(max(int(q), 1), 100))
            if y is None:
                return None
            out.append(y)
        return out

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        if x.dtype != torch.uint8 or int(x.shape[-1]) != 3:
            raise ArgumentTypeError(f"{self.name}: expected uint8 RGB images (3 channels), got {x.dtype} with shape "
                                    f"{tuple(x.shape[1:])}")
        n = int(x.shape[0])
        q = torch.tensor([int(scalar(self.name, "quality", v)) for v in
                          per_sample(args.get("quality"), n, self.args.get("quality"))], dtype=torch.int64)
        frames = int(x.shape[1]) if layout == "FHWC" else 1
        exact = self._libjpeg(list(x.reshape(n * frames, *x.shape[-3:])), q.repeat_interleave(frames).tolist())
        if exact is not None:
            return torch.stack(exact).reshape(x.shape)
        if layout == "FHWC":
            frames = int(x.shape[1])
            flat = x.reshape(n * frames, *x.shape[2:])
            return JD.jpeg_distortion(flat, q.repeat_interleave(frames)).reshape(x.shape)
        return JD.jpeg_distortion(x, q)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        """HWC images of different sizes in padded groups (`functional.ragged`), each image's
        edges repeated to its own macroblocks as `run_dense` pads it."""
        if layout != "HWC" or any(x.dtype != torch.uint8 or int(x.shape[-1]) != 3 or x.numel() == 0 for x in samples):
            return None
        q = torch.tensor([int(scalar(self.name, "quality", v)) for v in
                          per_sample(args.get("quality"), len(samples), self.args.get("quality"))], dtype=torch.int64)
        exact = self._libjpeg(samples, q.tolist())
        if exact is not None:
            return exact
        flat = Flat(samples, inner=1)
        hw = [(int(s[0]), int(s[1])) for s in flat.shapes]
        first = R.starts(flat.rows)
        results, groups = [], []
        for group in R.size_groups(hw):
            box = (-(-max(hw[i][0] for i in group) // 16) * 16, -(-max(hw[i][1] for i in group) // 16) * 16)
            xp = R.pad_gather(flat.items(), [first[i] for i in group], [hw[i][1] for i in group],
                              [hw[i] for i in group], box, (0, 0, 0, 0), "clamp")
            results.append(JD.jpeg_distortion_padded(xp, q[group], [hw[i] for i in group]))
            groups.append(group)
        return flat.split(R.gather_groups(results, groups, hw))


register(OpSchema(
    name="jpeg_compression_distortion", impl=JpegCompressionDistortion,
    doc="JPEG compression artifacts at `quality` (1..100, clamped): 4:2:0 chroma, 8x8 DCT quantized with the "
        "quality-scaled IJG tables, decoded back to RGB.",
    args=(Arg("quality", "int", 50, "JPEG quality, 1 (worst) to 100 (best)", tensor=True),),
))
