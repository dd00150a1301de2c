"""DataLoader.state_dict()/load_state_dict() at epoch boundaries, and set_epoch() after a resume:
the resumed loop sees exactly the batches (count and contents) an uninterrupted loop sees."""
from __future__ import annotations

import pytest
import torch

import torch_dali
from torch_dali import fn, pipeline_def
from torch_dali.sample_data import make_image_folder


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    return [p for p, _ in make_image_folder(root, images_per_class=2, seed=3, mean_hw=(24, 32))]  # 16 files


def _loader(files, **kw):
    @pipeline_def(num_threads=2, seed=11)
    def p():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                        name="Reader")
        images = fn.resize(fn.decoders.image(jpegs), resize_x=8, resize_y=8)
        return fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=[128.0], std=[64.0]), labels
    return torch_dali.DataLoader(p, batch_size=5, device="cpu", prefetch_queue_depth=3, **kw)  # 4 batches


def _epoch(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def _same(a, b):
    assert len(a) == len(b), f"{len(a)} batches vs {len(b)}"
    for (x0, y0), (x1, y1) in zip(a, b):
        assert torch.equal(y0, y1) and torch.equal(x0, x1)


@pytest.fixture(scope="module")
def reference(files):
    """Three epochs of an uninterrupted loop."""
    dl = _loader(files)
    return [_epoch(dl) for _ in range(3)]


def test_a_state_saved_at_an_epochs_end_resumes_with_the_whole_next_epoch(files, reference):
    dl = _loader(files)
    _same(_epoch(dl), reference[0])
    state = dl.state_dict()
    resumed = _loader(files)
    resumed.load_state_dict(state)
    _same(_epoch(resumed), reference[1])  # 4 batches, not 0
    _same(_epoch(resumed), reference[2])


def test_a_state_saved_after_the_last_batch_inside_the_loop_resumes_the_same(files, reference):
    dl = _loader(files)
    it = iter(dl)
    for _ in range(len(dl)):
        next(it)
    state = dl.state_dict()  # the loop body of the last batch: the epoch has ended
    resumed = _loader(files)
    resumed.load_state_dict(state)
    _same(_epoch(resumed), reference[1])


def test_set_epoch_after_load_state_dict(files, reference):
    dl = _loader(files)
    _epoch(dl)
    end_of_0 = dl.state_dict()
    it = iter(dl)
    next(it)
    mid_1 = dl.state_dict()  # one batch of epoch 1 taken

    a = _loader(files)  # the usual loop: for epoch in range(start, n): set_epoch(epoch)
    a.load_state_dict(end_of_0)
    a.set_epoch(1)
    _same(_epoch(a), reference[1])

    b = _loader(files)
    b.load_state_dict(mid_1)
    b.set_epoch(1)  # the epoch the state is in: its remaining batches
    _same(_epoch(b), reference[1][1:])

    c = _loader(files)
    c.load_state_dict(mid_1)
    c.set_epoch(2)  # another epoch: that one, whole
    _same(_epoch(c), reference[2])

    d = _loader(files)
    d.set_epoch(2)
    d.load_state_dict(mid_1)  # the later call wins
    _same(_epoch(d), reference[1][1:])


def test_state_dict_before_iterating_again_is_the_loaded_one(files):
    dl = _loader(files)
    _epoch(dl)
    state = dl.state_dict()
    resumed = _loader(files)
    resumed.load_state_dict(state)
    assert resumed.state_dict()["epoch"] == state["epoch"] and resumed.state_dict()["ended"] is True


def test_an_end_of_epoch_state_with_skipped_samples(tmp_path):
    """on_error="skip": the epoch's length is known only as it is read; the state says it ended."""
    items = make_image_folder(tmp_path, images_per_class=2, seed=4, mean_hw=(24, 24))
    files = sorted(p for p, _ in items)
    with open(files[3], "wb") as f:
        f.write(b"not a jpeg")

    def make():
        @pipeline_def(num_threads=2, seed=9)
        def p():
            jpegs, lab = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                         name="Reader")
            return fn.resize(fn.decoders.image(jpegs, on_error="skip"), resize_x=8, resize_y=8), lab
        return torch_dali.DataLoader(p, batch_size=5, device="cpu")

    ref = make()
    want = [[y.tolist() for _, y in ref] for _ in range(2)]
    dl = make()
    assert [y.tolist() for _, y in dl] == want[0]
    resumed = make()
    resumed.load_state_dict(dl.state_dict())
    assert [y.tolist() for _, y in resumed] == want[1]
