"""torch.utils.data.DataLoader's arguments on torch_dali.DataLoader: each one a loop passes is
either done (shuffle, num_workers, prefetch_factor, timeout, collate_fn, ...) or refused with
what to use instead; `loader.dataset` is indexable like a torch data set."""
from __future__ import annotations

import os
import time

import pytest
import torch
from torch.utils.data import default_collate

import torch_dali
from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.sample_data import make_image_folder


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("targs")
    make_image_folder(d, images_per_class=2, seed=2, mean_hw=(24, 32))  # 8 classes, 16 files
    return str(d)


def _pipe(root, shuffle=True, resize=True):
    @pipeline_def(num_threads=2, seed=4)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=shuffle, name="Reader")
        images = fn.decoders.image(jpegs)
        if resize:
            images = fn.resize(images, resize_x=8, resize_y=8)
        return images, labels
    return p


def _labels(loader):
    return [v for _, y in loader for v in y.tolist()]


def test_shuffle_sets_the_readers_random_shuffle(root):
    in_order = torch_dali.DataLoader(_pipe(root, shuffle=True), 4, shuffle=False, device="cpu")
    assert _labels(in_order) == sorted(_labels(in_order)) == [k // 2 for k in range(16)]
    shuffled = torch_dali.DataLoader(_pipe(root, shuffle=False), batch_size=4, shuffle=True, device="cpu")
    got = _labels(shuffled)
    assert sorted(got) == [k // 2 for k in range(16)] and got != sorted(got)


def test_num_workers_prefetch_factor_and_accepted_flags(root):
    dl = torch_dali.DataLoader(_pipe(root), batch_size=4, num_workers=3, prefetch_factor=5,
                               persistent_workers=True, in_order=False, device="cpu")
    assert dl.pipe.num_threads == 3 and dl.pipe.prefetch_queue_depth == 5
    assert torch_dali.DataLoader(_pipe(root), batch_size=4, num_workers=0, device="cpu").pipe.num_threads == 1
    with pytest.raises(ArgumentError, match="num_workers"):
        torch_dali.DataLoader(_pipe(root), batch_size=4, num_workers=2, num_threads=3, device="cpu")
    with pytest.raises(ArgumentError, match="prefetch_factor"):
        torch_dali.DataLoader(_pipe(root), batch_size=4, prefetch_factor=0, device="cpu")


def test_arguments_without_a_meaning_here_name_the_equivalent(root):
    cases = [({"worker_init_fn": lambda i: None}, "no worker processes.*num_threads"),
             ({"multiprocessing_context": "fork"}, "no worker processes"),
             ({"batch_sampler": [[0, 1]]}, "batch_size= and drop_last="),
             ({"pin_memory_device": "cuda"}, "device="),
             ({"timeout": -1}, "timeout")]
    for kwargs, match in cases:
        with pytest.raises(ArgumentError, match=match):
            torch_dali.DataLoader(_pipe(root), batch_size=4, device="cpu", **kwargs)


def _sleepy(labels):
    time.sleep(1.5)
    return labels


def test_timeout_raises_naming_the_running_op(root):
    @pipeline_def(num_threads=1, seed=1)
    def slow():
        _, labels = fn.readers.file(file_root=root, name="Reader")
        return (fn.python_function(labels, function=_sleepy, batch_processing=True, name="Sleepy"),)
    dl = torch_dali.DataLoader(slow, batch_size=4, timeout=0.3, device="cpu")
    with pytest.raises(RuntimeError, match=r"no batch within timeout=0.3 s.*PythonFunction 'Sleepy'") as e:
        next(iter(dl))
    assert isinstance(e.value, PipelineError)
    dl.shutdown()


def test_collate_fn_gets_a_list_of_samples(root):
    plain = torch_dali.DataLoader(_pipe(root), batch_size=5, device="cpu")
    same = torch_dali.DataLoader(_pipe(root), batch_size=5, device="cpu", collate_fn=default_collate)
    for (x0, y0), (x1, y1) in zip(plain, same):
        assert torch.equal(x0, x1) and torch.equal(y0, y1) and y1.dtype == torch.int64
    seen = []

    def count(samples):
        seen.append(len(samples))
        assert all(isinstance(s, dict) and set(s) == {"image", "label"} for s in samples)
        return samples
    named = torch_dali.DataLoader(_pipe(root), batch_size=5, device="cpu", collate_fn=count,
                                  output_map=["image", "label"])
    list(named)
    assert seen == [5, 5, 5, 1]


def test_collate_fn_batches_samples_of_different_sizes(root):
    def pad(samples):
        h = max(img.shape[0] for img, _ in samples)
        w = max(img.shape[1] for img, _ in samples)
        out = torch.zeros(len(samples), h, w, 3, dtype=torch.uint8)
        for k, (img, _) in enumerate(samples):
            out[k, :img.shape[0], :img.shape[1]] = img
        return out, torch.stack([label for _, label in samples])
    dl = torch_dali.DataLoader(_pipe(root, resize=False), batch_size=4, device="cpu", collate_fn=pad)
    x, y = next(iter(dl))
    assert x.shape[0] == 4 and y.shape == (4,) and y.dtype == torch.int64
    with pytest.raises(ArgumentError, match="different shapes"):  # no collate_fn: said so
        next(iter(torch_dali.DataLoader(_pipe(root, resize=False), batch_size=4, device="cpu")))


def test_dataset_is_indexable_with_classes(root):
    dl = torch_dali.DataLoader(_pipe(root), batch_size=4, rank=1, world_size=2, device="cpu")
    ds = dl.dataset
    classes = sorted(os.listdir(root))
    assert len(ds) == 16 and ds.classes == classes and ds.class_to_idx[classes[3]] == 3
    data, label = ds[5]
    path = ds.source(5)
    assert os.path.dirname(path) == os.path.join(root, classes[label]) and label == 2
    with open(path, "rb") as f:
        assert data.dtype == torch.uint8 and bytes(data.numpy()) == f.read()
    assert ds.source(-1) == ds.source(15)
    with pytest.raises(IndexError):
        ds[16]
    files = [ds.source(i) for i in range(4)]

    @pipeline_def(num_threads=1, seed=1)
    def listed():
        return fn.readers.file(files=files, labels=[7, 8, 9, 10], name="Reader")
    ds2 = torch_dali.DataLoader(listed, batch_size=2, device="cpu").dataset
    assert ds2[2][1] == 9 and not hasattr(ds2, "classes")


def test_the_pipeline_seams_the_loader_uses_check_their_arguments(root):
    from torch_dali.errors import GraphError
    pipe = _pipe(root)(batch_size=4)
    with pytest.raises(ArgumentError, match="unknown argument.*shard"):
        pipe.set_node_args("Reader", shard=1)
    with pytest.raises(GraphError, match="no operator named 'Nope'"):
        pipe.set_node_args("Nope", shard_id=0)
    pipe.set_node_args("Reader", seed=5, random_shuffle=False)
    pipe.build()
    assert pipe.built and pipe.reader_names() == ["Reader"] and pipe.reader().epoch_order(0) == list(range(16))
    with pytest.raises(GraphError, match="already built"):
        pipe.set_node_args("Reader", shard_id=0)
    pipe.run()
    assert pipe.last_batch_info("Reader") == {"real": 4, "ended": False}
    pipe.shutdown()
