"""Whole pipelines on CUDA against the same pipelines on the CPU (skipped without CUDA).

Run on the GPU machine: `python3 -m pytest -q tests/gpu`.
"""
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
    d = tmp_path_factory.mktemp("gpu")
    make_image_folder(d, images_per_class=4, seed=2, mean_hw=(200, 260))
    return str(d)


def _train(root, device_id, flip="mirror", **kw):
    gpu = device_id is not None

    @pipeline_def(batch_size=16, num_threads=4, device_id=device_id, seed=21, **kw)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
        images = fn.random_resized_crop(images, size=(64, 64))
        coin = fn.random.coin_flip()
        if flip == "none":
            return fn.crop_mirror_normalize(images, mean=MEAN, std=STD), labels
        if flip == "builtin":
            images = fn.flip(images, horizontal=coin)
            return fn.crop_mirror_normalize(images, mean=MEAN, std=STD), labels
        if flip == "python":
            images = fn.torch_python_function(images, function=_hflip)
            return fn.crop_mirror_normalize(images, mean=MEAN, std=STD), labels
        return fn.crop_mirror_normalize(images, mirror=coin, mean=MEAN, std=STD), labels
    return p()


def _hflip(image):
    return image.flip(1)


def _run(pipe, n=3):
    pipe.build()
    out = [[t.as_tensor().cpu().clone() for t in pipe.run()] for _ in range(n)]
    pipe.shutdown()
    return out


def test_gpu_matches_cpu_same_crops(root):
    g, c = _run(_train(root, 0)), _run(_train(root, None))
    for (xg, yg), (xc, yc) in zip(g, c):
        assert torch.equal(yg, yc)  # same samples in the same order
        d = (xg - xc).abs()
        # GPU JPEG decoding rounds chroma differently: about one 8-bit level after normalizing
        assert float(d.mean()) < 0.02 and float(d.max()) < 0.5


def test_gpu_outputs_are_dense_cuda_and_stream_safe(root):
    pipe = _train(root, 0)
    pipe.build()
    x, y = pipe.run()
    t = x.as_tensor()
    assert t.is_cuda and t.shape == (16, 3, 64, 64) and t.dtype == torch.float32
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # read on another stream after waiting on the consumer's
        s.wait_stream(torch.cuda.current_stream())
        assert torch.isfinite(t).all()
    pipe.shutdown()


def test_staged_executor_is_bit_identical_on_gpu(root):
    a = _run(_train(root, 0, prefetch_queue_depth=3))
    b = _run(_train(root, 0, exec_async=False, exec_pipelined=False))
    for (xa, ya), (xb, yb) in zip(a, b):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_python_flip_equals_builtin_flip(root):
    a = _run(_train(root, 0, flip="builtin"))
    p = _run(_train(root, 0, flip="python"))
    b = _run(_train(root, 0, flip="none"))
    for (xa, _), (xp, _), (xb, _) in zip(a, p, b):
        assert torch.equal(xp, xb.flip(3))  # the Python op flips every sample
        assert xa.shape == xp.shape


def test_cupy_python_function_on_gpu(root):
    cupy = pytest.importorskip("cupy")

    def invert(image):
        return 255 - image

    @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=1)
    def p():
        jpegs, _ = fn.readers.file(file_root=root)
        images = fn.decoders.image(jpegs, device="mixed")
        return images, fn.python_function(images, function=invert, device="gpu")

    pipe = p()
    pipe.build()
    a, b = pipe.run()
    for i in range(4):
        assert torch.equal(255 - a[i], b[i])
    assert isinstance(cupy.asarray(b[0]), cupy.ndarray)
    pipe.shutdown()


def test_serialized_gpu_pipeline_round_trip(root):
    from torch_dali.pipeline import Pipeline
    pipe = _train(root, 0)
    text = pipe.serialize()
    a = _run(pipe)
    b = _run(Pipeline.deserialize(serialized_pipeline=text))
    for (xa, ya), (xb, yb) in zip(a, b):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_types_kept(root):
    pipe = _train(root, 0)
    pipe.build()
    x, y = pipe.run()
    assert y.as_tensor().dtype == torch.int32 and x.layout() == "CHW"
    assert types.to_torch_dtype(types.FLOAT) == x.as_tensor().dtype
    pipe.shutdown()
    assert np.isfinite(x.as_cpu().as_array()).all()


@pytest.mark.parametrize("device,data", [("gpu", "numpy"), ("cpu", "cuda")])
def test_no_copy_external_source_refuses_data_on_the_other_device(device, data):
    """As DALI: no_copy=True promises the data is used where it lies, so data on the other device
    (which would have to be copied) is an error; on the same device it runs."""
    host = [np.full((2, 3), i, np.float32) for i in range(4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def pipe():
        return fn.external_source(name="x", device=device, no_copy=True)

    p = pipe()
    p.build()
    p.feed_input("x", host if data == "numpy" else [torch.from_numpy(h).cuda() for h in host])
    want = "CPU input for GPU operator" if device == "gpu" else "GPU input for CPU operator"
    with pytest.raises(RuntimeError, match=want):
        p.run()
    p = pipe()
    p.build()
    p.feed_input("x", host if device == "cpu" else [torch.from_numpy(h).cuda() for h in host])
    out, = p.run()
    assert np.asarray(out.as_cpu().at(3)).tolist() == [[3.0] * 3] * 2


def test_a_device_batchs_at_gives_a_tensorgpu():
    """DALI's `TensorListGPU.at(i)` is a TensorGPU; its tests call `.as_cpu()` on it."""
    from torch_dali.backend import TensorGPU

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        return fn.external_source(source=lambda: [np.arange(6, dtype=np.uint8).reshape(2, 3)] * 2,
                                  device="gpu", layout="HW")

    p = pipe()
    p.build()
    out, = p.run()
    s = out.at(1)
    assert isinstance(s, TensorGPU) and s.is_cuda
    assert np.array(s.as_cpu()).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_a_gpu_external_source_fed_a_short_batch_sets_the_batch_size():
    """The GPU external source runs in the first stage (on the pipeline's stream), so the random
    draws there make as many samples as were fed, and its data reach the GPU ops intact."""
    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def pipe():
        x = fn.external_source(name="es", device="gpu")
        return x * 2, fn.random.uniform(range=(0, 1))

    p = pipe()
    p.build()
    for n in (4, 3, 1, 4):
        fed = [np.full((64, 64), i, np.int32) for i in range(n)]
        p.feed_input("es", fed)
        x, u = p.run()
        assert (len(x), len(u)) == (n, n)
        x = x.as_cpu()
        for i in range(n):
            np.testing.assert_array_equal(np.asarray(x.at(i)), fed[i] * 2)


def test_default_device_id_becomes_the_current_device_when_the_graph_has_gpu_ops():
    @pipeline_def(batch_size=1, num_threads=1)
    def gpu():
        return types.Constant(42, device="gpu")

    p = gpu()
    assert p.device_id is None
    out, = p.run()
    assert p.device_id == torch.cuda.current_device()
    assert int(np.array(out.as_cpu()[0])) == 42


def test_a_device_id_past_the_devices_is_refused():
    @pipeline_def(batch_size=1, num_threads=1, device_id=torch.cuda.device_count())
    def gpu():
        return types.Constant(42, device="gpu")

    with pytest.raises(Exception, match="device_id .* is invalid"):
        gpu().build()
