"""The CUDA extension held to its references: the fused kernels to the pure-torch resize
(DALI's filters), the nvJPEG decoder to torchvision's CPU decoder."""
from __future__ import annotations

import io
import threading
import time

import pytest
import torch
import torch.nn.functional as F

from torch_dali._native import extension as _extension

if not torch.cuda.is_available():
    pytest.skip("CUDA is not available: the extension's kernels need a GPU", allow_module_level=True)
EXT = _extension.load()
if EXT is None:
    pytest.skip(f"torch_dali extension unavailable: {_extension.load_error()}", allow_module_level=True)

OPS = torch.ops.torch_dali
DEV = torch.device("cuda")
MEAN = torch.tensor([0.485, 0.456, 0.406]) * 255
STD = torch.tensor([0.229, 0.224, 0.225]) * 255


def _rand(g: torch.Generator, lo: int, hi: int) -> int:
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def _batch(g: torch.Generator, n: int, c: int, out_hw: tuple[int, int]):
    """Variable-size images and windows: downscale, upscale (window < output) and extreme aspect."""
    images, windows = [], []
    for i in range(n):
        h, w = _rand(g, 2, 300), _rand(g, 2, 300)
        if i % 5 == 3:
            h, w = 3, 400  # extreme aspect
        images.append(torch.randint(0, 256, (h, w, c), dtype=torch.uint8, generator=g).to(DEV))
        if i % 4 == 1:  # upscale: window smaller than the output
            wh, ww = min(h, max(1, out_hw[0] // 3)), min(w, max(1, out_hw[1] // 4))
        else:
            wh, ww = _rand(g, 1, h), _rand(g, 1, w)
        windows.append([_rand(g, 0, h - wh), _rand(g, 0, w - ww), wh, ww])
    mirror = torch.randint(0, 2, (n,), generator=g).bool()
    return images, torch.tensor(windows, dtype=torch.int32), mirror


def _reference(images, windows, mirror, mean, std, out_hw, antialias, nchw):
    """The spec: DALI's resize in pure torch (functional/resize.py) of each window as a region of
    interest (taps beyond the window read the image, as DALI's random_resized_crop does), in float."""
    from torch_dali.functional.resize import resize as spec_resize
    outs = []
    for img, (y, x, h, w), m in zip(images, windows.tolist(), mirror.tolist()):
        r = spec_resize(img, out_hw, "linear", antialias, dtype=torch.float32, roi=(y, x, h, w))
        r = r.permute(2, 0, 1)
        if m:
            r = r.flip(-1)
        r = (r - mean.to(DEV)[:, None, None]) / std.to(DEV)[:, None, None]
        outs.append(r if nchw else r.permute(1, 2, 0))
    return torch.stack(outs)


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("nchw", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.uint8])
def test_resized_crop_mirror_normalize_matches_reference(c, antialias, nchw, dtype):
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.uint8]
    g = torch.Generator().manual_seed(c * 1000 + antialias * 100 + nchw * 10 + dtypes.index(dtype))
    out_hw = (_rand(g, 8, 224), _rand(g, 8, 224))
    images, windows, mirror = _batch(g, 12, c, out_hw)
    mean, std = (MEAN[:c], STD[:c]) if dtype != torch.uint8 else (torch.zeros(c), torch.ones(c))
    out = OPS.resized_crop_mirror_normalize(images, windows, mirror, mean, std, out_hw[0], out_hw[1],
                                            antialias, dtype, nchw)
    ref = _reference(images, windows, mirror, mean, std, out_hw, antialias, nchw)
    assert out.dtype == dtype and out.device.type == "cuda" and out.shape == ref.shape
    if dtype == torch.float32:
        torch.testing.assert_close(out, ref, atol=1e-3, rtol=0)
    elif dtype == torch.uint8:
        assert (out.float() - ref.round().clamp(0, 255)).abs().max().item() <= 1
    else:
        tol = 4e-3 if dtype == torch.float16 else 2e-2
        torch.testing.assert_close(out.float(), ref, atol=tol, rtol=tol)


def test_window_equal_to_output_is_exact_crop_mirror_normalize():
    g = torch.Generator().manual_seed(1)
    img = torch.randint(0, 256, (50, 60, 3), dtype=torch.uint8, generator=g).to(DEV)
    for m in (False, True):
        out = OPS.resized_crop_mirror_normalize([img], torch.tensor([[5, 7, 32, 40]]), torch.tensor([m]),
                                                MEAN, STD, 32, 40, True, torch.float32, True)[0]
        ref = img[5:37, 7:47].float().permute(2, 0, 1)
        ref = ((ref.flip(-1) if m else ref) - MEAN.to(DEV)[:, None, None]) / STD.to(DEV)[:, None, None]
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)


