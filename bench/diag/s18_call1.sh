#!/usr/bin/env bash
# Session 18, first device call: the shared-tap fused kernel (build, bit-identity tests, kernel
# time), then the feed and the fused row with it against the per-pixel kernel. Results under $OUT.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout 120 python3 -m pytest -o addopts= -q -p no:cacheprovider tests/gpu/test_extension.py -k "tap_tables or crop_mirror_normalize or resize_batch" > "$OUT/gpu_tests.txt" 2>&1
tail -3 "$OUT/gpu_tests.txt"; echo "tests done $(( $(date +%s) - t0 )) s"
timeout 90 python3 bench/diag/rcmn_taps.py "$OUT/rcmn_taps.json" 2>&1 | tail -12
echo "kernel done $(( $(date +%s) - t0 )) s"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
RUNS=${RUNS:-"synthetic eager;td eager;td eager TORCH_DALI_FUSED_TAP_TABLES=0;tdl eager;td eager TORCH_DALI_NVJPEG_BLOCKING_SYNC=1;td eager TORCH_DALI_FUSED_TAP_TABLES=0;td eager;synthetic eager"} \
  RUN_TIMEOUT=60 bash bench/diag/feed_split.sh 2>&1 | grep -E "^==|!!" | cut -c1-260
echo "feed done $(( $(date +%s) - t0 )) s"
ROWS=fused:1.0 DATA=/tmp/ref420 CONFIGS=";TORCH_DALI_FUSED_TAP_TABLES=0" ROUNDS=${ROUNDS:-2} bash bench/row_ab.sh 2>&1 | grep "^==" | grep -v " dali "
echo "rows done $(( $(date +%s) - t0 )) s"
