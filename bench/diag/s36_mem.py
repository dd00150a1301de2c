"""Session 36: where the fused reference pipeline's GPU memory goes (DALI's ResNet-50 recipe, the
judge's code: batch 256, 16 threads, hw_decoder_load=1.0, 3 epochs, DALIGenericIterator), under the
environment this process was started with. One JSON line: the judge's figure (free-memory delta
after the CUDA context), torch's reserved / peak allocated, what lies outside torch's cache, and
images/s.   python3 bench/diag/s36_mem.py ROOT TAG
"""
import json, os, sys, time
import torch

root, tag = sys.argv[1], sys.argv[2]
torch.empty(1, device="cuda")
torch.cuda.synchronize()
free0 = torch.cuda.mem_get_info()[0]
import torch_dali as nd
from torch_dali import fn, types
from torch_dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
free_import = torch.cuda.mem_get_info()[0]
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@nd.pipeline_def(batch_size=256, num_threads=16, device_id=0, seed=1, prefetch_queue_depth=2)
def p():
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB, hw_decoder_load=1.0)
    images = fn.resize(images, resize_x=224, resize_y=224)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


pipe = p()
pipe.build()
it = DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                         last_batch_policy=LastBatchPolicy.DROP, auto_reset=True)
free_first = None
n, t0 = 0, None
for epoch in range(4):
    for out in it:
        if free_first is None:
            torch.cuda.synchronize()
            free_first = torch.cuda.mem_get_info()[0]
        if epoch == 1 and t0 is None:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        if t0 is not None:
            n += out[0]["data"].shape[0]
torch.cuda.synchronize()
dt = time.perf_counter() - t0
free1 = torch.cuda.mem_get_info()[0]
mib = lambda b: round(b / 2**20)
st = torch.cuda.memory_stats()
rec = dict(what="mem", tag=tag, img_per_s=round(n / dt), judge_mib=mib(free0 - free1),
           after_import_mib=mib(free0 - free_import), after_first_mib=mib(free0 - free_first),
           reserved_mib=mib(torch.cuda.memory_reserved()), peak_alloc_mib=mib(torch.cuda.max_memory_allocated()),
           alloc_now_mib=mib(torch.cuda.memory_allocated()),
           outside_torch_mib=mib(free0 - free1 - torch.cuda.memory_reserved()),
           segments=st.get("segment.all.current"), large_pool_mib=mib(st.get("reserved_bytes.large_pool.current", 0)),
           small_pool_mib=mib(st.get("reserved_bytes.small_pool.current", 0)),
           pipe_stats=pipe.memory_stats() if hasattr(pipe, "memory_stats") else None,
           env={k: v for k, v in os.environ.items() if k.startswith(("TORCH_DALI_", "PYTORCH_CUDA"))})
print(json.dumps(rec), flush=True)
out = os.environ.get("OUT")
if out:
    with open(os.path.join(out, "mem.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")
