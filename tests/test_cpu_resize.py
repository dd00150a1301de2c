"""The C helper cpu_resize.c (CPU resize, random_resized_crop and resize_crop_mirror,
`ops/fast/cpu_image.py`) gives the spec's bits: `functional.resize` with the linear / triangular,
cubic, Lanczos-3 and Gaussian filters (mixed per axis by min_filter / mag_filter), up and down,
antialias on and off, regions of interest and fractional windows, strided rows, any channel count,
uint8, int16, uint16 and float32 in, the input's type or float32 out; whole pipelines give the
same batches with and without it, and DALI 2.4's (digests below)."""
from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import build, helpers
from torch_dali.functional.resize import filter_table, resize
from torch_dali.ops import _dispatch
from torch_dali.ops.fast import cpu_image

try:
    from tests._stand_ins import same_with_and_without
except ImportError:
    from _stand_ins import same_with_and_without  # type: ignore[no-redef]

KINDS = ["linear", "triangular", "cubic", "lanczos3", "gaussian"]


def _need_helper() -> helpers.FilterTables:
    why = build.skip_reason(helpers.CPU_RESIZE)
    if why:
        pytest.skip(why)
    return helpers.FilterTables(filter_table)


def _image(rng: random.Random, h: int, w: int, c: int, dtype: torch.dtype = torch.uint8) -> torch.Tensor:
    pad = rng.choice([0, 0, 3])  # strided rows: a crop of a wider image
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.float32:  # any values, infinities and NaNs among them
        x = torch.randn((h, w + pad, c), generator=g) * rng.choice([1.0, 300.0, 1e30])
        x.view(-1)[::rng.randint(5, 5000)] = rng.choice([float("inf"), -float("inf"), float("nan"), 0.5])
        return x[:, :w]
    lo, hi = {torch.uint8: (0, 256), torch.int16: (-32768, 32768), torch.uint16: (0, 65536)}[dtype]
    return torch.randint(lo, hi, (h, w + pad, c), dtype=torch.int32, generator=g).to(dtype)[:, :w]


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal, float NaNs included (bit for bit)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype != torch.float32:
        return torch.equal(a, b)
    return torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


@pytest.mark.parametrize("seed", [17, 18])
def test_helper_matches_the_spec_bit_for_bit(seed: int) -> None:
    tables = _need_helper()
    rng = random.Random(seed)
    done = 0
    for _ in range(400):
        h, w, c = rng.randint(1, 60), rng.randint(1, 60), rng.choice([1, 2, 3, 4, 5])
        src = rng.choice([torch.uint8, torch.uint8, torch.int16, torch.uint16, torch.float32])
        img = _image(rng, h, w, c, src)
        size = (rng.randint(1, 70), rng.randint(1, 70))
        aa, dtype = rng.random() < 0.8, rng.choice([src, torch.float32])
        filters = (rng.choice(KINDS), rng.choice(KINDS)) if rng.random() < 0.3 else (rng.choice(KINDS),) * 2
        got = torch.full((size[0], size[1], c), 7, dtype=dtype)
        if rng.random() < 0.5:  # a region of interest (or the whole image)
            rh, rw = rng.randint(1, h), rng.randint(1, w)
            roi = (rng.randint(0, h - rh), rng.randint(0, w - rw), rh, rw) if rng.random() < 0.7 else (0, 0, h, w)
            if rng.random() < 0.1:
                size = (roi[2], roi[3])  # same size: a pure crop on the filter's grid
                got = torch.full((size[0], size[1], c), 7, dtype=dtype)
            want = resize(img, size, "nn", aa, *filters, dtype=dtype, roi=roi)
            ran = helpers.resize_roi(img, roi, got, aa, filters, tables)
            whole = tuple(roi) == (0, 0, h, w)
        else:  # a fractional window, reaching past the image
            y0, x0 = rng.uniform(-3, h), rng.uniform(-3, w)
            win = ((y0, y0 + rng.uniform(0.3, h + 3)), (x0, x0 + rng.uniform(0.3, w + 3)))
            want = resize(img, size, "nn", aa, *filters, dtype=dtype, window=win)
            ran = helpers.resize_window(img, win, got, aa, filters, tables)
            whole = False
        if not ran:  # only when neither axis filters (the whole image at its own size, mag filter cubic or linear)
            assert whole and size == (h, w) and filters[1] not in ("lanczos3", "gaussian")
            continue
        done += 1
        assert _same_bits(got, want), ((h, w, c), src, size, aa, dtype, filters)
    assert done > 350


