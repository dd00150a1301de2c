#!/usr/bin/env bash
# Splits a loader's feed loss into GPU sharing and host (GIL, CPU) sharing: feed_probe.py per RUNS
# entry ("mode train [VAR=value ...]", ';'-separated; train: eager, graph = the step replayed as
# one CUDA graph, sleep = no GPU work, batches taken at the training's pace). One JSON line each
# into $OUT/split.jsonl and a digest: images/s, next() waits, the GPU's waits for the batch, each
# decode call's hardware-phase host time (torch_dali), the mixed lanes' busy time.
#   OUT=$OUT bash bench/diag/feed_split.sh        (GPU machine; dali runs need DALI in /tmp/dali-site)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_split}; mkdir -p "$OUT"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
# the extension built first, without the per-run timeout (two runs on a fresh machine were lost,
# probably to a cold build cut by it)
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
RUNS=${RUNS:-"synthetic eager;td eager;td graph;synthetic graph;td sleep;dali eager;dali graph;td eager TORCH_DALI_STREAM_PRIORITY=-1;td graph TORCH_DALI_STREAM_PRIORITY=-1;td eager TORCH_DALI_NVJPEG_PINNED_INPUT=1;td eager TORCH_DALI_NVJPEG_HW_CONCURRENT=1 TORCH_DALI_NVJPEG_HW_STATES=2"}
IFS=';' read -ra LIST <<< "$RUNS"
k=0
for run in "${LIST[@]}"; do
  read -r mode train cfg <<< "$run"
  k=$((k + 1)); err="$OUT/err_${k}_${mode}_$train.txt"  # one per run: configs of one mode differ
  ENVS=""
  [ "$mode" = dali ] && ENVS="PYTHONPATH=/tmp/dali-site:$PWD LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
  env $ENVS TORCH_DALI_PROBE_TRAIN=$train ${cfg:-} timeout "${RUN_TIMEOUT:-90}" python3 bench/feed_probe.py /tmp/ref420 "$mode" "${STEPS:-60}" \
    2>"$err" | grep '^{' | CFG="${cfg:-}" python3 -c "
import json, os, statistics, sys
for line in sys.stdin:
    r = json.loads(line)
    r['config'] = os.environ['CFG']
    open(os.environ['OUT'] + '/split.jsonl', 'a').write(json.dumps(r) + chr(10))
    ps = r['per_step']
    hw = [d[2] for d in r.get('per_decode', [])]
    q = lambda v: [round(statistics.median(v), 1), round(statistics.mean(v), 1), round(max(v), 1)] if v else None
    print('==', r['what'], r['train'], r['config'] or 'defaults', 'img/s', r['images_per_s'], 'next med/mean/max', q(ps['next_ms']),
          'gpu wait sum', round(sum(ps['gpu_wait_ms']), 1), 'gpu step', q(ps['gpu_step_ms']), 'decode hw ms', q(hw),
          'lanes busy s', {k: v['busy_s'] for st in r.get('stages', []) for k, v in st.items() if k.startswith('mixed')})
"
  rc=${PIPESTATUS[0]}; [ "$rc" != 0 ] && echo "!! run $k ($run) exit $rc" && tail -3 "$err"
done