@pytest.mark.parametrize("c", [1, 3, 4])
@pytest.mark.parametrize("nchw", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_shared_tap_tables_give_the_per_pixel_kernels_bits(c, nchw, dtype):
    """The linear fused kernels read each block's taps from shared memory; the earlier kernel
    worked them out per pixel. Same sums, so the same bits, including windows shrunk past the
    tables (over 8x: the per-pixel fallback inside the new kernel) and the resize-then-crop form."""
    g = torch.Generator().manual_seed(c * 10 + nchw)
    images, windows, mirror = _batch(g, 16, c, (37, 53))
    images.append(torch.randint(0, 256, (900, 700, c), dtype=torch.uint8, generator=g).to(DEV))
    windows = torch.cat([windows, torch.tensor([[0, 0, 900, 700]], dtype=windows.dtype)])
    mirror = torch.cat([mirror, torch.tensor([True])])
    resized = torch.tensor([[_rand(g, 53, 400), _rand(g, 60, 400)] for _ in images])
    anchors = torch.tensor([[_rand(g, 0, int(h) - 53), _rand(g, 0, int(w) - 60)] for h, w in resized.tolist()])
    mean, std = MEAN.repeat(2)[:c], STD.repeat(2)[:c]
    runs = []
    try:
        for tables in (False, True):
            EXT.set_fused_tap_tables(tables)
            runs.append([OPS.resized_crop_mirror_normalize(images, windows, mirror, mean, std, 37, 53, aa, dtype, nchw)
                         for aa in (False, True)]
                        + [OPS.resize_crop_mirror_normalize(images, resized, anchors, mirror, mean, std, 53, 60, 1,
                                                            True, rr, dtype, nchw) for rr in (False, True)])
    finally:
        EXT.set_fused_tap_tables(True)
    for per_pixel, tables in zip(*runs):
        assert torch.equal(per_pixel, tables)


def test_window_outside_image_raises():
    img = torch.zeros(10, 10, 3, dtype=torch.uint8, device=DEV)
    with pytest.raises(RuntimeError, match="window 0"):
        OPS.resized_crop_mirror_normalize([img], torch.tensor([[5, 5, 8, 2]]), torch.tensor([False]),
                                          MEAN, STD, 4, 4, True, torch.float32, True)


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("interp,name,antialias", [(1, "linear", False), (1, "linear", True), (2, "nn", False)])
def test_resize_batch_matches_the_spec(c, interp, name, antialias):
    """resize_batch against the pure-torch resize (DALI's filters): nearest exactly, linear within
    one level where the two-pass spec and the one-pass kernel round a float tie differently."""
    from torch_dali.functional.resize import resize as spec_resize
    g = torch.Generator().manual_seed(7 + interp + c)
    images = [torch.randint(0, 256, (_rand(g, 2, 300), _rand(g, 2, 300), c), dtype=torch.uint8,
                            generator=g).to(DEV) for _ in range(10)]
    sizes = torch.tensor([[_rand(g, 1, 400), _rand(g, 1, 400)] for _ in images])
    outs = OPS.resize_batch(images, sizes, antialias, interp)
    for img, (h, w), out in zip(images, sizes.tolist(), outs):
        ref = spec_resize(img, (h, w), name, antialias)
        assert out.shape == (h, w, c) and out.dtype == torch.uint8
        d = (out.int() - ref.int()).abs()
        assert d.max().item() <= (1 if name == "linear" else 0)
        assert (d > 0).float().mean().item() < 1e-3


def test_opcheck():
    g = torch.Generator().manual_seed(3)
    images, windows, mirror = _batch(g, 4, 3, (20, 24))
    torch.library.opcheck(OPS.resized_crop_mirror_normalize,
                          (images, windows, mirror, MEAN, STD, 20, 24, True, torch.float16, True))
    torch.library.opcheck(OPS.resize_batch, (images, torch.tensor([[5, 6], [30, 40], [7, 7], [1, 9]]), True, 1))


# ----------------------------------------------------------------------------------------- nvJPEG

def _photo(g: torch.Generator, h: int, w: int, gray: bool = False):
    """A smooth random picture (upscaled noise plus fine noise), closer to a photo than noise."""
    from PIL import Image
    c = 1 if gray else 3
    low = torch.randint(0, 256, (c, max(2, h // 16), max(2, w // 16)), generator=g).float()[None]
    img = F.interpolate(low, size=(h, w), mode="bicubic", align_corners=False)[0]
    # Luminance-only fine noise: per-channel noise makes chroma detail that 4:2:0 decoders
    # (nvJPEG vs libjpeg-turbo's smooth upsampling) legitimately reconstruct differently.
    img = (img + torch.randn((1, h, w), generator=g) * 6).clamp(0, 255).to(torch.uint8)
    arr = img[0].numpy() if gray else img.permute(1, 2, 0).numpy()
    return Image.fromarray(arr, mode="L" if gray else "RGB")


def _encode(pil, fmt="JPEG", **kw) -> torch.Tensor:
    buf = io.BytesIO()
    pil.save(buf, format=fmt, **kw)
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


def _jpegs():
    g = torch.Generator().manual_seed(11)
    return {
        "q90_420": _encode(_photo(g, 375, 500), quality=90, subsampling=2),
        "q95_444": _encode(_photo(g, 333, 500), quality=95, subsampling=0),
        "gray": _encode(_photo(g, 240, 320, gray=True), quality=90),
        "progressive": _encode(_photo(g, 300, 400), quality=90, progressive=True),
        "odd_size": _encode(_photo(g, 101, 77), quality=85, subsampling=2),
    }


def _cpu_decode(data: torch.Tensor, gray: bool = False) -> torch.Tensor:
    from torchvision.io import ImageReadMode, decode_jpeg
    mode = ImageReadMode.GRAY if gray else ImageReadMode.RGB
    return decode_jpeg(data, mode=mode).permute(1, 2, 0)


CONFIGS = [(2, 2, 0.9), (0, 2, 0.0), (1, 1, 1.0), (4, 3, 0.5)]


@pytest.fixture(scope="module", params=CONFIGS, ids=lambda c: f"hw{c[0]}-cuda{c[1]}-load{c[2]}")
def decoder(request):
    hw, cu, load = request.param
    return EXT.NvJpegDecoder(torch.cuda.current_device(), hw, cu, load, 1000 * 1000, 1)


def _close(out: torch.Tensor, ref: torch.Tensor, what: str) -> None:
    assert out.device.type == "cuda" and out.dtype == torch.uint8, what
    assert out.shape == ref.shape, f"{what}: {tuple(out.shape)} vs {tuple(ref.shape)}"
    diff = (out.cpu().float() - ref.float()).abs()
    # Another IDCT than libjpeg-turbo: with interpolated chroma upsampling the H200 gave mean
    # differences <= 0.04 and peaks <= 3 on these images (nearest upsampling: mean 3, peaks 24).
    assert diff.mean().item() < 0.5 and diff.max().item() <= 8, (what, diff.mean().item(), diff.max().item())


def test_decode_matches_torchvision(decoder):
    jpegs = _jpegs()
    names = list(jpegs) * 3  # a batch big enough to split over the states
    outs = decoder.decode([jpegs[k] for k in names], "rgb")
    for name, out in zip(names, outs):
        assert out is not None, name
        _close(out, _cpu_decode(jpegs[name]), name)
    stats = decoder.last_stats
    assert stats["not_decoded"] == 0 and stats["hardware"] + stats["hybrid"] == len(names)


def test_decode_packed_gives_decode_s_bits(decoder):
    """decode_packed (samples as parts of one buffer, in any order, repeated, with gaps, with a
    PNG among them) gives what decode() gives for the same samples as tensors, bit for bit; a part
    outside the buffer is refused naming it."""
    from torch_dali.packed import PackedSamples
    jpegs = _jpegs()
    png = _encode(_photo(torch.Generator().manual_seed(2), 40, 50), fmt="PNG")
    parts = [jpegs[k] for k in jpegs] + [png]
    pieces, offsets = [], []
    pos = 0
    for p in parts:  # 3 junk bytes between parts
        pieces += [torch.full((3,), 0xFF, dtype=torch.uint8), p]
        offsets.append(pos + 3)
        pos += 3 + p.numel()
    buf = torch.cat(pieces)
    order = [4, 0, 5, 2, 0, 1, 3, 3]
    packed = PackedSamples.make(buf, [offsets[i] for i in order], [parts[i].numel() for i in order])
    got = decoder.decode_packed(packed.buffer, torch.from_numpy(packed.offsets), torch.from_numpy(packed.sizes), "rgb")
    want = decoder.decode([parts[i] for i in order], "rgb")
    for i, g, w in zip(order, got, want):
        assert (g is None) == (w is None) == (i == 5)
        if g is not None:
            assert torch.equal(g, w), i
    with pytest.raises(RuntimeError, match="outside the buffer"):
        decoder.decode_packed(buf, torch.tensor([buf.numel() - 10]), torch.tensor([11]), "rgb")


def test_activity_names_where_a_decode_is_and_empties_after(decoder):
    """activity() (what a stalled pipeline's report prints) shows a place while a decode runs on
    another thread and nothing once it returns: every place a thread enters, it leaves."""
    jpegs = _jpegs()
    data = [jpegs[k] for k in list(jpegs) * 40]
    seen: dict = {}
    for _ in range(20):
        t = threading.Thread(target=decoder.decode, args=(data, "rgb"))
        t.start()
        while t.is_alive() and not seen:
            seen = decoder.activity()
        t.join()
        if seen:
            break
    assert seen, "no place reported during 20 decodes"
    assert all(n >= 1 and s >= 0.0 for n, s in seen.values()), seen
    deadline = time.monotonic() + 10  # the background thread may still be making the decoder's parts
    while decoder.activity() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert decoder.activity() == {}


def test_decode_gray_and_bgr(decoder):
    jpegs = _jpegs()
    data = [jpegs["q90_420"], jpegs["gray"], jpegs["q95_444"]]
    rgb = decoder.decode(data, "rgb")
    bgr = decoder.decode(data, "bgr")
    gray = decoder.decode(data, "gray")
    for d, r, b, y in zip(data, rgb, bgr, gray):
        assert torch.equal(r, b.flip(-1))
        assert y.shape[-1] == 1
        _close(y, _cpu_decode(d, gray=True), "gray")


def test_non_jpeg_gives_none_and_corrupt_raises(decoder):
    jpegs = _jpegs()
    png = _encode(_photo(torch.Generator().manual_seed(2), 40, 50), fmt="PNG")
    outs = decoder.decode([jpegs["q90_420"], png], "rgb")
    assert outs[0] is not None and outs[1] is None
    with pytest.raises(RuntimeError, match="sample 1"):  # truncated before the frame header
        decoder.decode([jpegs["q95_444"], jpegs["q90_420"][:60].clone()], "rgb")
    outs = decoder.decode([jpegs["q95_444"]], "rgb")  # still usable after an error
    _close(outs[0], _cpu_decode(jpegs["q95_444"]), "after error")
    with pytest.raises(RuntimeError, match="output_format"):
        decoder.decode([jpegs["q95_444"]], "yuv")


def test_decode_is_ordered_on_the_current_stream(decoder):
    """Results are ready once the caller's stream reaches the decode: another stream that waits on
    it reads correct pixels without any host synchronisation."""
    jpegs = _jpegs()
    data = [jpegs["q90_420"], jpegs["progressive"]] * 16
    refs = [_cpu_decode(d) for d in data]
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(3):
        with torch.cuda.stream(s1):
            torch.cuda._sleep(5_000_000)  # keep s1 busy so an unordered read would see garbage
            outs = decoder.decode(data, "rgb")
        s2.wait_stream(s1)
        with torch.cuda.stream(s2):
            sums = torch.stack([o.float().sum() for o in outs])
            for o in outs:
                o.record_stream(s2)
        torch.cuda.synchronize()
        expected = torch.stack([r.float().sum() for r in refs])
        assert ((sums.cpu() - expected).abs() / expected < 0.01).all()


def test_decoder_argument_errors():
    with pytest.raises(RuntimeError, match="num_cuda_states"):
        EXT.NvJpegDecoder(0, 1, 0, 0.5)
    with pytest.raises(RuntimeError, match="hw_load"):
        EXT.NvJpegDecoder(0, 1, 1, 1.5)
    dec = EXT.NvJpegDecoder(0, 1, 1, 0.5, 1000 * 1000, 1)
    with pytest.raises(RuntimeError, match="sample 0"):
        dec.decode([torch.zeros(10, 2, dtype=torch.uint8)], "rgb")


def test_decoder_settings_are_arguments(monkeypatch):
    """hw_concurrent and blocking_sync are constructor arguments (the extension reads no
    environment); torch_dali passes the TORCH_DALI_NVJPEG_* knobs through them."""
    dec = EXT.NvJpegDecoder(0, 1, 1, 0.5, 1000 * 1000, 1, True, True)
    assert dec.hw_concurrent and dec.blocking_sync
    plain = EXT.NvJpegDecoder(0, 1, 1, 0.5, 1000 * 1000, 1)
    assert not plain.hw_concurrent and not plain.blocking_sync
    from torch_dali.io import nvjpeg
    monkeypatch.setenv("TORCH_DALI_NVJPEG_HW_CONCURRENT", "1")
    monkeypatch.setenv("TORCH_DALI_NVJPEG_CUDA_STATES", "3")
    made = nvjpeg.prepare_decoder(torch.device("cuda", 0), 0.55)
    assert made is not None and made.hw_concurrent and not made.blocking_sync
    made.decode([_jpegs()["q90_420"]], "rgb")  # a batch after the first: the CUDA backend is there (lazy_cuda)
    assert made.num_cuda_states == 3


@pytest.mark.parametrize("slots,shared", [(2, False), (3, False), (3, True)])
def test_slots_decode_batches_concurrently(slots, shared):
    """Several threads decoding at once on a decoder with independent slots get the pixels a lone
    decode gives (each batch on its own stream; hardware batches serialised across slots), with a
    hardware handle per slot or one for all (share_hw_handle)."""
    import threading
    jpegs = _jpegs()
    names = list(jpegs)
    batches = [[jpegs[names[(k + i) % len(names)]] for i in range(24)] for k in range(6)]
    single = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 0.8, 1000 * 1000, 1)
    refs = [[None if o is None else o.clone() for o in single.decode(b, "rgb")] for b in batches]
    torch.cuda.synchronize()
    dec = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 0.8, 1000 * 1000, slots, share_hw_handle=shared)
    assert dec.share_hw_handle == shared
    import time
    time.sleep(0.3)
    # the first slot is made at once, the others in the background once a batch has decoded (the
    # first batch does not wait for the hardware lock their hardware states take)
    assert dec.num_slots == 1
    dec.decode(batches[0], "rgb")
    deadline = time.monotonic() + 30
    while dec.num_slots < slots and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dec.num_slots == slots
    got: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for _ in range(3):
                    outs = dec.decode(batches[k], "rgb")
                s.synchronize()
            got[k] = outs
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(got) == len(batches)
    for k, (ref, out) in enumerate(zip(refs, [got[i] for i in range(len(batches))])):
        for r, o in zip(ref, out):
            assert (r is None) == (o is None), k
            if r is not None:
                assert torch.equal(r, o), k
    with pytest.raises(RuntimeError, match="num_slots"):
        EXT.NvJpegDecoder(0, 1, 1, 0.5, 1000 * 1000, 0)


def test_pinned_input_decodes_what_the_callers_buffers_decode():
    """pinned_input (TORCH_DALI_NVJPEG_PINNED_INPUT): hardware batches read pinned copies of their
    bitstreams, two buffers in turn, grown as batches grow; batches of changing sizes and windows,
    the callers' tensors overwritten after each call, decode as the caller's own buffers do."""
    jpegs = _jpegs()
    names = list(jpegs)
    batches = [[jpegs[names[(k + i) % len(names)]] for i in range(n)] for k, n in enumerate((8, 24, 3, 40, 24))]
    plain = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 1.0, 1000 * 1000, 1)
    pinned = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 1.0, 1000 * 1000, 1, pinned_input=True)
    assert pinned.pinned_input and not plain.pinned_input
    for k, b in enumerate(batches):
        rois = None
        if k % 2:  # windows: (y, x, h, w) inside every image
            rois = torch.tensor([[3, 5, 40, 50]] * len(b), dtype=torch.int64)
        ref = [None if o is None else o.clone() for o in plain.decode(b, "rgb", rois)]
        mine = [t.clone() for t in b]
        outs = pinned.decode(mine, "rgb", rois)
        for t in mine:  # the decoder copied what it needs: the caller may reuse its buffers at once
            t.fill_(0)
        torch.cuda.synchronize()
        for r, o in zip(ref, outs):
            assert (r is None) == (o is None), k
            if r is not None:
                assert torch.equal(r, o), k


