"""One place decides which kernel runs a batch (ops/_dispatch.py): the op's spec unless a
registered fast kernel supports the batch; a kernel that declines the data falls back."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.ops import _dispatch
from torch_dali.ops.fused import FlipCropMirrorNormalize, ResizeCropMirrorNormalize
from torch_dali.ops.geometry import Resize
from torch_dali.ops.random_resized_crop import RandomResizedCrop
from torch_dali.ops.normalize import CropMirrorNormalize
from torch_dali.tensor_list import TensorList


class _Op:
    """Stands for an op: its spec kernel records that it ran."""

    def __init__(self) -> None:
        self.spec_runs = 0

    def run_batch(self, ctx: Any, inputs: list[TensorList], args: Any) -> list[TensorList]:
        self.spec_runs += 1
        return [TensorList(inputs[0].as_tensor() + 1)]


class _Kernel(_dispatch.FastKernel):
    name = "test kernel"

    def __init__(self, supports: bool, declines: bool = False) -> None:
        self.ok, self.declines, self.runs = supports, declines, 0

    def supports(self, op: Any, inputs: Any, args: Any) -> bool:
        return self.ok

    def run(self, op: Any, ctx: Any, inputs: Any, args: Any) -> list[TensorList] | None:
        self.runs += 1
        return None if self.declines else [TensorList(inputs[0].as_tensor() * 10)]


@pytest.fixture
def op_class(monkeypatch: pytest.MonkeyPatch) -> type:
    cls = type("_TestOp", (_Op,), {})
    monkeypatch.setitem(_dispatch._FAST, cls, [])
    return cls


def _batch() -> list[TensorList]:
    return [TensorList(torch.ones(2, 3))]


def test_spec_runs_without_a_fast_kernel(op_class: type) -> None:
    op = op_class()
    out = _dispatch.run_batch(op, None, _batch(), {})
    assert op.spec_runs == 1 and torch.equal(out[0].as_tensor(), torch.full((2, 3), 2.0))


def test_a_supporting_kernel_runs_instead_of_the_spec(op_class: type) -> None:
    op, k = op_class(), _Kernel(True)
    _dispatch.register_fast(op_class, k)
    out = _dispatch.run_batch(op, None, _batch(), {})
    assert (k.runs, op.spec_runs) == (1, 0) and torch.equal(out[0].as_tensor(), torch.full((2, 3), 10.0))
    assert _dispatch.fast_kernels(op) == [k]


def test_kernels_that_do_not_support_or_decline_leave_it_to_the_next_then_the_spec(op_class: type) -> None:
    op = op_class()
    no, declines, yes = _Kernel(False), _Kernel(True, declines=True), _Kernel(True)
    for k in (no, declines):
        _dispatch.register_fast(op_class, k)
    _dispatch.run_batch(op, None, _batch(), {})
    assert (no.runs, declines.runs, op.spec_runs) == (0, 1, 1)
    _dispatch.register_fast(op_class, yes)
    _dispatch.run_batch(op, None, _batch(), {})
    assert (declines.runs, yes.runs, op.spec_runs) == (2, 1, 1)


def test_a_kernel_is_for_its_class_only(op_class: type) -> None:
    sub = type("_Sub", (op_class,), {})
    _dispatch.register_fast(op_class, _Kernel(True))
    op = sub()
    _dispatch.run_batch(op, None, _batch(), {})
    assert op.spec_runs == 1


def test_the_image_ops_have_their_cuda_kernels_registered() -> None:
    for cls in (Resize, RandomResizedCrop, CropMirrorNormalize, ResizeCropMirrorNormalize, FlipCropMirrorNormalize):
        assert [k.name for k in _dispatch._FAST[cls]], cls


@pytest.mark.parametrize("seed", range(5))
def test_a_flip_folds_into_the_crop_window_and_mirror(seed: int) -> None:
    """What the flip -> crop_mirror_normalize kernel computes: the window of a left-right mirrored
    image, read mirrored or not, equals the mirrored window of the image itself, read the other way."""
    from torch_dali.ops.fast.windows import mirrored_windows
    g = torch.Generator().manual_seed(seed)
    n = 6
    imgs = [torch.randint(0, 255, (int(torch.randint(4, 12, (1,), generator=g)),
                                   int(torch.randint(4, 12, (1,), generator=g)), 3), generator=g) for _ in range(n)]
    in_hw = np.array([im.shape[:2] for im in imgs], dtype=np.int64)
    h, w = 3, 4
    wins = np.array([[int(torch.randint(0, int(s[0]) - h + 1, (1,), generator=g)),
                      int(torch.randint(0, int(s[1]) - w + 1, (1,), generator=g)), h, w] for s in in_hw])
    flipped = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)]
    mirror = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)]
    folded = mirrored_windows(wins, in_hw, flipped)

    def cut(im: torch.Tensor, win: Any, m: bool) -> torch.Tensor:
        y, x, hh, ww = (int(v) for v in win)
        out = im[y:y + hh, x:x + ww]
        return out.flip(1) if m else out
    for i in range(n):
        two_ops = cut(imgs[i].flip(1) if flipped[i] else imgs[i], wins[i], mirror[i])
        assert torch.equal(two_ops, cut(imgs[i], folded[i], mirror[i] != flipped[i]))


def test_the_executor_runs_batch_ops_through_the_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel registered for a batch op (here `copy`, which .gpu() adds) is what the plan runs."""
    from torch_dali.ops.basic import Copy

    class Doubles(_dispatch.FastKernel):
        def supports(self, op: Any, inputs: Any, args: Any) -> bool:
            return True

        def run(self, op: Any, ctx: Any, inputs: Any, args: Any) -> list[TensorList]:
            return [TensorList(inputs[0].as_tensor() * 2, inputs[0].layout())]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        x = fn.external_source(source=lambda: [torch.full((2,), 3.0) for _ in range(2)])
        return x.gpu()

    def first(p: Any) -> torch.Tensor:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # GPU ops on the CPU
            p.build()
            (out,) = p.run()
        p.shutdown()
        return out.as_tensor()

    assert torch.equal(first(pipe()), torch.full((2, 2), 3.0))
    monkeypatch.setitem(_dispatch._FAST, Copy, [Doubles()])
    assert torch.equal(first(pipe()), torch.full((2, 2), 6.0))
