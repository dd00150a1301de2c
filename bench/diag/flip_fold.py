"""Session 12 ran it: the reruns differed only with TORCH_DALI_ROI_DECODE=1, from hardware windows
ending on an image edge (roi_edge.py; fixed in the decoder). On the H200 (2026-12-02, s11) the first version of
test_flip_folded_into_cmn_equals_the_two_ops failed for decoders.image(mixed) -> random_resized_crop
-> flip -> CMN (the fused run against TORCH_DALI_FUSION=0, two pipelines in one process), while the
crop and vertical cases passed and the kernel arithmetic is exact (flip_fold_cpu_kernel.py). This
checks rerun determinism of that decoder path and
per-sample differences between the fused pair and the two ops (TORCH_DALI_FUSION=0)."""
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.getcwd())
from torch_dali import fn, pipeline_def, types  # noqa: E402
from torch_dali.sample_data import make_image_folder  # noqa: E402

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
root = tempfile.mkdtemp()
make_image_folder(root, images_per_class=5, seed=4, mean_hw=(180, 240))


def run(mirror, fusion, roi="1"):
    os.environ["TORCH_DALI_FUSION"] = fusion
    os.environ["TORCH_DALI_ROI_DECODE"] = roi

    @pipeline_def(batch_size=12, num_threads=3, device_id=0, seed=5)
    def p():
        jpegs, _ = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.random_resized_crop(images, size=[64, 64])
        images = fn.flip(images, horizontal=1)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                        mirror=fn.random.coin_flip() if mirror else 0)
    pipe = p()
    pipe.build()
    fused = [type(s.fused).__name__ for s in pipe.executor.plan.steps if s.fused is not None]
    out = [pipe.run()[0].as_tensor().cpu().clone() for _ in range(3)]
    pipe.shutdown()
    return out, fused


for mirror in (True, False):
    for roi in ("1", "0"):
        a, fa = run(mirror, "1", roi)
        a2, _ = run(mirror, "1", roi)
        b, fb = run(mirror, "0", roi)
        b2, _ = run(mirror, "0", roi)
        print("mirror", mirror, "roi", roi, "fused steps", fa, fb,
              "rerun equal fused", all(torch.equal(x, y) for x, y in zip(a, a2)),
              "unfused", all(torch.equal(x, y) for x, y in zip(b, b2)))
        for it, (x, y) in enumerate(zip(a, b)):
            bad = [i for i in range(x.shape[0]) if not torch.equal(x[i], y[i])]
            mirrored = [i for i in bad if torch.equal(x[i], y[i].flip(2))]
            diff = (x - y).abs().max().item()
            print("  iter", it, "differ", bad, "of which mirrored", mirrored, "max diff", round(diff, 4))