def test_hw_state_sync_changes_no_pixel():
    """hw_state_sync (TORCH_DALI_NVJPEG_HW_STATE_SYNC, default on): a hardware state's next batch
    waits for its previous one on the host; batches back to back, with and without windows, decode
    to the same bytes as a decoder that reuses its states at once."""
    jpegs = _jpegs()
    names = list(jpegs)
    batches = [[jpegs[names[(k + i) % len(names)]] for i in range(n)] for k, n in enumerate((8, 24, 24, 40, 24))]
    dev = torch.cuda.current_device()
    waits = EXT.NvJpegDecoder(dev, 1, 2, 1.0, 1000 * 1000, 1)
    reuses = EXT.NvJpegDecoder(dev, 1, 2, 1.0, 1000 * 1000, 1, hw_state_sync=False)
    assert waits.hw_state_sync and not reuses.hw_state_sync
    outs = {id(waits): [], id(reuses): []}
    for dec in (waits, reuses):
        for k, b in enumerate(batches):  # no synchronisation between batches: states reused in flight
            rois = torch.tensor([[3, 5, 40, 50]] * len(b), dtype=torch.int64) if k % 2 else None
            outs[id(dec)].append(dec.decode(b, "rgb", rois))
    torch.cuda.synchronize()
    for k, (a, b) in enumerate(zip(outs[id(waits)], outs[id(reuses)])):
        for x, y in zip(a, b):
            assert (x is None) == (y is None), k
            if x is not None:
                assert torch.equal(x, y), k


