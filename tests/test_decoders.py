"""decoders.image / decoders.image_random_crop and io.decode.

Expected values marked "DALI 2.4" were measured with NVIDIA DALI 2.4's CPU decoder on the same
kind of synthetic images (DALI is not importable here)."""
from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, DataError, GraphError, PipelineError
from torch_dali.rng import SampleRNG
from torch_dali.io import decode as D
from torch_dali.io import nvjpeg
from torch_dali.functional.crop_window import random_crop_window
from torch_dali.ops._operator import BatchContext, Operator, SampleContext
from torch_dali.ops._registry import register
from torch_dali.ops._schema import Arg, OpSchema
from torch_dali.tensor_list import TensorList


# -- data ------------------------------------------------------------------------------------------

def _photo(h: int = 75, w: int = 100, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 // w, yy * 255 // h, (xx * 3 + yy) % 256], -1)
    return Image.fromarray(np.clip(base + rng.integers(0, 40, (h, w, 3)), 0, 255).astype(np.uint8))


def _enc(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _exif(orientation: int) -> bytes:
    ex = Image.Exif()
    ex[0x0112] = orientation
    return ex.tobytes()


def _png16(arr: np.ndarray) -> bytes:
    """A 16-bit RGB PNG (PIL cannot write one)."""
    import zlib
    h, w, _ = arr.shape
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PHOTO = _photo()
JPEG = _enc(PHOTO, "JPEG", quality=90)


def _t(b: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(b), dtype=torch.uint8) if b else torch.zeros(0, dtype=torch.uint8)


def _pil(b: bytes, mode: str = "RGB") -> np.ndarray:
    return np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(b))).convert(mode))


def _dec(b: bytes, output_type=types.RGB, **kw) -> np.ndarray:
    return D.decode_image(_t(b), output_type, source="x.jpg", **kw).numpy()


# -- a test-only source op: encoded files as 1-D uint8 tensors, names as sources --------------------

_FILES: dict[str, list[tuple[str, bytes]]] = {}


class _BytesSource(Operator):
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict) -> list[TensorList]:
        files = _FILES[self.args["key"]]
        self.last_sources = [name for name, _ in files]
        return [TensorList([_t(b) for _, b in files])]


register(OpSchema(name="test_decoders_bytes_source", impl=_BytesSource, devices=("cpu",),
                  min_inputs=0, max_inputs=0, args=(Arg("key", "str"),)))


def _run(files: list[tuple[str, bytes]], op=fn.decoders.image, device: str = "cpu",
         seed: int = 1, device_id: int | None = None, **kw) -> list[torch.Tensor]:
    key = f"k{len(_FILES)}"
    _FILES[key] = files
    from torch_dali.ops import _registry
    source = _registry.lookup("test_decoders_bytes_source")

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=device_id, seed=seed)
    def pipe():
        data = _registry.call_op(source, (), {"key": key})
        return op(data, device=device, **kw)
    p = pipe()
    p.build()
    (out,) = p.run()
    return [out[i] for i in range(len(files))]


# -- decode vs PIL ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["baseline", "444", "progressive", "gray", "cmyk", "odd"])
def test_jpeg_matches_pil(kind: str) -> None:
    im = PHOTO if kind != "odd" else PHOTO.resize((67, 41))
    kw = {"baseline": {}, "444": {"subsampling": 0}, "progressive": {"progressive": True},
          "gray": {}, "cmyk": {}, "odd": {}}[kind]
    im = im.convert("L") if kind == "gray" else im.convert("CMYK") if kind == "cmyk" else im
    b = _enc(im, "JPEG", quality=90, **kw)
    out = _dec(b)
    ref = _pil(b)
    assert out.shape == ref.shape and out.dtype == np.uint8
    # measured max diff 0 (same libjpeg-turbo, fancy upsampling on, as DALI 2.4's CPU decoder)
    assert np.abs(out.astype(int) - ref).max() <= 1


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P", "PT", "L", "LA", "1"])
def test_png_exact(mode: str) -> None:
    im = PHOTO.copy()
    kw = {}
    if mode == "RGBA":
        im.putalpha(Image.fromarray((np.arange(100)[None].repeat(75, 0) * 2).astype(np.uint8)))
    elif mode in ("P", "PT"):
        im = im.convert("P", palette=Image.ADAPTIVE, colors=32)
        kw = {"transparency": 3} if mode == "PT" else {}
    else:
        im = im.convert(mode)
    b = _enc(im, "PNG", **kw)
    out = _dec(b)
    # DALI 2.4: alpha is dropped (not composited), palette expanded, gray replicated to 3 channels
    np.testing.assert_array_equal(out, _pil(b, "RGB"))


