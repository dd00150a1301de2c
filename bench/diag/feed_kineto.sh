#!/usr/bin/env bash
# feed_kineto.py for each MODE (default synthetic td dali) under each CONFIGS set (';'-separated
# VAR=value sets; empty: the defaults), one JSON line each into $OUT/kineto.jsonl, a digest printed.
#   OUT=$OUT STEPS=30 MODES='synthetic td dali' bash bench/diag/feed_kineto.sh   (GPU machine)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_kineto}; mkdir -p "$OUT"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
IFS=';' read -ra SETS <<< "${CONFIGS:-}"
[ ${#SETS[@]} -eq 0 ] && SETS=("")
for mode in ${MODES:-synthetic td dali}; do
  for cfg in "${SETS[@]}"; do
    [ "$mode" != td ] && [ "$mode" != tdl ] && [ -n "$cfg" ] && continue
    ENVS=""
    [ "$mode" = dali ] && ENVS="PYTHONPATH=/tmp/dali-site:$PWD LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
    env $ENVS $cfg timeout 150 python3 bench/diag/feed_kineto.py /tmp/ref420 "$mode" "${STEPS:-30}" 2>"$OUT/err_$mode.txt" | grep '^{' \
      | tee -a "$OUT/kineto.jsonl" | python3 -c "
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print('==', r['label'], r['config'] or 'defaults', 'img/s', r['images_per_s_traced'], 'window', r['window_ms'], 'train busy', r['training_busy_ms'],
          'idle', r['training_idle_ms'], 'holes', r['idle_gaps'])
    for st, v in list(r['streams'].items())[:6]:
        print('   stream', st, v['kernels'], 'kern', v['kernel_ms'], 'ms; overlaps training', v['overlaps_training_ms'], 'in holes', v['in_training_holes_ms'], v['top'][:4])
    print('   copies', r['copies'], 'in holes', r['copies_in_training_holes_ms'])
"
    tail -3 "$OUT/err_$mode.txt" | grep -i -E "error|Traceback" | head -3
  done
done
