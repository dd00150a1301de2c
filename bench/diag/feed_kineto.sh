#!/usr/bin/env bash
# feed_kineto.py for each MODE (default synthetic td dali) under each CONFIGS set (';'-separated
# VAR=value sets; empty: the defaults), one JSON line each into $OUT/kineto.jsonl, a digest printed.
#   OUT=$OUT STEPS=30 MODES='synthetic td dali' bash bench/diag/feed_kineto.sh   (GPU machine)
#   CONFIGS=";TORCH_DALI_PROBE_SPY=$PWD/.spy/py-spy" adds the GIL holders (carry .spy: the py-spy binary)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_kineto}; mkdir -p "$OUT"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
IFS=';' read -ra SETS <<< "${CONFIGS:-}"
[ ${#SETS[@]} -eq 0 ] && SETS=("")
for mode in ${MODES:-synthetic td dali}; do
  for cfg in "${SETS[@]}"; do
    [ "$mode" != td ] && [ "$mode" != tdl ] && [ -n "$cfg" ] && [ "${cfg#*PROBE_}" = "$cfg" ] && continue
    ENVS=""
    [ "$mode" = dali ] && ENVS="PYTHONPATH=/tmp/dali-site:$PWD LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
    env $ENVS $cfg timeout 150 python3 bench/diag/feed_kineto.py /tmp/ref420 "$mode" "${STEPS:-30}" 2>>"$OUT/err_$mode.txt" | grep '^{' \
      | tee -a "$OUT/kineto.jsonl" | python3 -c "
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print('==', r['label'], r.get('train'), r['config'] or 'defaults', 'img/s', r['images_per_s_traced'], 'window', r['window_ms'], 'train busy', r['training_busy_ms'],
          'idle', r['training_idle_ms'], 'holes', r['idle_gaps'])
    print('   idle by gap (us: [n, ms])', r.get('idle_by_gap_us'), 'host', r.get('host_ms_median'), r.get('host_ms_mean'), 'gil', r.get('gil_latency'))
    if r.get('gil_holders'): print('   gil holders', json.dumps(r['gil_holders'])[:1500])
    for c in r.get('cuda_calls', [])[:14]: print('   cuda call', c)
    for st, v in list(r['streams'].items())[:6]:
        print('   stream', st, v['kernels'], 'kern', v['kernel_ms'], 'ms; overlaps training', v['overlaps_training_ms'], 'in holes', v['in_training_holes_ms'], v['top'][:4])
    print('   copies', r['copies'], 'in holes', r['copies_in_training_holes_ms'])
"
    tail -3 "$OUT/err_$mode.txt" | grep -i -E "error|Traceback" | head -3
  done
done
