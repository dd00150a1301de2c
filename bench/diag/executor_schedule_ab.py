"""A/B of the CPU executor (session 34): images/s of a CPU pipeline through pipe.run(), DALIGenericIterator
and torch_dali.DataLoader; run from each tree with PYTHONPATH set (bench/results/executor_schedule_ab_s34.json)."""
import json, sys, time, os
import torch_dali
from torch_dali import fn, pipeline_def, types
from torch_dali.plugin.pytorch import DALIGenericIterator
mode = sys.argv[1]
@pipeline_def(batch_size=32, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=2)
def p():
    jpegs, labels = fn.readers.file(file_root="/tmp/abdata", random_shuffle=True, name="R")
    img = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    img = fn.random_resized_crop(img, size=(224, 224))
    img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="CHW", mean=[128.]*3, std=[64.]*3,
                                   mirror=fn.random.coin_flip())
    return img, labels
pipe = p(); pipe.build()
if mode == "loader":
    import torch_dali as td
    def mk(**kw):
        return p.__wrapped__(**kw) if hasattr(p, "__wrapped__") else None
    loader = td.DataLoader(lambda **kw: p(**{k: v for k, v in kw.items()}), batch_size=32, drop_last=True)
    n = 0; t = None
    while n < 24 * 32:
        for i, (x, y) in enumerate(loader):
            if t is None and i == 2:
                t = time.perf_counter(); continue
            if t is not None:
                n += 32
                if n >= 24 * 32: break
elif mode == "run":
    for _ in range(3): pipe.run()
    t = time.perf_counter(); n = 0
    for _ in range(24): pipe.run(); n += 32
else:
    it = DALIGenericIterator(pipe, ["x", "y"], reader_name="R", auto_reset=True)
    for i, _ in enumerate(it):
        if i == 2: break
    t = time.perf_counter(); n = 0
    while n < 24 * 32:
        for out in it:
            n += 32
            if n >= 24 * 32: break
dt = time.perf_counter() - t
print(json.dumps({"mode": mode, "img_s": round(n / dt, 1), "file": torch_dali.__file__}))