def test_png_16bit_rounds_to_8bit() -> None:
    a = (np.arange(40 * 50 * 3).reshape(40, 50, 3) * 97 % 65536).astype(np.uint16)
    b = _png16(a)
    out = _dec(b)
    # DALI 2.4: round(v * 255 / 65535); UINT16 keeps all 16 bits; FLOAT is v / 65535
    np.testing.assert_array_equal(out, (a.astype(np.int64) * 255 + 32767) // 65535)
    np.testing.assert_array_equal(_dec(b, dtype=torch.uint16).astype(np.int64), a)
    np.testing.assert_allclose(_dec(b, dtype=torch.float32), a / 65535, atol=1e-6)


def test_bmp_tiff_via_pil() -> None:
    for fmt in ("BMP", "TIFF"):
        b = _enc(PHOTO, fmt)
        np.testing.assert_array_equal(_dec(b), np.asarray(PHOTO))


# -- output types and dtypes -----------------------------------------------------------------------

def test_bgr_gray_ycbcr() -> None:
    rgb = _dec(JPEG)
    np.testing.assert_array_equal(_dec(JPEG, types.BGR), rgb[..., ::-1])
    gray = _dec(JPEG, types.GRAY)
    assert gray.shape == (75, 100, 1)
    # DALI 2.4 decodes JPEG GRAY as the luma plane directly (differs by up to ~10 from RGB->gray)
    ref = Image.open(io.BytesIO(JPEG))
    ref.draft("L", ref.size)
    np.testing.assert_array_equal(gray[..., 0], np.asarray(ref.convert("L")))


@pytest.mark.parametrize("rgb,gray,ycc", [  # DALI 2.4, solid-color PNGs
    ((0, 0, 0), 0, (16, 128, 128)), ((255, 255, 255), 255, (235, 128, 128)),
    ((200, 100, 50), 124, (123, 91, 175)), ((12, 200, 240), 148, (143, 173, 43)),
    ((90, 30, 160), 62, (70, 176, 145)),
])
def test_gray_ycbcr_values_match_dali(rgb, gray, ycc) -> None:
    b = _enc(Image.new("RGB", (4, 2), rgb), "PNG")
    assert _dec(b, types.GRAY)[0, 0].tolist() == [gray]
    assert _dec(b, types.YCbCr)[1, 3].tolist() == list(ycc)


def test_dtypes_scale_range() -> None:
    b = _enc(Image.new("RGB", (4, 2), (200, 100, 50)), "PNG")
    # DALI 2.4: FLOAT = v/255, INT16 = round(v*32767/255), UINT16 = v*257
    np.testing.assert_allclose(_dec(b, dtype=torch.float32)[0, 0], np.array([200, 100, 50]) / 255, rtol=1e-6)
    assert _dec(b, dtype=torch.int16)[0, 0].tolist() == [25700, 12850, 6425]
    assert _dec(b, dtype=torch.uint16)[0, 0].tolist() == [200 * 257, 100 * 257, 50 * 257]


def test_any_data_keeps_channels() -> None:
    rgba = PHOTO.copy()
    rgba.putalpha(128)
    assert _dec(_enc(rgba, "PNG"), types.ANY_DATA).shape == (75, 100, 4)  # DALI 2.4: RGBA kept
    assert _dec(_enc(PHOTO.convert("L"), "PNG"), types.ANY_DATA).shape == (75, 100, 1)
    pal = PHOTO.convert("P", palette=Image.ADAPTIVE, colors=16)
    assert _dec(_enc(pal, "PNG"), types.ANY_DATA).shape == (75, 100, 3)  # DALI 2.4: palette expanded
    assert _dec(_enc(PHOTO.convert("L"), "JPEG"), types.ANY_DATA).shape == (75, 100, 1)


# -- EXIF orientation (DALI 2.4 applies it by default: adjust_orientation=True) ----------------------

@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation(orientation: int) -> None:
    b = _enc(PHOTO, "JPEG", quality=90, exif=_exif(orientation))
    out = _dec(b)
    np.testing.assert_array_equal(out, _pil(b))
    assert out.shape[:2] == ((100, 75) if orientation >= 5 else (75, 100))
    raw = _dec(b, adjust_orientation=False)
    assert raw.shape[:2] == (75, 100)
    # the pure-torch rectification (used after GPU decoding) agrees with libjpeg's/PIL's
    fixed = D.apply_orientation(torch.from_numpy(raw).permute(2, 0, 1), orientation)
    np.testing.assert_array_equal(fixed.permute(1, 2, 0).numpy(), out)
    assert D.peek_image_shape(b) == (*out.shape[:2], 3)
    assert D.peek_image_shape(b, adjust_orientation=False) == (75, 100, 3)


# -- errors ----------------------------------------------------------------------------------------

BAD = {
    "truncated.jpg": JPEG[: len(JPEG) // 2],
    "no_eoi.jpg": JPEG[:-2],  # DALI 2.4 errors here too ("Premature end of JPEG data")
    "header_only.jpg": JPEG[:300],
    "empty.jpg": b"",
    "garbage.jpg": bytes(range(256)) * 4,
    "truncated.png": _enc(PHOTO, "PNG")[:3000],
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_data_raises_naming_the_file(name: str) -> None:
    with pytest.raises(DataError, match=rf"ImageDecoder: cannot decode {name}: "):
        D.decode_image(_t(BAD[name]), source=name)


def test_bad_file_in_pipeline_names_it() -> None:
    with pytest.raises(PipelineError, match=r"truncated\.jpg.*cannot decode truncated\.jpg"):
        _run([("good.jpg", JPEG), ("truncated.jpg", BAD["truncated.jpg"])])


def test_input_must_be_bytes() -> None:
    with pytest.raises(DataError, match="1-D uint8"):
        D.decode_image(torch.zeros(3, 4, dtype=torch.uint8), source="a")


# -- header probe ----------------------------------------------------------------------------------

def test_peek_image_shape() -> None:
    assert D.peek_image_shape(JPEG) == (75, 100, 3)
    assert D.peek_image_shape(_t(JPEG), types.GRAY) == (75, 100, 1)
    assert D.peek_image_shape(_enc(PHOTO.convert("L"), "JPEG")) == (75, 100, 3)  # DALI 2.4: C=3
    assert D.peek_image_shape(_enc(PHOTO, "PNG")) == (75, 100, 3)
    assert D.peek_image_shape(_enc(PHOTO, "BMP")) == (75, 100, 3)
    info = D.peek_image_info(_enc(PHOTO, "JPEG", progressive=True))
    assert info.progressive and not nvjpeg.gpu_decodable(info)
    assert nvjpeg.gpu_decodable(D.peek_image_info(JPEG))
    assert not nvjpeg.gpu_decodable(D.peek_image_info(_enc(PHOTO.convert("CMYK"), "JPEG")))
    # a huge declared size is reported from the header alone
    sof = JPEG.index(b"\xff\xc0")
    huge = bytearray(JPEG)
    huge[sof + 5:sof + 9] = struct.pack(">HH", 60000, 65000)
    assert D.peek_image_shape(bytes(huge)) == (60000, 65000, 3)
    for bad in ("empty.jpg", "garbage.jpg", "header_only.jpg"):
        if bad == "header_only.jpg":
            continue  # its SOF is within the first 300 bytes: the header is complete
        with pytest.raises(DataError, match="header"):
            D.peek_image_info(BAD[bad], source=bad)


@pytest.mark.parametrize("dtype,ok", [(types.INT32, True), (types.UINT32, True), (types.INT64, True),
                                      (types.UINT64, True), (types.FLOAT, True), (types.FLOAT64, True),
                                      (types.UINT8, False), (types.INT8, False), (types.UINT16, False),
                                      (types.INT16, False), (types.FLOAT16, False), (types.BOOL, False)])
def test_peek_image_shape_dtypes(dtype, ok) -> None:
    # DALI 2.4 (measured) refuses the types a 360x541 shape would wrap or round in (it gave 104 as uint8 here)
    arr = np.frombuffer(JPEG, np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.peek_image_shape(fn.external_source(source=lambda: [arr], batch=True), dtype=dtype)

    if not ok:
        with pytest.raises((ArgumentError, GraphError), match="dtype"):
            pipe().build()
        return
    p = pipe()
    p.build()
    assert np.asarray(p.run()[0][0]).tolist() == [75, 100, 3]


# -- pipelines: cpu, mixed without CUDA, random crop ----------------------------------------------

def test_pipeline_cpu_and_mixed_fallback() -> None:
    files = [("a.jpg", JPEG), ("b.png", _enc(PHOTO, "PNG")),
             ("c.jpg", _enc(PHOTO, "JPEG", progressive=True))]
    cpu = _run(files)
    mixed = _run(files, device="mixed")  # no CUDA here: the op runs on the CPU
    for (name, b), x, y in zip(files, cpu, mixed):
        assert x.shape == (75, 100, 3) and x.dtype == torch.uint8
        np.testing.assert_array_equal(x.cpu().numpy(), _dec(b))
        np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())


def test_legacy_names_and_tuning_args_accepted() -> None:
    from torch_dali import ops
    assert ops.ImageDecoder and ops.nvJPEGDecoder and ops.HostDecoder and ops.ImageDecoderRandomCrop
    out = _run([("a.jpg", JPEG)], hw_decoder_load=0.9, device_memory_padding=1 << 20,
               host_memory_padding=1 << 20, preallocate_width_hint=640, preallocate_height_hint=480,
               affine=False, split_stages=False, use_chunk_allocator=False,
               jpeg_fancy_upsampling=True, memory_stats=False, hybrid_huffman_threshold=10,
               cache_size=0, cache_type="", output_type=types.BGR)
    np.testing.assert_array_equal(out[0].numpy(), _dec(JPEG, types.BGR))


def test_bad_args_raise_at_build() -> None:
    with pytest.raises((ArgumentError, GraphError), match="dtype"):
        _run([("a.jpg", JPEG)], dtype=types.INT64)
    with pytest.raises((ArgumentError, GraphError), match="random_area"):
        _run([("a.jpg", JPEG)], op=fn.decoders.image_random_crop, random_area=[0.6, 0.5])
    with pytest.raises((ArgumentError, GraphError), match="random_aspect_ratio"):
        _run([("a.jpg", JPEG)], op=fn.decoders.image_random_crop, random_aspect_ratio=[0.0, 1.0])


def test_random_crop_is_crop_of_full_decode() -> None:
    from torch_dali.ops.decoders.image import ImageDecoderRandomCrop
    files = [(f"{i}.jpg", _enc(_photo(60 + 7 * i, 90 - 5 * i, i), "JPEG", quality=90,
                               exif=_exif(6 if i == 3 else 1))) for i in range(6)]
    for kw in ({}, {"random_area": [0.3, 0.5], "random_aspect_ratio": [0.5, 2.0], "num_attempts": 3}):
        out = _run(files, op=fn.decoders.image_random_crop, seed=7, **kw)
        again = _run(files, op=fn.decoders.image_random_crop, seed=7, **kw)
        sizes = set()
        for (name, b), crop, crop2 in zip(files, out, again):
            np.testing.assert_array_equal(crop.numpy(), crop2.numpy())  # same seed, same crop
            full = torch.from_numpy(_dec(b))
            h, w = crop.shape[:2]
            sizes.add((h, w))
            hits = [(y, x) for y in range(full.shape[0] - h + 1) for x in range(full.shape[1] - w + 1)
                    if torch.equal(full[y:y + h, x:x + w], crop)]
            assert hits, f"{name}: crop {h}x{w} is not a window of the full decode"
        assert len(sizes) > 1
    # the window is random_crop_window's on the op's sample rng (as random_resized_crop draws it)
    op = ImageDecoderRandomCrop.__new__(ImageDecoderRandomCrop)
    op.area, op.aspect, op.attempts = [0.08, 1.0], [0.75, 4 / 3], 10
    ctx = SampleContext(seed=123, iteration=2, index=1, source="z.jpg")
    y, x, h, w = random_crop_window(SampleRNG(123, 2, 1), 75, 100, (0.08, 1.0), (0.75, 4 / 3), 10)
    full = _dec(JPEG)
    crop = D.decode_image_crop(_t(JPEG), op.window_fn(ctx), source="z.jpg").numpy()
    np.testing.assert_array_equal(crop, full[y:y + h, x:x + w])


def test_random_crop_scalar_area_is_fixed() -> None:
    # DALI 2.4: random_area=0.5 means the range [0.5, 0.5] (all crops ~half the area)
    out = _run([(f"{i}.jpg", JPEG) for i in range(4)], op=fn.decoders.image_random_crop,
               random_area=0.5)
    for crop in out:
        assert abs(crop.shape[0] * crop.shape[1] / 7500 - 0.5) < 0.03


# -- GPU (run on the lent GPU machine; skipped here) ------------------------------------------------

@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_mixed_on_cuda_matches_cpu() -> None:
    files = [("a.jpg", JPEG), ("b.png", _enc(PHOTO, "PNG")),
             ("c.jpg", _enc(PHOTO, "JPEG", progressive=True)),
             ("d.jpg", _enc(PHOTO, "JPEG", quality=90, exif=_exif(6))),
             ("e.jpg", _enc(PHOTO.convert("L"), "JPEG"))]
    for ot in (types.RGB, types.GRAY, types.BGR):
        out = _run(files, device="mixed", output_type=ot, device_id=0)
        for (name, b), y in zip(files, out):
            assert y.is_cuda
            ref = _dec(b, ot)
            assert y.shape == ref.shape, name
            # nvJPEG's chroma upsampling differs from libjpeg's fancy upsampling (as in DALI)
            diff = np.abs(y.cpu().numpy().astype(int) - ref)
            print(name, ot, "max", diff.max(), "mean", diff.mean())
            assert diff.mean() < 3.0, name
    crops = _run(files, op=fn.decoders.image_random_crop, device="mixed", seed=3, device_id=0)
    cpu_crops = _run(files, op=fn.decoders.image_random_crop, device="cpu", seed=3)
    for c, r in zip(crops, cpu_crops):  # same windows as the CPU op for the same seed
        assert c.is_cuda and c.shape == r.shape


def test_nvjpeg_decoder_falls_back_to_one_slot_then_to_torchvision():
    """Several slots hold several hardware handles: when they cannot be made the decoder is made
    with one slot; when not even that, None (torchvision decodes) with one warning, not a failed
    construction on every batch."""
    import warnings

    from torch_dali.io import nvjpeg
    made = []

    config = nvjpeg.DecoderConfig(1, 8, 10 ** 6, 3, hw_concurrent=False, blocking_sync=True)

    class OneSlotOnly:
        def NvJpegDecoder(self, *args):
            made.append(args)
            if args[5] > 1:
                raise RuntimeError("nvjpegCreateEx(HARDWARE) failed")
            return "decoder"

    assert nvjpeg._make_decoder(OneSlotOnly(), 0, 0.9, config) == "decoder"
    # every setting is passed (the extension reads no environment): slots 3, then 1
    # ..., adaptive, arena 3, padding, lazy, prealloc, priority, shared hardware handle, pinned input,
    # hardware state sync, host waits
    tail = (False, True, False, 3, 2 << 20, 3, 2, 0, False, False, True, True)
    assert made == [(0, 1, 8, 0.9, 10 ** 6, 3) + tail, (0, 1, 8, 0.9, 10 ** 6, 1) + tail]

    class Never:
        def NvJpegDecoder(self, *args):
            raise RuntimeError("no device")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert nvjpeg._make_decoder(Never(), 0, 0.9, config) is None
    assert len(caught) == 1 and "torchvision" in str(caught[0].message)
