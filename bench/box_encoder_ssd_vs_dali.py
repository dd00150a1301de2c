"""box_encoder with SSD300's 8732 anchors (batch 32, 1-11 boxes a sample), DALI 2.4's CPU backend or
torch_dali, the same pipeline code: `python bench/box_encoder_ssd_vs_dali.py dali` under DALI's venv,
`python bench/box_encoder_ssd_vs_dali.py ours`; run them alternately and compare medians in one
session (this machine's times are noisy)."""
import json
import os
import platform
import sys
import time

import numpy as np

if sys.argv[1] == "dali":
    from nvidia.dali import fn, pipeline_def
else:
    from torch_dali import fn, pipeline_def
rs = np.random.RandomState(0)
# SSD300-like anchors: 8732 ltrb boxes
anchors = []
for fk, n in [(38, 4), (19, 6), (10, 6), (5, 6), (3, 4), (1, 4)]:
    for i in range(fk):
        for j in range(fk):
            for k in range(n):
                cx, cy = (j + .5) / fk, (i + .5) / fk; w = h = 0.1 + 0.15 * k
                anchors += [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]
anchors = [float(min(max(v, 0), 1)) for v in anchors]
B = []; L = []
for _ in range(32):
    k = rs.randint(1, 12); lo = rs.uniform(0, .7, (k, 2)); B.append(np.concatenate([lo, lo + rs.uniform(.05, .3, (k, 2))], 1).astype(np.float32)); L.append(rs.randint(1, 80, k).astype(np.int32))
@pipeline_def(batch_size=32, num_threads=2, device_id=None)
def p():
    b = fn.external_source(source=lambda: B, batch=True); l = fn.external_source(source=lambda: L, batch=True)
    return tuple(fn.box_encoder(b, l, anchors=anchors, criteria=0.5, offset=True, scale=1.0, stds=[0.1, 0.1, 0.2, 0.2]))
pp = p(); pp.build()
for _ in range(3): pp.run()
ts = []
for r in range(5):
    t = time.perf_counter()
    for _ in range(10): pp.run()
    ts.append((time.perf_counter() - t) / 10 * 1e3)
print(json.dumps({"op": "box_encoder_ssd8732", "lib": sys.argv[1], "ms_per_batch_median": round(sorted(ts)[2], 3),
                  "batch": 32, "anchors": len(anchors) // 4, "machine": platform.node(), "cpus": os.cpu_count()}))
