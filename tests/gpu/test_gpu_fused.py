"""Fused GPU paths against the same ops run one after the other (skipped without CUDA):
resize -> crop_mirror_normalize as one kernel, flip -> crop_mirror_normalize folded, the mixed random-crop decoder's crops as views."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.sample_data import make_image_folder

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("fused")
    make_image_folder(d, images_per_class=5, seed=4, mean_hw=(180, 240))
    return str(d)


def _pipe(root, kind, device_id=0, dtype=types.FLOAT, layout="CHW", interp=types.INTERP_LINEAR):
    dev = "mixed" if device_id is not None else "cpu"

    @pipeline_def(batch_size=12, num_threads=3, device_id=device_id, seed=5)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        if kind == "fused":  # DALI's ResNet-50 recipe
            images = fn.decoders.image_random_crop(jpegs, device=dev)
            images = fn.resize(images, resize_x=96, resize_y=96, interp_type=interp)
            return fn.crop_mirror_normalize(images, dtype=dtype, output_layout=layout, mean=MEAN, std=STD,
                                            mirror=fn.random.coin_flip()), labels
        images = fn.decoders.image(jpegs, device=dev)
        if kind == "val":
            images = fn.resize(images, resize_shorter=120, interp_type=interp)
            return fn.crop_mirror_normalize(images, crop=(100, 100), dtype=dtype, output_layout=layout,
                                            mean=MEAN, std=STD), labels
        # the Serialization example: a random size and position per sample
        images = fn.resize(images, resize_shorter=fn.random.uniform(range=(100, 160)), interp_type=interp)
        return fn.crop_mirror_normalize(images, crop=(96, 96), crop_pos_x=fn.random.uniform(range=(0, 1)),
                                        crop_pos_y=fn.random.uniform(range=(0, 1)), dtype=dtype,
                                        output_layout=layout, mean=MEAN, std=STD), labels
    return p()


def _run(pipe, n=3):
    pipe.build()
    fused = any(s.fused is not None for s in pipe.executor.plan.steps)
    out = [[t.as_tensor().cpu().clone() for t in pipe.run()] for _ in range(n)]
    pipe.shutdown()
    return out, fused


@pytest.mark.parametrize("kind", ["fused", "val", "seed"])
@pytest.mark.parametrize("dtype,layout", [(types.FLOAT, "CHW"), (types.FLOAT16, "HWC"), (types.UINT8, "CHW")])
def test_fused_kernel_equals_resize_then_cmn(root, kind, dtype, layout, monkeypatch):
    a, fused = _run(_pipe(root, kind, dtype=dtype, layout=layout))
    assert fused, "resize -> crop_mirror_normalize was not fused"
    monkeypatch.setenv("TORCH_DALI_FUSION", "0")
    b, fused_b = _run(_pipe(root, kind, dtype=dtype, layout=layout))
    assert not fused_b
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert u.shape == v.shape and torch.equal(u, v)


def _flip_pipe(root, kind):
    """Decoded images from a fixed source (no decoder: its hardware window decode may differ in a
    few values between two pipelines of one process), then flip -> crop_mirror_normalize."""
    g = torch.Generator().manual_seed(11)
    batches = [[torch.randint(0, 256, (int(torch.randint(60, 120, (1,), generator=g)),
                                       int(torch.randint(70, 130, (1,), generator=g)), 3),
                              generator=g, dtype=torch.uint8) for _ in range(12)] for _ in range(3)]

    @pipeline_def(batch_size=12, num_threads=3, device_id=0, seed=5)
    def p():
        images = fn.external_source(source=batches, cycle=True, device="gpu", layout="HWC")
        if kind == "rrc":  # DALI's flip example: random_resized_crop, flip, normalize with a random mirror
            images = fn.random_resized_crop(images, size=[64, 64])
            images = fn.flip(images, horizontal=1)
            return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                            mirror=fn.random.coin_flip())
        if kind == "crop":  # images of many sizes, per-sample flips, random crop positions
            images = fn.flip(images, horizontal=fn.random.coin_flip())
            return fn.crop_mirror_normalize(images, crop=(40, 56), crop_pos_x=fn.random.uniform(range=(0, 1)),
                                            crop_pos_y=fn.random.uniform(range=(0, 1)), dtype=types.FLOAT16,
                                            output_layout="HWC", mean=MEAN, std=STD, mirror=fn.random.coin_flip())
        # a vertical flip: the kernel declines it, the two ops run
        images = fn.flip(images, horizontal=1, vertical=fn.random.coin_flip())
        return fn.crop_mirror_normalize(images, crop=(40, 56), dtype=types.UINT8, mean=MEAN, std=STD)
    return p()


@pytest.mark.parametrize("kind", ["rrc", "crop", "vertical"])
def test_flip_folded_into_cmn_equals_the_two_ops(root, kind, monkeypatch):
    a, fused = _run(_flip_pipe(root, kind))
    assert fused, "flip -> crop_mirror_normalize was not fused"
    monkeypatch.setenv("TORCH_DALI_FUSION", "0")
    b, fused_b = _run(_flip_pipe(root, kind))
    assert not fused_b
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert u.shape == v.shape and torch.equal(u, v)


@pytest.mark.parametrize("dense", [True, False])
def test_flip_fold_kernel_equals_flip_then_cmn(dense):
    """The kernel alone: crop_mirror_normalize of flipped images equals it on the images themselves
    with mirrored windows and inverted mirror flags (whole and inner windows, per-sample flags)."""
    from torch_dali.ops.fast import cuda_image as cuda
    from torch_dali.ops.fast.windows import mirrored_windows
    g = torch.Generator().manual_seed(2)
    mean, std = torch.tensor(MEAN), torch.tensor(STD)
    for trial in range(40):
        n = 6
        if dense:
            imgs = list(torch.randint(0, 256, (n, 64, 72, 3), generator=g, dtype=torch.uint8).cuda().unbind(0))
        else:
            imgs = [torch.randint(0, 256, (int(torch.randint(40, 90, (1,), generator=g)),
                                           int(torch.randint(56, 90, (1,), generator=g)), 3),
                                  generator=g, dtype=torch.uint8).cuda() for _ in range(n)]
        in_hw = np.array([im.shape[:2] for im in imgs], dtype=np.int64)
        if dense and trial % 2:
            wins = np.concatenate([np.zeros((n, 2), np.int64), in_hw], 1)
        else:
            wins = np.array([[int(torch.randint(0, int(s[0]) - 39, (1,), generator=g)),
                              int(torch.randint(0, int(s[1]) - 55, (1,), generator=g)), 40, 56] for s in in_hw])
        flipped = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)]
        mirror = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)]
        two_ops = cuda.crop_mirror_normalize([im.flip(1) if f else im for im, f in zip(imgs, flipped)], wins,
                                             mirror, mean, std, torch.float32, True)
        folded = cuda.crop_mirror_normalize(imgs, mirrored_windows(wins, in_hw, flipped),
                                            [m != f for m, f in zip(mirror, flipped)], mean, std, torch.float32, True)
        assert torch.equal(two_ops, folded), trial


@pytest.mark.parametrize("kind", ["fused", "val", "seed"])
def test_fused_nearest_equals_unfused(root, kind, monkeypatch):
    a, _ = _run(_pipe(root, kind, interp=types.INTERP_NN))
    monkeypatch.setenv("TORCH_DALI_FUSION", "0")
    b, _ = _run(_pipe(root, kind, interp=types.INTERP_NN))
    assert all(torch.equal(u, v) for x, y in zip(a, b) for u, v in zip(x, y))


@pytest.mark.parametrize("kind", ["fused", "val", "seed"])
def test_gpu_pipelines_match_cpu(root, kind):
    """Same seed, same labels and crops on the GPU and the CPU (pixels differ by GPU chroma
    upsampling only)."""
    g, _ = _run(_pipe(root, kind, 0))
    c, _ = _run(_pipe(root, kind, None))
    for (gi, gl), (ci, cl) in zip(g, c):
        assert torch.equal(gl, cl)
        assert gi.shape == ci.shape
        assert (gi - ci).abs().mean() < 0.05


def test_resize_to_one_size_is_dense_and_equals_per_sample_kernel(root):
    from torch_dali.ops.fast import cuda_image as cb
    imgs = [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, device="cuda")
            for h, w in [(50, 70), (33, 91), (120, 64)]]
    dense = cb.resize_dense(imgs, (40, 52), True, "linear")
    each = cb.resize(imgs, [(40, 52)] * 3, True, "linear")
    assert torch.equal(dense, torch.stack(each))
    views = [im[3:30, 5:50] for im in imgs]  # strided crops read in place
    assert torch.equal(cb.resize_dense(views, (20, 20), True, "linear"),
                       torch.stack(cb.resize([v.contiguous() for v in views], [(20, 20)] * 3, True, "linear")))


def _unfused(root, size=96, area=(0.08, 1.0)):
    @pipeline_def(batch_size=12, num_threads=3, device_id=0, seed=7)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.random_resized_crop(images, size=[size, size], random_area=area)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                        mirror=fn.random.coin_flip()), labels
    return p()


@pytest.mark.parametrize("size,area", [(96, (0.08, 1.0)), (224, (0.02, 0.1)), (40, (0.5, 1.0))])
def test_decoding_only_what_random_resized_crop_reads_keeps_the_crops(root, size, area, monkeypatch):
    """decoders.image (mixed) feeding only random_resized_crop decodes each window plus the
    filter's reach (TensorList.regions), from the 16-pixel block grid; the kernel reads it in the
    whole image's coordinates (bit for bit: test_region_kernel_reads_parts_as_wholes...). The
    hardware decoder's window decode itself differs from its whole-image decode in a few values of
    the first batch (every image on the hardware engines; H200, nvJPEG 13: 141 of 331776 values by
    up to 4 levels of 255; later batches: none), so: the same crops, those values within a few
    levels."""
    from torch_dali.ops.fast import image_kernels as K
    seen = []
    orig = K.RandomResizedCropKernel.run

    def spy(self, op, ctx, inputs, args):
        seen.append(inputs[0].regions)
        return orig(self, op, ctx, inputs, args)
    monkeypatch.setattr(K.RandomResizedCropKernel, "run", spy)
    a, _ = _run(_unfused(root, size, area), n=4)
    assert seen and all(r is not None for r in seen), "the decoder decoded whole images"
    assert any((r[:, :2] > 0).any() for r in seen), "no image was cut"
    seen.clear()
    monkeypatch.setenv("TORCH_DALI_ROI_DECODE", "0")
    b, _ = _run(_unfused(root, size, area), n=4)
    assert seen and all(r is None for r in seen)
    for x, y in zip(a, b):
        img, lab = (x[0], y[0]), (x[1], y[1])
        assert torch.equal(*lab)
        assert img[0].shape == img[1].shape
        d = (img[0].float() - img[1].float()).abs() * torch.tensor(STD).view(1, 3, 1, 1)  # levels of 255
        print(f"region decode vs whole: max {float(d.max()):.2f} levels, {int((d > 0.5).sum())} of {d.numel()}")
        assert float(d.max()) <= 8 and int((d > 0.5).sum()) <= 0.002 * d.numel(), (float(d.max()), int((d > 0.5).sum()))


def test_region_kernel_reads_parts_as_wholes_and_refuses_short_parts():
    from torch_dali.functional.crop_window import reading_regions
    from torch_dali.ops.fast import cuda_image as cuda
    g = torch.Generator().manual_seed(3)
    imgs = [torch.randint(0, 256, (int(h), int(w), 3), generator=g, dtype=torch.uint8).cuda()
            for h, w in [(300, 400), (64, 50), (500, 333), (224, 224)]]
    sizes = torch.tensor([im.shape[:2] for im in imgs]).numpy()
    wins = torch.tensor([[10, 20, 200, 150], [0, 0, 64, 50], [400, 300, 100, 33], [100, 7, 9, 11]]).numpy()
    for out in [(224, 224), (32, 48)]:
        whole = cuda.resized_crops(imgs, wins, out, True)
        reg = reading_regions(wins, sizes, out)
        parts = [im[y:y + h, x:x + w].contiguous() for im, (y, x, h, w) in zip(imgs, reg.tolist())]
        full = reg.copy()
        full[:, 2:] = sizes
        assert torch.equal(cuda.resized_crops(parts, wins, out, True, full), whole)
    short = [im[12:, :] for im in imgs]  # taps above row 12 are missing
    full = torch.tensor([[12, 0, *s] for s in sizes.tolist()]).numpy()
    with pytest.raises(RuntimeError, match="reads pixels outside"):
        cuda.resized_crops(short, np.tile([[0, 0, 50, 50]], (4, 1)), (224, 224), True, full)


@pytest.mark.parametrize("horizontal", ["all", "per_sample"])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_horizontal_flip_kernel_equals_the_spec(horizontal, channels, monkeypatch):
    """fn.flip of a dense uint8 HWC batch on CUDA runs crop_mirror_normalize's kernel as a mirror
    (no torch kernel, so no torch CUDA module is loaded for it): the same bytes as the spec's
    torch.flip; a vertical flag sends the batch to the spec."""
    from torch_dali.functional import crop as C
    from torch_dali.ops.fast import image_kernels as K
    used = []
    orig = K.HorizontalFlipKernel.run

    def spy(self, *a, **kw):
        used.append(True)
        return orig(self, *a, **kw)
    monkeypatch.setattr(K.HorizontalFlipKernel, "run", spy)
    g = torch.Generator().manual_seed(1)
    batch = torch.randint(0, 256, (6, 37, 53, channels), generator=g, dtype=torch.uint8)
    flags = [1] * 6 if horizontal == "all" else [1, 0, 1, 1, 0, 0]

    @pipeline_def(batch_size=6, num_threads=1, device_id=0, seed=1)
    def p(vertical):
        x = fn.external_source(source=lambda: batch, batch=True, layout="HWC", device="gpu")
        h = fn.external_source(source=lambda: [np.int32(f) for f in flags], batch=True)
        return fn.flip(x, horizontal=h, vertical=vertical)
    for vertical in (0, 1):
        used.clear()
        pipe = p(vertical)
        pipe.build()
        out = pipe.run()[0].as_tensor().cpu()
        pipe.shutdown()  # the batches prefetched ahead of run() are made by now
        want = C.flip_batch(batch, [bool(f) for f in flags], [bool(vertical)] * 6)
        assert torch.equal(out, want)
        assert bool(used) == (not vertical), used  # a vertical flag sends every batch to the spec
