#!/usr/bin/env bash
# Session 20's last call (~250 s of device time left): ResNet-50 fed with the decoder's own streams
# at priority -1 (TORCH_DALI_NVJPEG_STREAM_PRIORITY, new) and the pipeline's lanes at torch's 0,
# against the defaults, in ABBA order. Session 16 set -1 on every stream (with all JPEGs on the
# engines): the feed rose to 0.95-0.96 but the fused row alone fell (one round).
#   OUT=$OUT bash bench/diag/s20_call3.sh      (carry .refbench)
set -u
export PYTHONUNBUFFERED=1
H=.refbench; mkdir -p "$OUT"; t0=$(date +%s)
TD="env PYTHONPATH=$PWD"
[ -d /tmp/ref420 ] || python3 $H/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
$TD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
echo "ready $(( $(date +%s) - t0 )) s"
run() {  # mode priority
  [ $(( $(date +%s) - t0 )) -gt "${BUDGET_S:-190}" ] && { echo "budget: skipped $1 $2"; return; }
  env ${2:+TORCH_DALI_NVJPEG_STREAM_PRIORITY=$2} $TD timeout 60 python3 $H/train_feed.py /tmp/ref420 "$1" 60 2>&1 \
    | grep '^{' | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); r['decoder_priority'] = sys.argv[1]; print(json.dumps(r))" "${2:-default}" | tee -a "$OUT/feed.jsonl"
}
run synthetic ""
run td ""; run td -1; run tdl -1; run tdl ""; run td -1; run td ""; run tdl ""; run tdl -1
echo "all done $(( $(date +%s) - t0 )) s"
