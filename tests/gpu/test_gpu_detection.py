"""Detection ops on CUDA tensors give the CPU's results: bb_flip and box_encoder (the ops DALI also
offers on the GPU) bit for bit, and the SSD example's GPU variant yields the CPU variant's boxes and
labels. The functional kernels are checked directly too (one batched call on the device).

Run on the GPU machine: `python3 -m pytest -q tests/gpu`."""
from __future__ import annotations

import functools

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.functional import detection as K

try:
    from tests.reference import detection_cases as C
except ImportError:
    from reference import detection_cases as C  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _run(graph, inputs, batch, device):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=0, seed=5)
    def pipe():
        srcs = [fn.external_source(source=functools.partial(lambda s: [torch.from_numpy(x) for x in s], s),
                                    batch=True)
                for s in inputs]
        if device == "gpu":
            srcs = [s.gpu() for s in srcs]
        outs = graph(*srcs)
        return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)

    p = pipe()
    p.build()
    return [[t.cpu().numpy() if isinstance(t, torch.Tensor) else np.array(t) for t in
             (tl.as_cpu().at(i) for i in range(len(tl)))] for tl in p.run()]


@pytest.mark.parametrize("i", range(len(C.FLIP_CASES)))
def test_bb_flip_gpu_matches_cpu(i):
    args = C.FLIP_CASES[i]
    samples = C.BOX_SAMPLES if args["ltrb"] else C.XYWH_SAMPLES
    cpu = _run(lambda b: fn.bb_flip(b, **args), [samples], len(samples), "cpu")[0]
    gpu = _run(lambda b: fn.bb_flip(b, **args, device="gpu"), [samples], len(samples), "gpu")[0]
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(c, g)


@pytest.mark.parametrize("i", range(len(C.ENCODER_CASES)))
def test_box_encoder_gpu_matches_cpu(i):
    args = C.ENCODER_CASES[i]
    graph = (lambda dev: lambda b, la: tuple(fn.box_encoder(b, la, anchors=C.anchors(), device=dev, **args)))
    cpu = _run(graph("cpu"), [C.BOX_SAMPLES, C.ENCODER_LABELS], len(C.BOX_SAMPLES), "cpu")
    gpu = _run(graph("gpu"), [C.BOX_SAMPLES, C.ENCODER_LABELS], len(C.BOX_SAMPLES), "gpu")
    for k in range(2):
        for c, g in zip(cpu[k], gpu[k]):
            assert c.dtype == g.dtype and c.shape == g.shape
            if c.dtype == np.float32:  # the same float32 operations; CUDA's division may round differently
                np.testing.assert_allclose(c, g, rtol=1e-6, atol=1e-6)
            else:
                np.testing.assert_array_equal(c, g)


def test_box_encoder_kernel_batched_on_device():
    anchors = torch.tensor(C.anchors(), dtype=torch.float32).reshape(-1, 4)
    b, lab, counts = K.pad_boxes([torch.from_numpy(x) for x in C.BOX_SAMPLES],
                                 [torch.from_numpy(x) for x in C.ENCODER_LABELS], torch.device("cpu"))
    want = K.box_encoder_batch(b, lab, counts, anchors, 0.5, True, 1.0, [0.0] * 4, [0.1, 0.1, 0.2, 0.2])
    got = K.box_encoder_batch(b.cuda(), lab.cuda(), counts, anchors.cuda(), 0.5, True, 1.0, [0.0] * 4,
                              [0.1, 0.1, 0.2, 0.2])
    assert got[0].is_cuda and got[1].is_cuda
    torch.testing.assert_close(got[0].cpu(), want[0], rtol=1e-6, atol=1e-6)
    assert torch.equal(got[1].cpu(), want[1])


def test_ssd_example_gpu_matches_cpu(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "ssd_example", Path(__file__).resolve().parents[2] / "examples" / "ssd_pipeline.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    images, ann = C.write_coco_sample(tmp_path)
    outs = {}
    for dev in ("cpu", "gpu"):
        pipe = ex.ssd_pipeline(str(images), str(ann), ex.default_boxes(), random_crop=True, flip="random",
                               device=dev, batch_size=2, num_threads=2, device_id=0, seed=11)
        pipe.build()
        outs[dev] = [[tl.as_cpu().as_tensor().clone() for tl in pipe.run()] for _ in range(3)]
    for c, g in zip(outs["cpu"], outs["gpu"]):
        assert torch.equal(c[2], g[2])  # labels
        torch.testing.assert_close(c[1], g[1], rtol=1e-5, atol=1e-5)  # encoded boxes
        assert c[0].shape == g[0].shape  # images (decoders differ: nvJPEG vs CPU)
