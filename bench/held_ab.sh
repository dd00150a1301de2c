#!/usr/bin/env bash
# TORCH_DALI_OUTPUT_HELD_COUNTS off vs on, alternating, on the judge's fused row (bench_anchors.py,
# DALI code through DALIGenericIterator) and validation row (bench_more.py): images/s and GPU memory.
#   OUT=$OUT ROUNDS=2 bash bench/held_ab.sh      (.refbench carried; torch_dali only)
set -u
H=.refbench; OUT=${OUT:-/tmp/held_ab}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
[ -d /tmp/ref420 ] || python3 $H/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
PYTHONPATH=$PWD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)"
for r in $(seq "${ROUNDS:-2}"); do
  for cfg in "TORCH_DALI_OUTPUT_HELD_COUNTS=0" "TORCH_DALI_OUTPUT_HELD_COUNTS=1"; do
    { env $cfg PYTHONPATH=$PWD timeout 60 python3 $H/bench_anchors.py td /tmp/ref420 fused:1.0
      env $cfg PYTHONPATH=$PWD timeout 60 python3 $H/bench_more.py run torch_dali val /tmp/ref420; } 2>&1 \
      | grep '^{' | grep -v '"env"' | CFG="$cfg" R="$r" python3 -c "
import json, os, sys
for l in sys.stdin:
    d = json.loads(l); d.update(config=os.environ['CFG'], round=int(os.environ['R']))
    open(os.environ['OUT'] + '/held_ab.jsonl', 'a').write(json.dumps(d) + chr(10))
    print('==', d['round'], d['what'], d['config'], round(d.get('img_per_s', 0)), d.get('gpu_mem_mib'), d.get('first_batch_s'), d.get('error', ''))
"
  done
done
