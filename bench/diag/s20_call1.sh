#!/usr/bin/env bash
# Prepared in session 19 for the next session's first device call (not yet run): the extension
# built with the decoder's activity() and hw_state_sync (compiled only with g++ here) and the GPU
# tests that cover them; then the fused feed hang: decoder_stress.py with the states reused at once
# (TORCH_DALI_NVJPEG_HW_STATE_SYNC=0, the behaviour the hang was seen with) and with the new default
# wait; the fused row with and without the wait (torch_dali alone); feed_hang.sh in the time left.
#   OUT=$OUT bash bench/diag/s20_call1.sh      (carry .refbench)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
( [ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 > /tmp/gen.txt 2>&1 ) &
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout 200 python3 -m pytest -o addopts= -q -p no:cacheprovider tests/gpu/test_extension.py tests/gpu/test_gpu_fused.py > "$OUT/gpu_tests.txt" 2>&1
tail -2 "$OUT/gpu_tests.txt"; grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.txt" | head; echo "tests done $(( $(date +%s) - t0 )) s"
wait
for sync in 0 1; do
  TORCH_DALI_NVJPEG_HW_STATE_SYNC=$sync timeout 240 python3 bench/diag/decoder_stress.py /tmp/ref420 --rounds 400 \
    --budget-s ${STRESS_S:-90} --out "$OUT/stress_sync$sync.jsonl" 2> "$OUT/stress_sync$sync.err"
  echo "stress sync=$sync rc=$? $(( $(date +%s) - t0 )) s"; grep -a "STALL\|activity" "$OUT/stress_sync$sync.err" | head -5
done
ROWS=fused:1.0 DATA=/tmp/ref420 CONFIGS=";TORCH_DALI_NVJPEG_HW_STATE_SYNC=0" ROUNDS=2 bash bench/row_ab.sh 2>&1 | grep "^==" | grep -v " dali "
echo "rows done $(( $(date +%s) - t0 )) s"
OUT=$OUT/feed RUNS=20 BUDGET_S=$(( ${TOTAL_S:-520} - ($(date +%s) - t0) - 60 )) STALL_S=45 bash bench/diag/feed_hang.sh
echo "all done $(( $(date +%s) - t0 )) s"
