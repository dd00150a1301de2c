"""torch_dali.eager: ops applied directly to data give what the same op gives inside a pipeline."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import eager, fn, pipeline_def, types
from torch_dali.errors import ArgumentError
from torch_dali.tensor_list import TensorList


@pytest.fixture(scope="module")
def imgs():
    g = torch.Generator().manual_seed(0)
    return [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=g) for h, w in [(40, 50), (31, 64), (50, 37)]]


def _pipeline(op, imgs, seed=5, **kw):
    @pipeline_def(batch_size=len(imgs), num_threads=1, device_id=None, seed=seed)
    def p():
        return op(fn.external_source(name="x", layout="HWC"), **kw)
    pipe = p()
    pipe.build()
    pipe.feed_input("x", imgs)
    (out,) = pipe.run()
    return list(out)


def test_one_sample_list_and_tensorlist(imgs):
    one = eager.resize(imgs[0], resize_x=20, resize_y=16)
    assert isinstance(one, torch.Tensor) and one.shape == (16, 20, 3)
    many = eager.resize(imgs, resize_x=20, resize_y=16)
    assert isinstance(many, list) and torch.equal(many[0], one)
    tl = eager.resize(TensorList(imgs, "HWC"), resize_x=20, resize_y=16)
    assert isinstance(tl, TensorList) and tl.layout() == "HWC" and torch.equal(tl[2], many[2])
    assert torch.equal(eager.flip(np.asarray(imgs[1]), horizontal=1), imgs[1].flip(1))


@pytest.mark.parametrize("seed", [1, 5])
def test_random_op_equals_the_pipeline_with_that_seed(imgs, seed):
    got = eager.random_resized_crop(imgs, size=(16, 12), seed=seed)
    want = _pipeline(fn.random_resized_crop, imgs, seed=seed, size=(16, 12))
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    other = eager.random_resized_crop(imgs, size=(16, 12), seed=seed + 1)
    assert not all(torch.equal(a, b) for a, b in zip(got, other))


def test_per_sample_arguments_are_rows_and_lists_are_constants(imgs):
    c = eager.crop(imgs, crop=(10, 12), crop_pos_x=torch.tensor([0.0, 1.0, 0.5]))
    assert torch.equal(c[0], imgs[0][15:25, 0:12]) and torch.equal(c[1], imgs[1][11:21, 52:64])  # 10.5 -> 11
    assert [tuple(x.shape) for x in c] == [(10, 12, 3)] * 3
    cmn = eager.crop_mirror_normalize(imgs[:2], crop=(8, 8), mean=[10.0, 20.0, 30.0], std=[2.0],
                                      mirror=torch.tensor([0, 1]), output_layout="HWC")
    ref = (imgs[1][12:20, 28:36].float() - torch.tensor([10.0, 20.0, 30.0])) / 2.0
    torch.testing.assert_close(cmn[1], ref.flip(1))


def test_ops_without_data_and_errors(imgs):
    a = eager.random.uniform(batch_size=4, range=(0, 1), seed=3)
    b = eager.random.uniform(batch_size=4, range=(0, 1), seed=3)
    assert len(a) == 4 and all(torch.equal(x, y) for x, y in zip(a, b)) and len({float(x) for x in a}) == 4
    c, d = eager.random.uniform(batch_size=4, range=(0, 1)), eager.random.uniform(batch_size=4, range=(0, 1))
    assert not all(torch.equal(x, y) for x, y in zip(c, d))  # no seed: each call draws anew
    with pytest.raises(ArgumentError, match="batch_size"):
        eager.random.uniform(range=(0, 1))
    with pytest.raises(ArgumentError, match="data must be"):
        eager.flip("not an image")
    with pytest.raises(Exception, match="[Rr]esize"):  # the op's own argument check, named
        eager.resize(imgs[0])
    assert not hasattr(eager, "readers")  # sources have nothing to apply to