@pytest.mark.parametrize("interp", [1, 2])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_resize_crop_mirror_normalize_equals_resize_then_crop(interp, antialias, dtype):
    """The fused op (resize each image to its own size, take a crop, mirror, normalize) gives what
    resize_batch followed by cropping gives, exactly, on CUDA and with the CPU kernels."""
    g = torch.Generator().manual_seed(interp * 10 + antialias + (dtype == torch.uint8) * 100)
    n, out_hw = 9, (40, 56)
    images, resized, anchors = [], [], []
    for i in range(n):
        h, w = _rand(g, 2, 200), _rand(g, 2, 200)
        img = torch.randint(0, 256, (h + 6, w + 9, 3), dtype=torch.uint8, generator=g).to(DEV)
        images.append(img[3:3 + h, 4:4 + w] if i % 2 else img[:h, :w].contiguous())  # views too
        rh, rw = _rand(g, out_hw[0], 180), _rand(g, out_hw[1], 180)
        resized.append([rh, rw])
        anchors.append([_rand(g, 0, rh - out_hw[0]), _rand(g, 0, rw - out_hw[1])])
    resized_t, anchors_t = torch.tensor(resized), torch.tensor(anchors)
    mirror = torch.randint(0, 2, (n,), generator=g).bool()
    mean, std = (MEAN, STD) if dtype != torch.uint8 else (torch.zeros(3), torch.ones(3))
    for dev_images in (images, [im.cpu() for im in images]):  # the CUDA kernels, then the CPU ones
        dev = dev_images[0].device
        big = OPS.resize_batch([im.contiguous() for im in dev_images], resized_t, antialias, interp)
        ref = []
        for r, (y, x), m in zip(big, anchors, mirror.tolist()):
            c = r[y:y + out_hw[0], x:x + out_hw[1]].float()
            c = c.flip(1) if m else c
            ref.append(((c - mean.to(dev)) / std.to(dev)).permute(2, 0, 1))
        ref = torch.stack(ref)
        out = OPS.resize_crop_mirror_normalize(dev_images, resized_t, anchors_t, mirror, mean, std, out_hw[0],
                                               out_hw[1], interp, antialias, True, dtype, True)
        if dtype == torch.uint8:
            assert torch.equal(out, ref.round().clamp(0, 255).to(torch.uint8))
        else:  # the same resized pixels; normalizing multiplies by 1/std where the reference divides
            torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)


