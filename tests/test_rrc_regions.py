"""random_resized_crop reading parts of images (TensorList.regions, set by a GPU decoder that
decoded only what the op reads): the windows are drawn for the whole images and the pixels come
out as from the whole images. CPU checks of the region arithmetic and the spec path; the CUDA
kernel and the decoder are held to whole images bit for bit in tests/gpu/test_gpu_fused.py."""
from __future__ import annotations

import numpy as np
import torch

from torch_dali import fn, pipeline_def
from torch_dali.functional.crop_window import random_crop_window_array, reading_regions
from torch_dali.ops._operator import BatchContext
from torch_dali.tensor_list import TensorList


def test_regions_hold_every_tap_and_stay_in_the_image():
    sizes = np.array([[300, 400], [50, 60], [1000, 20]])
    wins = np.array([[0, 0, 300, 400], [10, 10, 5, 5], [900, 0, 100, 20]])
    reg = reading_regions(wins, sizes, (224, 224))
    assert (reg[:, :2] >= 0).all() and (reg[:, :2] + reg[:, 2:] <= sizes).all()
    assert (reg[:, :2] <= wins[:, :2]).all() and (reg[:, :2] + reg[:, 2:] >= wins[:, :2] + wins[:, 2:]).all()
    assert reg[0].tolist() == [0, 0, 300, 400]  # the whole image: nothing to cut
    assert reg[1].tolist() == [6, 6, 13, 13]  # upscaled: radius 1, margin 4
    # shrinking 100 -> 224 rows grows; 20 -> 224 columns too: margins of 4, cut by the image
    assert reg[2].tolist() == [896, 0, 104, 20]


def _rrc_op():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=11)
    def p():
        x = fn.external_source(name="x", layout="HWC")
        return fn.random_resized_crop(x, size=[64, 48])
    pipe = p()
    pipe.build()
    plan = pipe.executor.plan
    node = next(n for n in plan.ops if type(plan.ops[n]).__name__ == "RandomResizedCrop")
    return pipe, plan.ops[node]


def test_spec_reads_parts_as_wholes():
    pipe, op = _rrc_op()
    g = torch.Generator().manual_seed(0)
    imgs = [torch.randint(0, 256, (h, w, 3), generator=g, dtype=torch.uint8)
            for h, w in [(120, 90), (64, 200), (300, 301), (48, 64)]]
    sizes = np.array([im.shape[:2] for im in imgs])
    ctx = BatchContext(op.node, 5, len(imgs), torch.device("cpu"), None)
    whole = op.run_batch(ctx, [TensorList(imgs, "HWC")], {})[0]
    wins = random_crop_window_array(op.node.seed, 5, sizes, op.area, op.ratio, op.args["num_attempts"])
    reg = reading_regions(wins, sizes, op.size)
    parts = TensorList([im[y:y + h, x:x + w] for im, (y, x, h, w) in zip(imgs, reg.tolist())], "HWC")
    parts.regions = np.concatenate([reg[:, :2], sizes], axis=1)
    assert any(r[2] < s[0] or r[3] < s[1] for r, s in zip(reg.tolist(), sizes.tolist()))
    got = op.run_batch(ctx, [parts], {})[0]
    for a, b in zip(whole.samples, got.samples):
        assert a.shape == b.shape
        # the shifted float origin may round a value differently (the CUDA kernel reads exactly)
        assert (a.int() - b.int()).abs().max() <= 1
        assert (a != b).float().mean() < 0.01
    pipe.shutdown()
