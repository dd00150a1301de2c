"""Which of torch's pool streams share a hardware queue with the default stream and with each other
(the extension's streams_share_queue), and what a probe costs. One JSON line.
  python3 bench/diag/queue_probe.py   (run with CUDA_DEVICE_MAX_CONNECTIONS unset, then =32)"""
import json
import os
import time

import torch

from torch_dali._native import extension

ext = extension.load()
torch.empty(1, device="cuda")
pool = [torch.cuda.Stream() for _ in range(16)]
t = time.perf_counter()
with_default = [ext.streams_share_queue(s.cuda_stream, 0) for s in pool]
probe_ms = (time.perf_counter() - t) * 1e3 / len(pool)
reverse = [ext.streams_share_queue(0, s.cuda_stream) for s in pool]
pairs = [[j for j in range(16) if j != i and ext.streams_share_queue(pool[i].cuda_stream, pool[j].cuda_stream)]
         for i in range(9)]
raw = []  # streams made outside torch's pool (as the decoder makes its own)
print(json.dumps(dict(what="queue_probe", connections=os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", "default"),
                      pool_shares_with_default=[i for i, v in enumerate(with_default) if v],
                      default_holds_pool=[i for i, v in enumerate(reverse) if v],
                      pool_pairs_first9=pairs, probe_ms_mean=round(probe_ms, 3))), flush=True)
