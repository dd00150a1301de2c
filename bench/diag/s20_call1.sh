#!/usr/bin/env bash
# Prepared in session 19 for the next session's first device call: the extension built with the
# decoder's activity() (compiled only with g++ here), the GPU tests that cover it, then the hunt for
# the fused feed hang: decoder_stress.py (fresh decoders, three lanes, a matmul load; native stacks
# on a stall) and feed_hang.sh (whole training runs) in the time left. Results under $OUT.
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
timeout 330 python3 bench/diag/decoder_stress.py /tmp/ref420 --rounds 400 --budget-s ${STRESS_S:-200} --out "$OUT/stress.jsonl" 2> "$OUT/stress.err"
echo "stress rc=$? $(( $(date +%s) - t0 )) s"; grep -v "^\s*$" "$OUT/stress.err" | grep -v Warning | tail -15
OUT=$OUT/feed RUNS=20 BUDGET_S=$(( ${TOTAL_S:-520} - ($(date +%s) - t0) - 60 )) STALL_S=45 bash bench/diag/feed_hang.sh
echo "all done $(( $(date +%s) - t0 )) s"