def test_resize_crop_mirror_normalize_refuses_a_crop_outside():
    img = torch.zeros(20, 20, 3, dtype=torch.uint8, device=DEV)
    with pytest.raises(RuntimeError, match="not inside"):
        OPS.resize_crop_mirror_normalize([img], torch.tensor([[30, 30]]), torch.tensor([[10, 0]]),
                                         torch.zeros(1, dtype=torch.bool), MEAN, STD, 24, 24, 1, True, True,
                                         torch.float32, True)


def test_decoder_decodes_while_its_other_slots_are_made():
    """decode() runs on the slots made so far; destroying the decoder while the background thread
    still makes slots neither hangs nor crashes."""
    jpegs = list(_jpegs().values())[:8]
    for _ in range(3):
        dec = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 0.8, 1000 * 1000, 4)
        out = dec.decode(jpegs, "rgb")
        assert all(o is None or o.is_cuda for o in out)
        del dec
    torch.cuda.synchronize()


@pytest.mark.parametrize("lazy,prealloc", [(1, 1), (2, 2), (2, 0)])
def test_lazy_cuda_backend_decodes_as_the_eager_decoder(lazy, prealloc):
    """lazy_cuda: the CUDA backend is made after the hardware side. The first batch
    (first_batch=True) sends every image the engines take to them (the pixels of an all-hardware
    decoder), a progressive JPEG in it waits for the backend; later batches split as an eager
    decoder splits them, pixel for pixel. preallocate 2: the first slot's pools come after."""
    jpegs = _jpegs()
    names = [k for k in jpegs if k != "progressive"] * 4
    batch = [jpegs[k] for k in names]
    dev = torch.cuda.current_device()
    all_hw = EXT.NvJpegDecoder(dev, 1, 2, 1.0, 1000 * 1000, 1)
    eager = EXT.NvJpegDecoder(dev, 1, 2, 0.5, 1000 * 1000, 1)
    first_ref = [o.clone() for o in all_hw.decode(batch, "rgb")]
    later_ref = [o.clone() for o in eager.decode(batch, "rgb")]
    dec = EXT.NvJpegDecoder(dev, 1, 2, 0.5, 1000 * 1000, 2, False, False, False, 1, 2 << 20, lazy, prealloc)
    assert dec.lazy_cuda == lazy and dec.preallocate == prealloc and dec.hardware_available
    first = dec.decode(batch, "rgb", None, True)
    assert dec.last_stats["hybrid"] == all_hw.last_stats["hybrid"] and dec.last_stats["hardware"] > 0
    assert all(torch.equal(a, b) for a, b in zip(first, first_ref))
    for _ in range(2):
        later = dec.decode(batch, "rgb", None, False)  # waits for the backend if it is not there yet
        assert dec.cuda_ready and dec.num_cuda_states == 2
        assert dec.last_stats["hybrid"] == eager.last_stats["hybrid"] > 0
        assert all(torch.equal(a, b) for a, b in zip(later, later_ref))
    fresh = EXT.NvJpegDecoder(dev, 1, 2, 0.5, 1000 * 1000, 1, False, False, False, 1, 2 << 20, lazy, prealloc)
    mixed = fresh.decode([jpegs["progressive"], jpegs["q90_420"]], "rgb", None, True)
    _close(mixed[0], _cpu_decode(jpegs["progressive"]), "progressive, first batch")
    assert dec.build_stats.get("cuda_side_us", 0) > 0


