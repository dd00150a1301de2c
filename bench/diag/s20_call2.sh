#!/usr/bin/env bash
# Session 20's second call: does the hardware states' wait for their previous batch
# (TORCH_DALI_NVJPEG_HW_STATE_SYNC, default 1 since session 19) cost speed? Call 1's 4 feed runs
# (4,188-4,259 images/s) sat under all 39 of session 19's without it (4,262-4,465), and the judge
# round's unfused row read 0.94. torch_dali alone, sync 1 and 0 in alternating order each round:
# the fused and unfused rows (bench_anchors.py), then ResNet-50 fed both ways in (train_feed.py).
#   OUT=$OUT bash bench/diag/s20_call2.sh      (carry .refbench)
set -u
export PYTHONUNBUFFERED=1
H=.refbench; mkdir -p "$OUT"; t0=$(date +%s)
TD="env PYTHONPATH=$PWD"
[ -d /tmp/ref420 ] || python3 $H/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
$TD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
echo "ready $(( $(date +%s) - t0 )) s"
tag() { python3 -c "
import json, sys
for line in sys.stdin:
    if line.startswith('{'):
        r = json.loads(line); r.update(sync=int(sys.argv[1]), round=int(sys.argv[2])); print(json.dumps(r))
" "$1" "$2" | tee -a "$OUT/results.jsonl" | cut -c1-110; }
order() { [ $(( $1 % 2 )) -eq 1 ] && echo "1 0" || echo "0 1"; }
for r in $(seq "${ROW_ROUNDS:-3}"); do
  for row in fused:1.0 unfused:0.65; do
    for s in $(order $r); do
      TORCH_DALI_NVJPEG_HW_STATE_SYNC=$s $TD timeout 150 python3 $H/bench_anchors.py td /tmp/ref420 $row 2>&1 | tag $s $r
    done
  done
done
echo "rows done $(( $(date +%s) - t0 )) s"
timeout 150 python3 $H/train_feed.py /tmp/ref420 synthetic 60 2>&1 | tag -1 0
for r in $(seq "${FEED_ROUNDS:-3}"); do
  [ $(( $(date +%s) - t0 )) -gt "${BUDGET_S:-480}" ] && { echo "budget: stopped before feed round $r"; break; }
  for mode in td tdl; do
    for s in $(order $r); do
      TORCH_DALI_NVJPEG_HW_STATE_SYNC=$s $TD timeout 100 python3 $H/train_feed.py /tmp/ref420 $mode 60 2>&1 | tag $s $r
    done
  done
done
python3 - "$OUT/results.jsonl" <<'PY'
import json, statistics, sys
from collections import defaultdict
got = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    got[(r['what'], r['sync'])].append(r['img_per_s'])
for (what, sync), v in sorted(got.items()):
    print(f"{what:24s} sync={sync:2d} n={len(v)} median={statistics.median(v):9.1f} {[round(x) for x in v]}")
PY
echo "all done $(( $(date +%s) - t0 )) s"
