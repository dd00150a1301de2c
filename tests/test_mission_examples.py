"""The user's two examples run with only their imports and data paths changed (CPU here)."""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

from torch_dali.sample_data import make_sample_dataset

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "mission"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("sample")
    make_sample_dataset(root, images_per_class=4, seed=0)
    return root


def _host(batch):
    """The batch on the host: on a GPU machine the examples' GPU outputs are TensorListGPUs, whose
    samples (as DALI's) are device tensors."""
    return batch.as_cpu() if hasattr(batch, "as_cpu") else batch


def test_serialization_example_gives_all_zeros(sample, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("RECORDIO_DIR", str(sample))
    g = runpy.run_path(str(EXAMPLES / "serialization.py"))
    assert g["result"] == [0.0] * 16
    images, labels = (_host(b) for b in g["original_pipe_out"])
    assert images.at(0).shape == (3, 224, 224) and images.at(0).dtype == np.float32
    assert labels.at(0).dtype == np.float32
    # the check is not vacuous: the batch has content and differs from another seed's batch
    assert float(np.abs(images.at(0)).sum()) > 0


def _run_python_operators(sample, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("IMAGE_DIR", str(sample / "images"))
    return runpy.run_path(str(EXAMPLES / "python_operators.py"))


def test_python_operators_example(sample, monkeypatch):
    g = _run_python_operators(sample, monkeypatch)
    ims1, ims2 = g["ims1"], g["ims2"]
    assert len(ims2) == 4
    assert len(ims1) == 4 and ims1.at(0).shape == (300, 300, 3) and ims1.at(0).dtype == np.uint8
    _check_circle_swap(g, sample)

    x, y = g["x"], g["y"]
    assert x.at(0).shape == (300, 300, 3) and x.at(0).dtype == np.float32
    assert 0.0 <= x.at(0).min() and x.at(0).max() <= 1.0
    assert y.at(0).dtype == np.float32 and float(y.at(0).max()) <= 1.0


def test_python_ops_same_with_and_without_async(sample, monkeypatch):
    g = _run_python_operators(sample, monkeypatch)
    outs = []
    for asynchronous in (False, True):
        p = g["TorchFuncPipeline"](4, 2, 0, str(sample / "images"))
        p._exec_async = p._exec_pipelined = asynchronous  # the example hard-codes False
        p.build()
        outs.append([p.run() for _ in range(2)])
        p.shutdown()
    for (x0, y0), (x1, y1) in zip(*outs):
        for i in range(4):
            # RandomPerspective inside TorchPythonFunction is seeded per sample: reproducible
            np.testing.assert_array_equal(x0.at(i), x1.at(i))
            np.testing.assert_array_equal(y0.at(i), y1.at(i))
    # and it does draw different parameters for different samples
    assert not np.array_equal(outs[0][0][0].at(0) != 0, outs[0][0][0].at(1) != 0)


def test_sqrt_color_reverses_batch(sample, monkeypatch):
    g = _run_python_operators(sample, monkeypatch)
    p = g["TorchFuncPipeline"](4, 2, 0, str(sample / "images"))
    base = g["CommonPipeline"](4, 2, 0, str(sample / "images"))
    base.define_graph = lambda: base.load()[0]
    p.build()
    base.build()
    _, y = p.run()
    (imgs,) = base.run()
    for i in range(4):
        ref = np.sqrt(imgs.at(3 - i).astype(np.float32) / 255.0)
        np.testing.assert_allclose(y.at(i), ref, rtol=0, atol=1e-6)


def test_python_operators_gpu_variant_runs_anywhere(sample, monkeypatch):
    """The variant with the Python ops on device="gpu" (CuPy / CUDA tensors on a GPU machine)
    runs here through the CPU fallback and gives the same circle swap."""
    monkeypatch.setenv("IMAGE_DIR", str(sample / "images"))
    g = runpy.run_path(str(EXAMPLES / "python_operators_gpu.py"))
    _check_circle_swap(g, sample)


def _check_circle_swap(g, sample):
    """edit_images swapped the outside of a centred circle between the example's two inputs."""
    pipe = g["PythonFuncPipeline"](4, 2, 0, str(sample / "images"))
    base = g["CommonPipeline"](4, 2, 0, str(sample / "images"))
    base.define_graph = base.load
    pipe.build()
    base.build()
    r1, r2 = pipe.run()
    a, b = base.run()
    r1, r2, a, b = (_host(x) for x in (r1, r2, a, b))
    e1, e2 = g["edit_images"](np.asarray(a.at(0)), np.asarray(b.at(0)))
    np.testing.assert_array_equal(np.asarray(r1.at(0)), e1)
    np.testing.assert_array_equal(np.asarray(r2.at(0)), e2)
    pipe.shutdown()
    base.shutdown()
