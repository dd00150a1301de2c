#!/usr/bin/env bash
# Session 19, first device call: the extension built from the current sources (session 18's
# store_normalized refactor had only been compiled), the kernel and Python-function GPU tests, then
# the judge's DALIGenericIterator feed run repeated with stderr kept (feed_repeat.sh). Results under $OUT.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
[ -d .dali-carry/c1 ] && mkdir -p /tmp/dch && cp .dali-carry/c1/* /tmp/dch/
( [ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 > /tmp/gen.txt 2>&1 ) &
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout 240 python3 -m pytest -o addopts= -q -p no:cacheprovider tests/gpu/test_extension.py tests/gpu/test_gpu_python_function.py tests/gpu/test_gpu_fused.py > "$OUT/gpu_tests.txt" 2>&1
tail -4 "$OUT/gpu_tests.txt"; grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.txt" | head; echo "tests done $(( $(date +%s) - t0 )) s"
wait; tail -1 /tmp/gen.txt 2>/dev/null
RUNS=${RUNS:-4} bash bench/diag/feed_repeat.sh
echo "feed done $(( $(date +%s) - t0 )) s"
