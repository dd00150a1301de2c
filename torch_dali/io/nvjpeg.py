"""Batched JPEG decoding on the GPU (the spec's `decoders.image(device="mixed")` path): our nvJPEG
extension (hardware JPEG engines + CUDA backend) when it loads, else torchvision's batched nvJPEG.
CPU decoding, header parsing and the pixel helpers shared with it live in `decode`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch

from .. import types
from .._native import extension
from .. import _knobs
from ..functional.image import GRAY, RGB, apply_orientation, to_hwc
from ..packed import PackedSamples
from . import cpu_share
from .decode import TV_GRAY, TV_RGB, ImageInfo, peek_image_info, tv_image_ops


def gpu_decodable(info: ImageInfo) -> bool:
    """Whether the batched GPU JPEG path takes this image (baseline JPEG, gray or YCbCr/RGB)."""
    return info.format == "jpeg" and not info.progressive and not info.multi_scan \
        and info.channels in (1, 3) and info.bit_depth == 8


_NVJPEG: dict[tuple[Any, ...], Any] = {}
_NVJPEG_LOCK = threading.Lock()
_MISSING = object()


@dataclass(frozen=True)
class DecoderConfig:
    """The nvJPEG decoder's settings, from the TORCH_DALI_NVJPEG_* knobs (torch_dali._knobs, which
    says what each does and what was measured). The states are per slot; a slot is one batch in
    flight, by default one per mixed-stage lane, so one batch's headers and CUDA-backend share run
    while another holds the hardware engines. With hw_load 0.9 and 8 CUDA-backend states the decoder
    reached ~30k img/s on an H200 for 256 ~500x375 JPEGs (bench/results/gpu_kernels.json); two
    hardware states decoding concurrently measured +15% (bench/results/decoder_sweep_h200.json) but
    are not the default (see decode_hw in the extension)."""

    hw_states: int
    cuda_states: int
    huffman_threshold: int
    slots: int
    hw_concurrent: bool
    blocking_sync: bool
    adaptive: bool = False
    arena: int = 3
    device_padding: int = 2 << 20
    lazy_cuda: int = 3
    preallocate: int = 2
    stream_priority: int = 0
    share_hw_handle: bool = False
    pinned_input: bool = False
    hw_state_sync: bool = True
    host_waits: bool = True

    @classmethod
    def from_knobs(cls, feeds_training: bool = False) -> "DecoderConfig":
        return cls(_knobs.get("TORCH_DALI_NVJPEG_HW_STATES"), _knobs.get("TORCH_DALI_NVJPEG_CUDA_STATES"),
                   _knobs.get("TORCH_DALI_NVJPEG_HUFFMAN_THRESHOLD"),
                   _knobs.decoder_slots(),
                   _knobs.get("TORCH_DALI_NVJPEG_HW_CONCURRENT"), _knobs.get("TORCH_DALI_NVJPEG_BLOCKING_SYNC"),
                   _knobs.get("TORCH_DALI_NVJPEG_ADAPTIVE") == 1, _knobs.get("TORCH_DALI_NVJPEG_ARENA"),
                   _knobs.get("TORCH_DALI_NVJPEG_DEVICE_PADDING"), _knobs.get("TORCH_DALI_NVJPEG_LAZY_CUDA"),
                   _knobs.get("TORCH_DALI_NVJPEG_PREALLOCATE"), _knobs.decoder_stream_priority(feeds_training),
                   _knobs.get("TORCH_DALI_NVJPEG_SHARED_HW_HANDLE") == 1,
                   _knobs.get("TORCH_DALI_NVJPEG_PINNED_INPUT") == 1,
                   _knobs.get("TORCH_DALI_NVJPEG_HW_STATE_SYNC") == 1,
                   _knobs.get("TORCH_DALI_HOST_WAITS"))


def hw_share(hw_decoder_load: float, feeds_training: bool = False) -> float:
    """The share of JPEGs our decoder sends to the hardware engines for a decoder asked for
    `hw_decoder_load`. DALI's argument tunes DALI's decoder (its 0.65 default suits its own CUDA
    path); ours measured fastest at 0.9 on an H200 for any load strictly between 0 and 1, so
    TORCH_DALI_NVJPEG_HW_SHARE (default 0.9; negative: follow the argument) replaces those. 0 (no
    hardware) and 1 (all hardware, which lets the random-crop decoders decode every window) are
    kept, unless TORCH_DALI_NVJPEG_FULL_HW_SHARE moves some of load 1's images to the CUDA backend.
    A training feed (TORCH_DALI_TRAINING_FEED) sends them all to the engines unless
    TORCH_DALI_NVJPEG_HW_SHARE is set. Fixed per pipeline, so a rerun sends the same images the
    same way (same pixels)."""
    load = float(hw_decoder_load)
    if load >= 1.0:
        return min(1.0, float(_knobs.get("TORCH_DALI_NVJPEG_FULL_HW_SHARE")))
    if load <= 0.0:
        return load
    if _knobs.training_feed(feeds_training) and not _knobs.is_set("TORCH_DALI_NVJPEG_HW_SHARE"):
        return hw_share(1.0)
    share = _knobs.get("TORCH_DALI_NVJPEG_HW_SHARE")
    return load if share < 0 else float(share)


def _nvjpeg_decoder(device: torch.device, hw_load: float = 0.9, feeds_training: bool = False) -> Any:
    """Our nvJPEG extension's decoder for `device` (hardware engines + CUDA backend), or None.
    `feeds_training`: the pipeline feeds a training loop (`_knobs.training_feed`)."""
    ext = extension.load()
    if ext is None or not getattr(ext, "has_nvjpeg", False):
        return None
    index = device.index if device.index is not None else torch.cuda.current_device()
    hw_load = hw_share(hw_load, feeds_training)
    config = DecoderConfig.from_knobs(feeds_training)
    key = (index, round(float(hw_load), 3), config)
    dec = _NVJPEG.get(key, _MISSING)  # made already: no lock (lanes ask every batch; a contended
    if dec is not _MISSING:           # lock hands the GIL to another thread)
        return dec
    with _NVJPEG_LOCK:
        if key not in _NVJPEG:
            _NVJPEG[key] = _make_decoder(ext, index, float(hw_load), config)
        return _NVJPEG[key]


def _make_decoder(ext: Any, index: int, hw_load: float, config: DecoderConfig) -> Any:
    """The decoder, or with one slot when several cannot be made (each slot holds its own
    hardware handles), or None with one warning: torchvision's decoder then serves, rather than a
    failed construction on every batch."""
    import warnings
    c = config
    for n in dict.fromkeys((c.slots, 1)):
        try:
            return ext.NvJpegDecoder(index, c.hw_states, c.cuda_states, hw_load, c.huffman_threshold, n,
                                     c.hw_concurrent, c.blocking_sync, c.adaptive, c.arena, c.device_padding,
                                     c.lazy_cuda, c.preallocate, c.stream_priority, c.share_hw_handle,
                                     c.pinned_input, c.hw_state_sync, c.host_waits)
        except RuntimeError as e:
            err = e
    warnings.warn(f"torch_dali: our nvJPEG decoder could not be made on cuda:{index} ({err}); "
                  "decoding with torchvision's", RuntimeWarning, stacklevel=3)
    return None


def activity_lines() -> list[str]:
    """Where each of our nvJPEG decoders' threads are now, one line per decoder that has a thread
    somewhere (for a stalled pipeline's report: inside nvJPEG's hardware decode and waiting for a
    lock read differently). Safe while a decode is stuck: the extension answers without locks. A
    decoder's construction holds the registry lock, so a stuck construction is reported, not waited
    for (the timeout error built from this must still come)."""
    lines = []
    if _NVJPEG_LOCK.acquire(timeout=1.0):
        try:
            items = list(_NVJPEG.items())
        finally:
            _NVJPEG_LOCK.release()
    else:  # a copy under the GIL; the decoder being made is not in it yet
        items = list(_NVJPEG.items())
        lines.append("an nvJPEG decoder is being made (its construction has held the decoders' lock for 1 s "
                     "or more)")
    decoders = [(k[0], d) for k, d in items if d is not None and hasattr(d, "activity")]
    for index, dec in decoders:
        places = dec.activity()
        if places:
            lines.append(f"nvJPEG decoder on cuda:{index}: " + "; ".join(
                f"{n} thread{'s' if n > 1 else ''} {place} (latest for {s:.1f} s)"
                for place, (n, s) in sorted(places.items(), key=lambda kv: -kv[1][1])))
    return lines


def prepare_decoder(device: torch.device, hw_load: float = 0.9, feeds_training: bool = False) -> Any:
    """Makes the decoder `decode_jpeg_batch_cuda` will use (a build-time warm-up); returns it (None
    when our extension's decoder is not available)."""
    return _nvjpeg_decoder(torch.device(device), hw_load, feeds_training)


def decode_jpeg_batch_cuda(datas: list[torch.Tensor] | PackedSamples, device: torch.device,
                           output_type: types.DALIImageType = RGB,
                           orientations: list[int] | None = None,
                           hw_load: float = 0.9, rois: torch.Tensor | None = None,
                           first_batch: bool = False, feeds_training: bool = False) -> list[torch.Tensor | None]:
    """Decodes JPEGs on the GPU in one batch; HWC uint8 tensors on `device`, None where the GPU
    decoder declined an image (the caller decodes those on the CPU). Uses our nvJPEG extension
    when it loads (hardware decode engines), else torchvision's batched nvJPEG decode.

    `rois`: None or (n, 4) int64 windows (y, x, h, w) of upright images (orientation 1; h <= 0:
    the whole image): those samples come back as just their window. Check `decodes_windows()`
    first: only our extension decodes windows. `first_batch`: the pipeline's iteration 0, which
    does not wait for the decoder's CUDA backend (TORCH_DALI_NVJPEG_LAZY_CUDA). `datas` may be
    packed samples (parts of one buffer), which our extension's decoder reads in place."""
    dec = _nvjpeg_decoder(torch.device(device), hw_load, feeds_training)
    if isinstance(datas, PackedSamples) and (orientations is None or dec is None
                                             or not hasattr(dec, "decode_packed")):
        datas = datas.views()  # an extension built before decode_packed, or torchvision's decoder
    if orientations is None:
        orientations = [peek_image_info(d).orientation for d in datas]
    if rois is not None and dec is None:
        raise RuntimeError("decode_jpeg_batch_cuda: windows need the extension's decoder")
    if dec is not None:
        with torch.cuda.device(device):
            fmt = "gray" if output_type == GRAY else "rgb"
            share = float(_knobs.get("TORCH_DALI_NVJPEG_CPU_SHARE"))
            rows = cpu_share.picks(rois, share) if output_type in (RGB, GRAY) else None
            if rows is not None and rows.size:
                hwcs = _decode_with_cpu_share(dec, datas, rows, rois, fmt, first_batch, device)
            else:
                hwcs = _decode(dec, datas, fmt, rois, first_batch)
        plain = output_type in (RGB, GRAY)  # the decoder's own output: upright images need nothing
        return [h if h is None or (o == 1 and plain) else
                to_hwc(apply_orientation(h.permute(2, 0, 1), o), output_type, None)
                for h, o in zip(hwcs, orientations)]
    tv = tv_image_ops()
    if tv is None or not hasattr(tv, "decode_jpegs_cuda"):
        raise RuntimeError("torchvision has no GPU JPEG decoder")
    mode = TV_GRAY if output_type == GRAY else TV_RGB
    chws = tv.decode_jpegs_cuda([d.cpu().contiguous() for d in datas], mode, torch.device(device))
    return [to_hwc(apply_orientation(c, o), output_type, None) for c, o in zip(chws, orientations)]


def _decode(dec: Any, datas: list[torch.Tensor] | PackedSamples, fmt: str, rois: torch.Tensor | None,
            first_batch: bool) -> list[torch.Tensor | None]:
    if isinstance(datas, PackedSamples):
        return dec.decode_packed(datas.buffer, torch.from_numpy(datas.offsets), torch.from_numpy(datas.sizes),
                                 fmt, rois, first_batch)
    return dec.decode(datas, fmt, rois, first_batch)


def _decode_with_cpu_share(dec: Any, datas: list[torch.Tensor] | PackedSamples, rows: Any,
                           rois: torch.Tensor, fmt: str, first_batch: bool,
                           device: torch.device) -> list[torch.Tensor | None]:
    """`rows`' windows decoded on the host's cores while the GPU decoder takes the rest
    (io/cpu_share); a window the CPU could not decode goes to the GPU decoder after."""
    import numpy as np
    n = len(datas)
    pending = cpu_share.Pending(datas, rows, rois, fmt == "gray")
    rest = np.setdiff1d(np.arange(n), rows)

    def subset(idx: Any) -> list[torch.Tensor] | PackedSamples:
        return datas.take(idx) if isinstance(datas, PackedSamples) else [datas[int(i)] for i in idx]

    out: list[torch.Tensor | None] = [None] * n
    if rest.size:
        for i, h in zip(rest.tolist(), _decode(dec, subset(rest), fmt, rois[torch.from_numpy(rest)], first_batch)):
            out[i] = h
    decoded, failed = pending.finish(device)
    for i, h in zip(rows.tolist(), decoded):
        out[i] = h
    if failed.size:
        for i, h in zip(failed.tolist(), _decode(dec, subset(failed), fmt, rois[torch.from_numpy(failed)], False)):
            out[i] = h
    return out


def decodes_windows(device: torch.device, hw_load: float = 0.9, feeds_training: bool = False) -> bool:
    """Whether `decode_jpeg_batch_cuda(..., rois=)` decodes windows here (our extension's decoder
    loads; torchvision's decodes whole images only)."""
    return _nvjpeg_decoder(torch.device(device), hw_load, feeds_training) is not None


def crop_views(images: list[torch.Tensor | None], windows: Any) -> list[torch.Tensor | None]:
    """images[i][y:y+h, x:x+w] for (n, 4) windows (y, x, h, w), as views; one extension call for
    the batch when it is loaded (slicing in Python costs two dispatcher calls per sample)."""
    ext = extension.load()
    w = torch.as_tensor(windows, dtype=torch.int64)
    if ext is not None and hasattr(ext, "crop_views"):
        return ext.crop_views(images, w)
    rows = w.tolist()
    return [None if im is None else im[r[0]:r[0] + r[2], r[1]:r[1] + r[3]] for im, r in zip(images, rows)]


def sample_sizes(samples: list[torch.Tensor]) -> Any:
    """(n, 2) int64 NumPy array of each sample's first two sizes (one extension call when loaded)."""
    import numpy as np
    ext = extension.load()
    if ext is not None and hasattr(ext, "sample_sizes"):
        return ext.sample_sizes(samples).numpy()
    return np.array([t.shape[:2] for t in samples], dtype=np.int64).reshape(-1, 2)