@pytest.mark.parametrize("interp", ["cubic", "lanczos3", "gaussian"])
def test_photo_sized_images_match_the_spec(interp: str) -> None:
    """Sizes like the benchmark's (both pass orders, the vectorised 3- and 4-channel paths)."""
    tables = _need_helper()
    rng = random.Random(5)
    for (h, w, c), size, src in [((413, 367, 3), (224, 224), torch.uint8), ((360, 440, 4), (224, 300), torch.uint8),
                                 ((380, 400, 3), (560, 500), torch.int16), ((401, 390, 1), (100, 390), torch.uint16),
                                 ((256, 300, 3), (256, 150), torch.float32)]:
        img = _image(rng, h, w, c, src)
        for dtype in (src, torch.float32):
            want = resize(img, size, interp, True, dtype=dtype)
            got = torch.empty((*size, c), dtype=dtype)
            assert helpers.resize_roi(img, (0, 0, h, w), got, True, (interp, interp), tables)
            assert _same_bits(got, want), ((h, w, c), size, dtype)


def test_helper_declines_what_it_does_not_take() -> None:
    tables = _need_helper()
    img = torch.zeros(8, 8, 3, dtype=torch.uint8)
    out = torch.empty(4, 4, 3, dtype=torch.uint8)
    cubic = ("cubic", "cubic")
    assert not helpers.resize_roi(img.double(), (0, 0, 8, 8), torch.empty(4, 4, 3), True, cubic, tables)  # float64 in
    assert not helpers.resize_roi(img, (0, 0, 8, 8), torch.empty(4, 4, 3, dtype=torch.float64), True, cubic, tables)
    assert not helpers.resize_roi(img.short(), (0, 0, 8, 8), out, True, cubic, tables)  # int16 -> uint8
    assert not helpers.resize_roi(img.permute(1, 0, 2), (0, 0, 8, 8), out, True, cubic, tables)
    assert not helpers.resize_roi(img, (0, 0, 0, 8), out, True, cubic, tables)  # empty roi
    assert not helpers.resize_roi(img, (0, 0, 8, 8), out, True, ("nn", "cubic"), tables)  # nn: the spec
    assert not helpers.resize_roi(img, (0, 0, 8, 8), out, True, ("cubic", "bogus"), tables)
    for roi in [(0, 0, 1e-50, 8), (0, 0, float("inf"), 8), (float("nan"), 0, 8, 8), (0, 3e38, 8, 3e38),
                (0, 0, 8, 1e30), (0, 0, -8, 8)]:  # zero in float32, not finite, millions of taps, backwards
        for filters in (cubic, ("lanczos3",) * 2, ("linear",) * 2):
            assert not helpers.resize_roi(img, roi, out, True, filters, tables), roi
            assert not helpers.resize_roi(img, roi, out, False, filters, tables), roi


