"""Fused GPU paths against the same ops run one after the other (skipped without CUDA):
resize -> crop_mirror_normalize as one kernel, the mixed random-crop decoder's crops as views."""
from __future__ import annotations

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