@pytest.mark.parametrize("hw,cu,load", [(2, 2, 0.9), (0, 2, 0.0)])
def test_chunked_arenas_decode_as_one_arena(hw, cu, load):
    """arena 3 packs a batch into chunks of one size (16 MiB here; an image larger than a chunk
    gets its own block) and keeps nvJPEG's scratch on a stream of its own: the same pixels as one
    arena per batch, with windows too, over batches of growing size (the chunk size grows)."""
    g = torch.Generator().manual_seed(5)
    jpegs = _jpegs()
    big = _encode(_photo(g, 2400, 2500), quality=90, subsampling=2)  # 18 MB decoded: its own block
    names = [k for k in jpegs if k != "progressive"]
    one = EXT.NvJpegDecoder(0, hw, cu, load, 1000 * 1000, 1, arena=1)
    chunked = EXT.NvJpegDecoder(0, hw, cu, load, 1000 * 1000, 1, arena=3)
    for reps in (3, 60, 300):  # ~1, ~30 and ~150 MB batches
        data = [jpegs[k] for k in names] * reps + [big]
        a = one.decode(data, "rgb")
        b = chunked.decode(data, "rgb")
        torch.cuda.synchronize()
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    rois = torch.tensor([[10, 20, 50, 50]] * len(data), dtype=torch.int64)  # inside the 101x77 one too
    a, b = one.decode(data, "rgb", rois), chunked.decode(data, "rgb", rois)
    torch.cuda.synchronize()
    assert all(x.shape == (50, 50, 3) and torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("prealloc", [1, 2])
def test_lazy_hardware_side_leaves_the_first_batch_to_the_cuda_backend(prealloc):
    """lazy_cuda 3: the constructor makes the CUDA backend only. The first batch decodes on it alone
    (a CUDA-backend-only decoder's pixels; windows as views of whole images); later batches wait for
    the hardware side and split as an eager decoder splits them, pixel for pixel. A decoder dropped
    while its hardware side is being made neither hangs nor crashes."""
    jpegs = _jpegs()
    batch = [jpegs[k] for k in jpegs if k != "progressive"] * 4
    dev = torch.cuda.current_device()
    cuda_only = EXT.NvJpegDecoder(dev, 0, 2, 0.0, 1000 * 1000, 1)
    eager = EXT.NvJpegDecoder(dev, 1, 2, 0.5, 1000 * 1000, 1)
    first_ref = [o.clone() for o in cuda_only.decode(batch, "rgb")]
    later_ref = [o.clone() for o in eager.decode(batch, "rgb")]
    dec = EXT.NvJpegDecoder(dev, 1, 2, 0.5, 1000 * 1000, 2, False, False, False, 1, 2 << 20, 3, prealloc)
    assert dec.lazy_cuda == 3 and dec.cuda_ready
    first = dec.decode(batch, "rgb", None, True)
    assert (dec.last_stats["hardware"], dec.last_stats["hybrid"]) == (0, len(batch))
    assert all(torch.equal(a, b) for a, b in zip(first, first_ref))
    for _ in range(2):
        later = dec.decode(batch, "rgb", None, False)
        assert dec.hardware_available and dec.hardware_status == "ok"
        assert dec.last_stats["hardware"] == eager.last_stats["hardware"] > 0
        assert all(torch.equal(a, b) for a, b in zip(later, later_ref))
    assert dec.build_stats.get("hw_side_us", 0) > 0
    rois = torch.tensor([[3, 5, 40, 30]] * len(batch), dtype=torch.int64)
    fresh = EXT.NvJpegDecoder(dev, 1, 2, 1.0, 1000 * 1000, 1, False, False, False, 3, 2 << 20, 3, prealloc)
    windows = fresh.decode(batch, "rgb", rois, True)
    assert fresh.last_stats["hardware"] == 0
    assert all(w.shape[:2] == (40, 30) and torch.equal(w, r[3:43, 5:35]) for w, r in zip(windows, first_ref))
    for _ in range(3):
        EXT.NvJpegDecoder(dev, 1, 2, 0.9, 1000 * 1000, 2, False, False, False, 3, 2 << 20, 3, prealloc)
    torch.cuda.synchronize()


def test_hardware_windows_ending_on_an_edge_are_cut_from_whole_decodes():
    """The engines left the last row or column of a window that ends on the image's bottom or right
    edge unwritten where that side is a multiple of 8 (nvJPEG 13.0, H200: up to 84 levels off, new
    values each run). Those windows come from whole decodes: the whole decode's pixels, and every
    window is the same on a rerun after other batches have been through the decoder's buffers."""
    g = torch.Generator().manual_seed(8)
    images = [_encode(_photo(g, 432, 432), quality=90, subsampling=2),
              _encode(_photo(g, 400, 464), quality=90, subsampling=2),
              _encode(_photo(g, 336, 504), quality=95, subsampling=0),
              _encode(_photo(g, 437, 413), quality=90, subsampling=2)]
    sizes = [(432, 432), (400, 464), (336, 504), (437, 413)]
    data, rois, edge = [], [], []
    for img, (h, w) in zip(images, sizes):
        for y, x, wh, ww in ((h - 280, 7, 280, 232), (3, w - 301, 250, 301), (h - 90, w - 120, 90, 120),
                             (10, 12, 100, 90)):
            data.append(img)
            rois.append((y, x, wh, ww))
            edge.append((y + wh == h and h % 8 == 0) or (x + ww == w and w % 8 == 0))
    rois = torch.tensor(rois, dtype=torch.int64)
    dec = EXT.NvJpegDecoder(torch.cuda.current_device(), 1, 1, 1.0, 1000 * 1000, 1)
    whole = [t.clone() for t in dec.decode(data, "rgb")]
    first = [t.clone() for t in dec.decode(data, "rgb", rois)]
    assert dec.last_stats["hardware"] == len(data)
    for _ in range(3):  # other images through the buffers, then the windows again
        dec.decode(data[::-1], "rgb", torch.flip(rois, [0]).clamp(max=200))
        again = dec.decode(data, "rgb", rois)
        assert all(torch.equal(a, b) for a, b in zip(first, again))
    for k, (win, (y, x, h, w)) in enumerate(zip(first, rois.tolist())):
        assert win.shape[:2] == (h, w), k
        if edge[k]:
            assert torch.equal(win, whole[k][y:y + h, x:x + w]), k


def test_all_hardware_decoder_keeps_few_cuda_states():
    """hw_load 1 (every JPEG to the engines): after the first batch the CUDA backend only takes what
    the engines refuse, so slot 0 is trimmed to 2 states and the later slots are made with 2 (GPU
    memory); a progressive JPEG still decodes there, with the same pixels as a decoder made with 2.
    Where the first batch had many JPEGs off the baseline fast path (over 1 in 8), all 8 stay."""
    jpegs = _jpegs()
    dev = torch.cuda.current_device()
    dec = EXT.NvJpegDecoder(dev, 1, 8, 1.0, 1000 * 1000, 2)
    if not dec.hardware_available:
        pytest.skip("no hardware JPEG engines here")
    batch = [jpegs["q90_420"], jpegs["q95_444"], jpegs["odd_size"]] * 3 + [jpegs["progressive"]]  # 1 in 10
    ref = EXT.NvJpegDecoder(dev, 1, 2, 1.0, 1000 * 1000, 1)  # the same paths, 2 states from the start
    first_want = [o.clone() for o in ref.decode(batch, "rgb", None, True)]
    want = [o.clone() for o in ref.decode(batch, "rgb", None, False)]
    first = dec.decode(batch, "rgb", None, True)
    assert dec.num_cuda_states == 8  # the first batch decodes on the CUDA backend alone
    assert all(torch.equal(a, b) for a, b in zip(first, first_want))
    deadline = time.monotonic() + 20
    while dec.num_cuda_states != 2 and time.monotonic() < deadline:
        later = dec.decode(batch, "rgb", None, False)
        assert all(torch.equal(a, b) for a, b in zip(later, want))
    assert dec.num_cuda_states == 2
    for _ in range(4):  # both slots, the trimmed one and the one made small
        later = dec.decode(batch, "rgb", None, False)
        assert dec.last_stats["hybrid"] >= 1 and dec.last_stats["hardware"] >= 1  # the progressive one
        assert all(torch.equal(a, b) for a, b in zip(later, want))
    odd = EXT.NvJpegDecoder(dev, 1, 8, 1.0, 1000 * 1000, 2)  # first batch: 2 progressive in 3
    odd_batch = [jpegs["progressive"], jpegs["q90_420"], jpegs["progressive"]]
    odd.decode(odd_batch, "rgb", None, True)
    for _ in range(4):
        odd.decode(odd_batch, "rgb", None, False)
    time.sleep(1.0)  # the filler thread has had its chance
    odd.decode(odd_batch, "rgb", None, False)
    assert odd.num_cuda_states == 8
    eager = EXT.NvJpegDecoder(dev, 1, 8, 0.9, 1000 * 1000, 2)
    eager.decode(batch, "rgb", None, True)
    for _ in range(3):
        eager.decode(batch, "rgb", None, False)
    assert eager.num_cuda_states == 8  # a hardware share under 1 keeps them all
