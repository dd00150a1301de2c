"""The flip fold's arithmetic on the CPU build of the same kernel (`resized_crop_mirror_normalize`,
csrc/cpu/image_kernels_cpu.cpp, which shares `fused_pixel` with the CUDA kernel), on a machine
without a GPU: crop_mirror_normalize of flipped images against the images themselves with mirrored
windows and inverted mirror flags, 200 random batches (whole and inner windows, dense and not).
    python bench/diag/flip_fold_cpu_kernel.py   (builds a CPU-only module in /tmp/cpuext, ~25 s)
2026-12-02, this machine (2 cores, no GPU): bad 0 of 200."""
import os
import sys

import numpy as np
import torch
from torch.utils import cpp_extension

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S = os.path.join(ROOT, "torch_dali", "_native", "csrc")
os.makedirs("/tmp/cpuext", exist_ok=True)
cpp_extension.load(name="td_cpu_only", sources=[f"{S}/bindings.cpp", f"{S}/image_ops.cpp",
                                                 f"{S}/cpu/image_kernels_cpu.cpp"],
                   extra_include_paths=[S, f"{S}/include"], extra_cflags=["-O2", "-std=c++20"],
                   build_directory="/tmp/cpuext", with_cuda=False)
sys.path.insert(0, ROOT)
from torch_dali.ops.fast.windows import mirrored_windows  # noqa: E402
K = torch.ops.torch_dali.resized_crop_mirror_normalize
g = torch.Generator().manual_seed(0)
mean = torch.tensor([123.675, 116.28, 103.53]); std = torch.tensor([58.395, 57.12, 57.375])
def cmn(imgs, wins, mir, dtype=torch.float32, nchw=True, m=mean, s=std):
    h, w = int(wins[0, 2]), int(wins[0, 3])
    return K(imgs, torch.as_tensor(np.ascontiguousarray(wins)), torch.tensor(mir, dtype=torch.bool), m, s, h, w, False, dtype, nchw)
bad = 0
for trial in range(200):
    n = 6
    dense = trial % 2 == 0
    if dense:
        H, W = 64, 64
        batch = torch.randint(0, 256, (n, H, W, 3), generator=g, dtype=torch.uint8)
        imgs = list(batch.unbind(0))
    else:
        imgs = [torch.randint(0, 256, (int(torch.randint(40, 90, (1,), generator=g)), int(torch.randint(56, 90, (1,), generator=g)), 3), generator=g, dtype=torch.uint8) for _ in range(n)]
    in_hw = np.array([im.shape[:2] for im in imgs], dtype=np.int64)
    if trial % 4 < 2:
        wins = np.concatenate([np.zeros((n, 2), np.int64), in_hw], 1) if dense else None
        if wins is None:
            h, w = 40, 56
            wins = np.array([[0, 0, h, w]] * n)
    else:
        h, w = 40, 56
        wins = np.array([[int(torch.randint(0, int(s[0]) - h + 1, (1,), generator=g)), int(torch.randint(0, int(s[1]) - w + 1, (1,), generator=g)), h, w] for s in in_hw])
    flipped = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)] if trial % 3 else [True] * n
    mirror = [bool(v) for v in torch.randint(0, 2, (n,), generator=g)]
    # two ops: the flip kernel (whole windows, uint8, no normalization) then CMN
    whole = np.concatenate([np.zeros((n, 2), np.int64), in_hw], 1)
    if dense:
        fl = cmn(imgs, whole, flipped, torch.uint8, False, torch.zeros(3), torch.ones(3))
        fl = list(fl.unbind(0))
    else:
        fl = [im.flip(1) if f else im for im, f in zip(imgs, flipped)]
    a = cmn(fl, wins, mirror)
    b = cmn(imgs, mirrored_windows(wins, in_hw, flipped), [m != f for m, f in zip(mirror, flipped)])
    if not torch.equal(a, b):
        bad += 1
        print("trial", trial, "dense", dense, "max", (a - b).abs().max().item())
print("bad", bad, "of 200")