def _pipe(kind: str):
    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=5)
    def pipe():
        img, _ = fn._test_images()  # conftest's source: uint8 HWC images of varying sizes
        if kind == "rrc":
            return (fn.random_resized_crop(img, size=(60, 80), interp_type=types.INTERP_CUBIC),
                    fn.random_resized_crop(img, size=[33, 47], dtype=types.FLOAT, antialias=False,
                                           interp_type=types.INTERP_LANCZOS3))
        if kind == "dtypes":  # int16, uint16 and float32 images
            rng = np.random.default_rng(3)
            ims = [rng.integers(-32768, 32768, (40 + 7 * i, 50 - 3 * i, 3)) for i in range(6)]
            i16 = fn.external_source(source=lambda: [a.astype(np.int16) for a in ims], layout="HWC")
            u16 = fn.external_source(source=lambda: [(a + 32768).astype(np.uint16) for a in ims], layout="HWC")
            f32 = fn.external_source(source=lambda: [(a / 100.0).astype(np.float32) for a in ims], layout="HWC")
            return (fn.resize(i16, size=(31, 77), interp_type=types.INTERP_LANCZOS3),
                    fn.resize(u16, resize_shorter=fn.random.uniform(range=[20, 60]), interp_type=types.INTERP_CUBIC),
                    fn.random_resized_crop(u16, size=(20, 30), dtype=types.FLOAT),
                    fn.resize_crop_mirror(f32, size=(60, 60), crop=(33, 44), interp_type=types.INTERP_GAUSSIAN))
        if kind == "rcm":
            return (fn.resize_crop_mirror(img, size=(50, 60), crop=(40, 30), crop_pos_x=fn.random.uniform(range=[0, 1]),
                                          interp_type=types.INTERP_CUBIC),
                    fn.resize_crop_mirror(img, resize_shorter=40, crop=(30, 70), mirror=fn.random.coin_flip(),
                                          interp_type=types.INTERP_LANCZOS3, dtype=types.FLOAT),
                    fn.resize_crop_mirror(img, resize_x=33, resize_y=47, crop=(20, 20), crop_pos_y=0.3))
        return (fn.resize(img, resize_shorter=fn.random.uniform(range=[20, 90]), interp_type=types.INTERP_CUBIC),
                fn.resize(img, size=(40, 0), dtype=types.FLOAT, interp_type=types.INTERP_LANCZOS3),
                fn.resize(img, size=(30, 90), min_filter=types.INTERP_GAUSSIAN, mag_filter=types.INTERP_CUBIC),
                fn.resize(img, size=fn.random.uniform(range=[10, 60], shape=2), roi_start=(0.1, 0.2),
                          roi_end=(0.8, 0.7), roi_relative=True, interp_type=types.INTERP_LANCZOS3))
    p = pipe()
    p.build()
    return p


