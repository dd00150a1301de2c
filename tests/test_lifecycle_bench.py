"""`torch-dali bench` says what it is doing while it runs and what each of its figures measures."""
from __future__ import annotations

import pytest

from torch_dali.cli import main
from torch_dali.sample_data import make_sample_dataset


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> str:
    return make_sample_dataset(tmp_path_factory.mktemp("bench_data"), images_per_class=2)["images"]


def test_bench_shows_progress_per_phase_and_labels_its_figures(images, capsys):
    argv = ["bench", "imagenet_train", "--data", images, "--batches", "3", "--batch-size", "4",
            "--set", "num_threads=2"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    err, out = captured.err, captured.out
    phases = ["building the pipeline", "[1/2] throughput", "[2/2] per-op profile"]
    at = [err.find(p) for p in phases]
    assert all(k >= 0 for k in at) and at == sorted(at), err
    assert err.count("3/3 batches in") == 2  # each phase ends with its batches done
    assert "throughput: " in out and "as a training loop gets it" in out
    assert "per-op profile: " in out and "not how fast the pipeline runs" in out
    assert "without overlap" not in out and "prefetching)" not in out
