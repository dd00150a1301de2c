"""`decoders.image` and `decoders.image_random_crop` (DALI's ImageDecoder / nvJPEGDecoder /
ImageDecoderRandomCrop): encoded bytes -> HWC images, on the CPU or, with device='mixed', the GPU.

The mixed op decodes baseline JPEGs in one batched GPU call and everything else (PNG, progressive
or CMYK JPEG, ...) on the CPU threads, then uploads; sample order is kept. Without CUDA it is the
CPU op.

Bad data. A header declaring more than `max_pixels` pixels is refused before decoding. With
`on_error="skip"` a sample that does not decode is left out and the batch refilled. Refilling is
the reader's job (it alone knows positions, epochs and labels; dropping a sample here would leave
its label in the reader's other output), so at build (`connect`) the decoder registers a check
with the reader feeding it: the reader decodes each sample it reads with the decoder's own
decode, on its threads, and leaves out those that fail; the decoded image is kept for this
decoder, which finishes it (crop, color, dtype) without decoding twice. Costs: the random-crop
decoder then decodes whole images (no region decode), and device='mixed' decodes on the CPU. The
data must come straight from a reader's first output (else a GraphError at build).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError, DataError, GraphError
from ...io import decode as D
from ... import _knobs
from ...io import host_io, nvjpeg
from ...functional.crop_window import random_crop_window
from ...packed import PackedSamples
from ...tensor_list import TensorList
from .._operator import BatchContext, Operator, SampleContext
from .._registry import register
from .._schema import Arg, OpSchema, non_negative, positive
from ..fast.windows import random_crop_window_array
from ..readers._base import ON_ERROR_ARG


def _dtype_ok(v: Any) -> str | None:
    return None if v in D.DECODE_DTYPES else "one of " + ", ".join(repr(d) for d in D.DECODE_DTYPES)


def _image_type_ok(v: Any) -> str | None:
    return None if isinstance(v, types.DALIImageType) else "an image type such as types.RGB"


# Arguments DALI 2.4 takes that tune nvJPEG / nvImageCodec memory and scheduling. Accepted so
# DALI pipelines run unchanged; torch's caching allocator and torchvision's decoder ignore them.
DECODER_TUNING_ARGS = (
    Arg("affine", "bool", True, "DALI thread affinity; accepted, ignored"),
    Arg("device_memory_padding", "int", 16 * 1024 * 1024, "nvJPEG device padding; accepted, ignored"),
    Arg("device_memory_padding_jpeg2k", "int", 0, "accepted, ignored"),
    Arg("host_memory_padding", "int", 8 * 1024 * 1024, "nvJPEG pinned padding; accepted, ignored"),
    Arg("host_memory_padding_jpeg2k", "int", 0, "accepted, ignored"),
    Arg("hw_decoder_load", "float", 0.9, "share of JPEGs sent to the hardware JPEG engines (A100, "
        "H100, H200); the rest go to the CUDA backend. 0 and 1 are kept; any value between is "
        "replaced by TORCH_DALI_NVJPEG_HW_SHARE (0.9, what measured fastest with our decoder on an H200; "
        "DALI's 0.65 tunes DALI's decoder)", check=lambda v: None if 0 <= v <= 1 else "in [0, 1]"),
    Arg("hybrid_huffman_threshold", "int", 1000000, "accepted, ignored"),
    Arg("jpeg_fancy_upsampling", "bool", False, "GPU chroma upsampling like libjpeg's; the CPU "
        "decoder always upsamples as libjpeg does (as DALI's CPU decoder)"),
    Arg("memory_stats", "bool", False, "deprecated in DALI; accepted, ignored"),
    Arg("preallocate_height_hint", "int", 0, "accepted, ignored"),
    Arg("preallocate_width_hint", "int", 0, "accepted, ignored"),
    Arg("split_stages", "bool", False, "deprecated in DALI; accepted, ignored"),
    Arg("use_chunk_allocator", "bool", False, "deprecated in DALI; accepted, ignored"),
    Arg("use_fast_idct", "bool", False, "CPU JPEG decoding with libjpeg's fast integer IDCT (JDCT_IFAST)"),
)
_CACHE = (
    Arg("cache_batch_copy", "bool", True, "accepted, ignored (no decoded-image cache)"),
    Arg("cache_debug", "bool", False, "accepted, ignored"),
    Arg("cache_size", "int", 0, "accepted, ignored"),
    Arg("cache_threshold", "int", 0, "accepted, ignored"),
    Arg("cache_type", "str", "", "accepted, ignored"),
)
DECODER_ARGS = (
    Arg("output_type", "image_type", types.RGB, "color space: types.RGB, BGR, GRAY, YCbCr (BT.601) "
        "or ANY_DATA (channels as stored)", check=_image_type_ok),
    Arg("dtype", "dtype", types.UINT8, "element type; values are scaled to its range (FLOAT: 0..1)",
        check=_dtype_ok),
    Arg("adjust_orientation", "bool", True, "apply the EXIF orientation"),
    Arg("max_pixels", "int", D.MAX_PIXELS, "refuse images whose header declares more pixels "
        "(height x width) than this, before allocating them", check=positive),
    ON_ERROR_ARG,
)


# Kept images are taken when used; this bounds what batches dropped by a stop leave behind. Up to
# 2 * lanes + 1 batches sit between the reader and the mixed stage (TORCH_DALI_MIXED_LANES, at most 8).
_KEEP_GENERATIONS = 20
_MCU = 16  # the largest JPEG block (MCU) edge of the GPU decoder's inputs (4:2:0)


def _range(v: float | list[float]) -> list[float]:
    v = [float(v)] if isinstance(v, (int, float)) else list(v)
    return [v[0], v[0]] if len(v) == 1 else v


class ImageDecoder(Operator):
    """Decodes each sample; on CUDA (device='mixed') decodes baseline JPEGs as one GPU batch."""

    crops = False  # the random-crop decoder cuts a window out of each decoded image

    def setup(self) -> None:
        self.output_type: types.DALIImageType = self.args["output_type"]
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        self.adjust = bool(self.args["adjust_orientation"])
        self.max_pixels = int(self.args.get("max_pixels", D.MAX_PIXELS))
        self.fast_idct = bool(self.args.get("use_fast_idct", False))
        self.skip = self.args.get("on_error", "raise") == "skip"
        # id(data) -> (data, chw, batch generation), until used: with staged execution the reader
        # checks later batches while this op still finishes earlier ones (reader and decoder threads
        # share it, hence the lock)
        self._decoded: dict[int, tuple[torch.Tensor, torch.Tensor, int]] = {}
        self._generation = 0
        self._kept_lock = threading.Lock()
        # per-sample CPU path unless the op really runs on a GPU (mixed without CUDA = CPU op)
        self.sample_wise = self.device.type == "cpu"
        self._views_ok = False  # set at build (connect)
        self._region_reader: Operator | None = None  # set at build (connect)
        self.feeds_training = False  # set at build (connect): the pipeline feeds a training loop

    # -- on_error="skip": the reader checks each sample with our decode --------------------------
    def connect(self, plan: Any) -> None:
        """At build: crops may stay views of the decoded images when every reader of ours takes
        strided samples; with on_error="skip", registers `_check` with the reader feeding us."""
        self.feeds_training = plan.feeds_training
        self._views_ok = not plan.is_output(self.node) and all(
            plan.op(c).strided_input_ok for c in plan.consumers(self.node))
        # The one op reading our images reads only a part of each that it can name before it runs
        # (random_resized_crop's window and its filter's reach): decode only those parts.
        readers = plan.consumers(self.node)
        self._region_reader = None
        if (self.device.type == "cuda" and not self.crops and not self.skip and self.dtype == torch.uint8
                and not plan.is_output(self.node)
                and len(readers) == 1 and not readers[0].arg_inputs and len(readers[0].inputs) == 1
                and plan.op(readers[0]).takes_regions()):
            self._region_reader = plan.op(readers[0])
        if not self.skip:
            return
        src = self.node.inputs[0]
        reader = plan.op(src.node)
        if src.index != 0 or not reader.takes_checks:
            raise GraphError(
                f"{self.name}: on_error='skip' needs its encoded data straight from a reader's "
                f"first output (readers.file, readers.mxnet, ...), so the reader can refill the "
                f"batch; it gets output {src.index} of {src.node.describe()}")
        reader.add_check(self.name, self._check, self._new_batch)

    def _new_batch(self) -> None:
        """Before the reader checks a batch: drops what batches that never reached us left."""
        with self._kept_lock:
            self._generation += 1
            oldest = self._generation - _KEEP_GENERATIONS
            for k in [k for k, v in self._decoded.items() if v[2] <= oldest]:
                del self._decoded[k]

    def _check(self, data: torch.Tensor, source: str) -> None:
        """Decodes (raising DataError if it cannot) and keeps the image for `decode_one`."""
        chw = D.decode_chw(data, self.output_type, self.adjust, source, self.name, self.max_pixels,
                           fast_idct=self.fast_idct)
        with self._kept_lock:  # holding `data` keeps its id unique
            self._decoded[id(data)] = (data, chw, self._generation)

    def _kept(self, data: torch.Tensor, take: bool = False) -> torch.Tensor | None:
        with self._kept_lock:
            entry = self._decoded.get(id(data))
            if entry is None or entry[0] is not data:
                return None
            if take:
                del self._decoded[id(data)]
            return entry[1]

    # -- CPU --------------------------------------------------------------------------------------
    def decode_one(self, ctx: SampleContext, data: torch.Tensor) -> torch.Tensor:
        chw = self._kept(data, take=True)
        if chw is not None:
            return D.from_chw(chw, self.output_type, self.dtype)
        return D.decode_image(data, self.output_type, self.dtype, self.adjust, ctx.source, self.name,
                              self.max_pixels, fast_idct=self.fast_idct)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        return self.decode_one(ctx, inputs[0])

    # -- mixed on CUDA ----------------------------------------------------------------------------
    @property
    def hardware_only(self) -> bool | None:
        """On CUDA: whether all of its JPEGs go to the hardware engines, whose batches decode one
        at a time (the executor then lets fewer decoded batches wait: `_knobs.decode_permits`)."""
        if self.device.type != "cuda" or self.output_type == types.ANY_DATA:
            return None
        return nvjpeg.hw_share(float(self.args["hw_decoder_load"]), self.feeds_training) >= 1.0

    def prepare(self) -> None:
        """Loads the extension and makes the nvJPEG decoder before the first batch needs them."""
        if self.device.type == "cuda" and self.output_type != types.ANY_DATA:
            with torch.cuda.device(self.device):
                nvjpeg.prepare_decoder(self.device, float(self.args["hw_decoder_load"]), self.feeds_training)

    def gpu_windows(self, ctx: BatchContext, sizes: np.ndarray, rows: list[int]) -> np.ndarray | None:
        """Crop windows (n, 4) = (y, x, h, w) for images of sizes (n, 2), or None (no crop). Only
        the `rows` are decoded on the GPU; the others' sizes are placeholders and their windows
        unused (the CPU decoder draws them)."""
        return None

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if self.device.type != "cuda":
            return super().run_batch(ctx, inputs, args)
        packed = inputs[0].packed  # the reader's samples as parts of one buffer: no tensor each
        datas: Any = packed if packed is not None else list(inputs[0])  # packed[i]: a view, made when asked
        n = len(datas)
        gpu_idx, orientations, hw = self._gpu_candidates(datas, ctx)
        out: list[torch.Tensor | None] = [None] * n
        regions = None  # (n, 4) (y, x, H, W) of the parts decoded for `_region_reader`
        if gpu_idx:
            hw_load = float(self.args["hw_decoder_load"])
            wins = rois = None
            parts = self._region_reader is not None
            if (self.crops or parts) and _knobs.get("TORCH_DALI_ROI_DECODE") == 1 \
                    and nvjpeg.decodes_windows(self.device, hw_load, self.feeds_training):
                # Windows from the headers' sizes, before decoding: upright images are decoded to
                # just their window (no full-size buffer); the others are cropped after decoding
                sizes = np.ones((n, 2), dtype=np.int64)
                turned = np.isin(np.asarray(orientations, dtype=np.int64), (5, 6, 7, 8))
                sizes[gpu_idx] = np.where(turned[:, None], hw[:, ::-1], hw)  # the upright image's size
                wins = (self._region_reader.input_regions(ctx.iteration, sizes) if parts
                        else self.gpu_windows(ctx, sizes, gpu_idx))
                if parts:
                    # parts grow by half a block and then out to the 16-pixel grid of JPEG's largest
                    # blocks (MCUs): the hardware's window decode interpolates chroma differently
                    # near a window's edges, which the pixels read must stay clear of
                    start = np.maximum(wins[:, :2] - _MCU // 2, 0) // _MCU * _MCU
                    end = np.minimum(-(-(wins[:, :2] + wins[:, 2:] + _MCU // 2) // _MCU) * _MCU, sizes)
                    wins = np.concatenate([start, end - start], axis=1)
                    regions = np.concatenate([start, sizes], axis=1)
                if wins is not None:
                    sel = wins[gpu_idx].copy()
                    sel[np.asarray(orientations, dtype=np.int64) != 1, 2] = -1
                    rois = torch.from_numpy(np.ascontiguousarray(sel, dtype=np.int64))
            try:
                decoded = nvjpeg.decode_jpeg_batch_cuda(
                    packed.take(gpu_idx) if packed is not None else [datas[i] for i in gpu_idx],
                    self.device, self.output_type, orientations,
                    hw_load=hw_load, rois=rois, first_batch=ctx.iteration == 0,
                    feeds_training=self.feeds_training)
            except RuntimeError:  # the GPU decoder rejected something: decode those on the CPU
                decoded = None
            if decoded is not None:
                # declined by the GPU decoder (None): the CPU path below takes it
                done = [(i, img) for i, img in zip(gpu_idx, decoded) if img is not None]
                if rois is not None:  # only the rotated ones are still whole
                    whole = {i for i, r in zip(gpu_idx, rois[:, 2].tolist()) if r <= 0}
                    if whole:
                        done = [(i, img[wins[i, 0]:wins[i, 0] + wins[i, 2], wins[i, 1]:wins[i, 1] + wins[i, 3]]
                                 if i in whole else img) for i, img in done]
                    if not self._views_ok:  # windows the CUDA backend cut from whole images are views
                        done = [(i, img.contiguous()) for i, img in done]
                elif self.crops and done:
                    sizes = np.ones((n, 2), dtype=np.int64)
                    sizes[[i for i, _ in done]] = nvjpeg.sample_sizes([img for _, img in done])
                    wins = self.gpu_windows(ctx, sizes, [i for i, _ in done])
                    if wins is not None:  # crops as views, made in one call
                        full: list[torch.Tensor | None] = [None] * n
                        for i, img in done:
                            full[i] = img
                        crops = nvjpeg.crop_views(full, wins)
                        done = [(i, crops[i] if self._views_ok else crops[i].contiguous()) for i, _ in done]
                same = self.dtype == torch.uint8
                for i, img in done:
                    out[i] = img if same else D.convert_range(img, self.dtype)
        cpu_idx = [i for i in range(n) if out[i] is None]

        def cpu(k: int) -> torch.Tensor:
            i = cpu_idx[k]
            return self.decode_one(ctx.sample(i), datas[i])

        for i, img in zip(cpu_idx, ctx.map(cpu, len(cpu_idx))):
            out[i] = img.pin_memory().to(self.device, non_blocking=True)
        tl = TensorList(out, "HWC")  # type: ignore[arg-type]
        if regions is not None:
            for i in cpu_idx:  # decoded whole on the CPU
                regions[i] = (0, 0, int(out[i].shape[0]), int(out[i].shape[1]))  # type: ignore[union-attr]
            tl.regions = regions
        return [tl]

    def _gpu_candidates(self, datas: list[torch.Tensor] | PackedSamples,
                        ctx: BatchContext) -> tuple[list[int], list[int], np.ndarray]:
        """(samples the batched GPU decoder takes: baseline 8-bit gray/colour JPEGs within
        max_pixels; their EXIF orientations; their stored (height, width), (m, 2)). Unreadable headers go to the CPU decoder, which
        reports them naming the file. Headers come from one C call as a table (no Python object
        per sample: this ran under the GIL for every batch)."""
        if self.output_type == types.ANY_DATA or (self.output_type == types.YCbCr and self.dtype != torch.uint8):
            # channels as stored, or YCbCr computed in a wider type (functional.image.to_output): the CPU decoder
            return [], [], np.zeros((0, 2), dtype=np.int64)
        table = host_io.image_info_table(datas) if host_io.available() else None
        if table is None:
            infos = D.peek_image_infos(list(datas), ctx.sources)
            idx = [i for i, info in enumerate(infos) if info is not None and nvjpeg.gpu_decodable(info)
                   and info.height * info.width <= self.max_pixels]
            orients = [infos[i].orientation for i in idx]  # type: ignore[union-attr]
            hw = np.array([(infos[i].height, infos[i].width) for i in idx], dtype=np.int64)  # type: ignore[union-attr]
        else:
            # NumPy, not torch: each torch op releases the GIL, and under contention getting it back
            # can take up to Python's switch interval (5 ms); NumPy keeps it for arrays this small
            failed, fmt, h, w, c, orient, prog, depth = table.T.astype(np.int64)
            ok = (failed == 0) & (fmt == 1) & (prog == 0) & ((c == 1) | (c == 3)) & (depth == 8) \
                & (h * w <= self.max_pixels)
            for i in failed.nonzero()[0].tolist():  # headers the C parser left to Python
                try:
                    info = D.peek_image_info(datas[i], ctx.sources[i] if i < len(ctx.sources) else "")
                except DataError:  # the CPU decoder reports it, naming the file
                    continue
                if nvjpeg.gpu_decodable(info) and info.height * info.width <= self.max_pixels:
                    ok[i] = True
                    orient[i] = info.orientation
                    h[i], w[i] = info.height, info.width
            sel = ok.nonzero()[0]
            idx = sel.tolist()
            orients = orient[sel].tolist()
            hw = np.stack([h[sel], w[sel]], 1)
        hw = hw.reshape(-1, 2)
        if self._decoded:  # images the reader's check already decoded (on_error="skip")
            keep = [k for k, i in enumerate(idx) if self._kept(datas[i]) is None]
            idx, orients, hw = [idx[k] for k in keep], [orients[k] for k in keep], hw[keep]
        if not self.adjust:
            orients = [1] * len(idx)
        return idx, orients, hw

    def output_layout(self, index: int) -> str:
        return "HWC"


class ImageDecoderRandomCrop(ImageDecoder):
    """Decodes and crops to a random window (area fraction and aspect ratio drawn per sample), the
    same window `random_resized_crop` draws for the same rng."""

    crops = True

    def setup(self) -> None:
        super().setup()
        self.area = _range(self.args["random_area"])
        self.aspect = _range(self.args["random_aspect_ratio"])
        self.attempts = int(self.args["num_attempts"])
        for name, (lo, hi), low in (("random_area", self.area, 0.0), ("random_aspect_ratio", self.aspect, None)):
            if len(_range(self.args[name])) != 2:
                raise ArgumentError(f"{self.name}: `{name}` must be one value or a [min, max] pair, "
                                    f"got {self.args[name]}")
            if lo > hi:
                raise ArgumentError(f"{self.name}: `{name}` must be [min, max] with min <= max, got {[lo, hi]}")
            if (low is not None and lo < low) or (low is None and lo <= 0):
                raise ArgumentError(f"{self.name}: `{name}` values must be "
                                    f"{'>= 0' if low is not None else '> 0'}, got {[lo, hi]}")

    def window_fn(self, ctx: SampleContext) -> Callable[[int, int], tuple[int, int, int, int]]:
        return lambda h, w: random_crop_window(ctx.rng, h, w, self.area, self.aspect, self.attempts)

    def decode_one(self, ctx: SampleContext, data: torch.Tensor) -> torch.Tensor:
        chw = self._kept(data, take=True)
        if chw is not None:  # the same window and pixels as decode_image_crop's
            window = self.window_fn(ctx)(int(chw.shape[1]), int(chw.shape[2]))
            return D.from_chw(chw, self.output_type, self.dtype, window)
        return D.decode_image_crop(data, self.window_fn(ctx), self.output_type, self.dtype, self.adjust,
                                   ctx.source, self.name, self.max_pixels, fast_idct=self.fast_idct)

    def gpu_windows(self, ctx: BatchContext, sizes: np.ndarray, rows: list[int]) -> np.ndarray | None:
        """The windows `window_fn` draws for each sample, in one call (the same rng keys)."""
        return random_crop_window_array(self.node.seed, ctx.iteration, sizes, self.area, self.aspect,
                                        self.attempts)


register(OpSchema(
    name="decoders.image", impl=ImageDecoder, devices=("cpu", "mixed"), input_devices="cpu",
    legacy_names=("ImageDecoder", "nvJPEGDecoder", "HostDecoder"), output_layout="HWC",
    doc="Decodes JPEG, PNG, BMP, TIFF, ... to HWC images (uint8 by default); device='mixed' decodes "
        "on the GPU.",
    args=DECODER_ARGS + DECODER_TUNING_ARGS + _CACHE,
))
register(OpSchema(
    name="decoders.image_random_crop", impl=ImageDecoderRandomCrop, devices=("cpu", "mixed"),
    input_devices="cpu", legacy_names=("ImageDecoderRandomCrop",), output_layout="HWC", random=True,
    doc="Decodes and crops a random window (RandomResizedCrop's window: area fraction and aspect "
        "ratio) out of each image.",
    args=DECODER_ARGS + (
        Arg("random_area", "floats", (0.08, 1.0), "range of the crop's area fraction (one value: fixed)",
            check=non_negative),
        Arg("random_aspect_ratio", "floats", (3.0 / 4.0, 4.0 / 3.0), "range of the crop's width/height",
            check=non_negative),
        Arg("num_attempts", "int", 10, "draws before falling back to a centred crop", check=non_negative),
    ) + DECODER_TUNING_ARGS,
))