@pytest.mark.parametrize("kind", ["rrc", "resize", "rcm", "dtypes"])
def test_pipelines_give_the_spec_batches(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _need_helper()
    calls = []
    for name in ("resize_roi", "resize_window"):  # count the helper's runs
        monkeypatch.setattr(helpers, name, lambda *a, run=getattr(helpers, name): calls.append(1) or run(*a))
    p = _pipe(kind)
    fast = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    assert len(calls) >= 2 * 6 * {"rrc": 2, "resize": 4, "rcm": 2, "dtypes": 4}[kind]  # rcm: mirrored samples run the spec
    monkeypatch.setattr(helpers.CPU_RESIZE, "lib", None)  # as if it had not built: the spec runs
    monkeypatch.setattr(helpers.CPU_RESIZE, "tried", True)
    p = _pipe(kind)
    assert cpu_image.ResizeSample().supports(p.executor.plan.op(p.graph.outputs[0].node)) is False
    spec = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    assert len(fast) == len(spec)
    for a, b in zip(fast, spec):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_the_dispatch_picks_the_helper_for_its_filters_only() -> None:
    _need_helper()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        img, _ = fn._test_images()
        return (fn.random_resized_crop(img, size=8), fn.random_resized_crop(img, size=8, interp_type=types.INTERP_CUBIC),
                fn.resize(img, size=8, interp_type=types.INTERP_LANCZOS3),
                fn.resize(img, size=8, min_filter=types.INTERP_GAUSSIAN, mag_filter=types.INTERP_TRIANGULAR),
                fn.resize(img, resize_x=8, resize_y=8, interp_type=types.INTERP_NN),
                fn.resize(img, size=8, interp_type=types.INTERP_CUBIC, mag_filter=types.INTERP_NN),
                fn.resize(img, size=8, interp_type=fn.random.choice([0, 1, 3])),
                fn.resize_crop_mirror(img, size=8, crop=(4, 4), interp_type=types.INTERP_LANCZOS3),
                fn.resize_crop_mirror(img, size=8, crop=(4, 4), interp_type=types.INTERP_NN))
    p = pipe()
    p.build()
    ops = [p.executor.plan.op(d.node) for d in p.graph.outputs]
    helper = [_dispatch.sample_runner(op) != op.run_sample for op in ops]
    # int16 out, nn for some axes, a per-sample filter: the spec
    assert helper == [True] * 4 + [False] * 3 + [True, False]
    p.shutdown()


def _photos() -> list[np.ndarray]:
    rng = np.random.default_rng(2024)
    out = []
    for h, w in ((97, 131), (64, 40), (150, 113)):
        y, x = np.mgrid[0:h, 0:w]
        base = (np.sin(x / 7.0) * 90 + np.cos(y / 5.0) * 70 + 128)[..., None] + rng.integers(-40, 41, (h, w, 3))
        out.append(np.clip(base, 0, 255).astype(np.uint8))
    return out


#: case -> (resize's arguments (or `op`'s), sha256[:16] of DALI 2.4's CPU outputs for _photos():
#: each sample's shape, then its bytes), computed once with DALI's CPU backend (device_id=None)
DALI_DIGESTS = {
    "cubic_down": (dict(size=(61, 45), interp_type=types.INTERP_CUBIC), "1b0eccdc66234966"),
    "cubic_up": (dict(size=(163, 201), interp_type=types.INTERP_CUBIC), "325c1e7745143f1c"),
    "lanczos_down": (dict(resize_shorter=33, interp_type=types.INTERP_LANCZOS3), "9f1cc66c455001eb"),
    "lanczos_up_noaa": (dict(size=(120, 210), interp_type=types.INTERP_LANCZOS3, antialias=False), "910bad037c6bc4ec"),
    "cubic_roi": (dict(size=(50, 70), interp_type=types.INTERP_CUBIC, roi_start=(5.5, 7.25), roi_end=(40.5, 36.0)),
                  "5fb6f0a637574e62"),
    "lanczos_roi_rel": (dict(size=(30, 30), interp_type=types.INTERP_LANCZOS3, roi_start=(0.2, 0.1),
                             roi_end=(0.9, 0.6), roi_relative=True), "a981d3bf14e5cdbb"),
    "mixed": (dict(size=(40, 200), min_filter=types.INTERP_LANCZOS3, mag_filter=types.INTERP_CUBIC), "33a5e83e598b3a79"),
    "gaussian": (dict(size=(45, 33), interp_type=types.INTERP_GAUSSIAN), "8fe70b71b857dbb7"),
    "rcm_cubic": (dict(op="resize_crop_mirror", size=(120, 100), crop=(64, 80), crop_pos_x=0.25, crop_pos_y=0.6,
                       interp_type=types.INTERP_CUBIC), "39f6e47eb67ce4b7"),
    "rcm_lanczos_mirror": (dict(op="resize_crop_mirror", resize_shorter=70, crop=(50, 50), mirror=1,
                                interp_type=types.INTERP_LANCZOS3), "9be4345e5cf7f501"),
    "rcm_linear": (dict(op="resize_crop_mirror", size=(90, 90), crop=(60, 70)), "dc79277319c72feb"),
}


@pytest.mark.parametrize("case", sorted(DALI_DIGESTS))
def test_pipelines_give_dali_bits(case: str) -> None:
    """With the helper where it builds (else the spec): DALI 2.4's exact bytes."""
    kwargs, digest = DALI_DIGESTS[case]
    kwargs = dict(kwargs)
    op = getattr(fn, kwargs.pop("op", "resize"))
    data = _photos()

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def pipe():
        return op(fn.external_source(source=lambda: data, layout="HWC"), **kwargs)
    p = pipe()
    p.build()
    out, = p.run()
    h = hashlib.sha256()
    for i in range(3):
        a = np.ascontiguousarray(np.asarray(out.at(i)))
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    p.shutdown()
    assert h.hexdigest()[:16] == digest


def test_the_resize_stand_in_matches_the_spec() -> None:
    """ops.fast.cpu_image.resize (functional.resize's stand-in): 2-D images, views whose pixels
    are not packed (copied first), uint8 memory rows of `row_channels` values, flips declined."""
    _need_helper()
    rng = random.Random(29)
    done = 0
    for _ in range(300):
        h, w, c = rng.randint(1, 40), rng.randint(1, 40), rng.choice([1, 2, 3, 4, 6, 8])
        src = rng.choice([torch.uint8, torch.uint8, torch.int16, torch.float32])
        img = _image(rng, h, w, c, src)
        if rng.random() < 0.3:  # a channel-first image seen as (H, W, C)
            img = img.permute(2, 0, 1).contiguous().permute(1, 2, 0)
        if c == 1 and rng.random() < 0.5:
            img = img[..., 0]
        size = (rng.randint(1, 50), rng.randint(1, 50))
        filters = [rng.choice(KINDS + ["nn"]) for _ in range(3)]
        kw = dict(dtype=rng.choice([None, torch.float32]), row_channels=rng.choice([None, None, 1, 2, 3, 0]))
        if rng.random() < 0.5:
            y0, x0 = rng.uniform(-2, h), rng.uniform(-2, w)
            kw["window"] = ((y0, y0 + rng.uniform(-h, h + 2) or 1.0), (x0, x0 + rng.uniform(0.5, w + 2)))
        elif rng.random() < 0.5:
            rh, rw = rng.randint(1, h), rng.randint(1, w)
            kw["roi"] = (rng.randint(0, h - rh), rng.randint(0, w - rw), rh, rw)
        aa = rng.random() < 0.8
        want = resize(img, size, *filters[:1], aa, *filters[1:], **kw)
        got = cpu_image.resize(img, size, *filters[:1], aa, *filters[1:], **kw)
        if got is None:
            continue
        done += 1
        assert got.is_contiguous() and _same_bits(got, want), (tuple(img.shape), src, size, filters, kw)
    assert done > 100


@pytest.mark.parametrize("kind", ["chw", "sequence", "tensor_resize"])
def test_layouts_through_the_stand_in_give_the_spec_batches(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Channel-first images, sequences and tensor_resize reach the helper through the stand-in."""
    _need_helper()

    def make():
        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5)
        def pipe():
            img, _ = fn._test_images()
            if kind == "chw":
                x = fn.transpose(img, perm=[2, 0, 1])
                return (fn.resize(x, size=(33, 47), interp_type=types.INTERP_CUBIC),
                        fn.random_resized_crop(x, size=(20, 30), interp_type=types.INTERP_LANCZOS3),
                        fn.resize_crop_mirror(x, size=(50, 50), crop=(21, 35), interp_type=types.INTERP_CUBIC))
            if kind == "sequence":
                seq = fn.stack(img, fn.flip(img, horizontal=1), axis=0, axis_name="F")
                return (fn.resize(seq, size=(29, 31), interp_type=types.INTERP_LANCZOS3),
                        fn.resize(seq, resize_shorter=40, interp_type=types.INTERP_GAUSSIAN, dtype=types.FLOAT))
            return (fn.tensor_resize(img, sizes=[37, 23], axes=[0, 1], interp_type=types.INTERP_CUBIC),
                    fn.tensor_resize(fn.cast(img, dtype=types.FLOAT), scales=[0.7, 1.3], axes=[0, 1],
                                     interp_type=types.INTERP_LANCZOS3))
        p = pipe()
        p.build()
        return p
    same_with_and_without(monkeypatch, make, ["resize_roi", "resize_window"], 8, _same_bits)
