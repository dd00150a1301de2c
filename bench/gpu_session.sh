#!/usr/bin/env bash
# One device call: build the extension, run the GPU tests, then A/B the mixed random-crop decoder's
# window (ROI) decode and the lanes on DALI's ResNet-50 recipe ("fused") and validation ("val"):
# images/s and GPU memory, each in its own process (bench/profile_ref.py), into $OUT.
#   OUT=$OUT bash bench/gpu_session.sh [tests|ab|all|knobs|first|feed|probe|first+probe]
# knobs/first/feed take CONFIGS (';'-separated sets of VAR=value; an empty set: the defaults)
set -u
STEP=${1:-all}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export OUT=${OUT:-/tmp/gpu_session}; mkdir -p "$OUT"
H=.refbench
[ -d /tmp/ref420 ] || JPEG444= python3 $H/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
t0=$(date +%s)
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's')" 2>&1 | tail -3
if [ "$STEP" = tests ] || [ "$STEP" = all ]; then
  # -v names every test as it ends, so a run cut by the timeout still says which failed; the whole of
  # tests/gpu is past one 600 s call (session 13: 4 files 80 s, 11 others 250 s, 6 more under 66 s, plus set-up), so split it
  timeout "${TESTS_TIMEOUT:-330}" python3 -m pytest -o addopts= -v -rf -p no:cacheprovider ${TESTS:-tests/gpu} \
    --durations=12 > "$OUT/gpu_tests.txt" 2>&1
  grep -E "FAILED|ERROR|passed|failed" "$OUT/gpu_tests.txt" | tail -25
fi
echo "after tests: $(( $(date +%s) - t0 )) s"
if [ "$STEP" = knobs ]; then
  # CONFIGS: ';'-separated sets of VAR=value (empty: the defaults); KINDS: profile_ref kinds
  IFS=';' read -ra SETS <<< "${CONFIGS:-}"
  for cfg in "${SETS[@]}"; do
    env $cfg timeout 170 python3 bench/profile_ref.py --kinds "${KINDS:-fused,unfused,val}" --data /tmp/ref420 \
      --seconds "${SECONDS_EACH:-5}" --out "$OUT/knobs.json" 2>&1 | CFG="$cfg" python3 -c "
import json, os, sys
for line in sys.stdin:
    r = json.loads(line) if line.startswith('{') else None
    if r is None: continue
    r['config'] = os.environ['CFG']
    open(os.environ['OUT'] + '/knobs.jsonl', 'a').write(json.dumps(r) + chr(10))
    dec = [(k, v.get('hw_share_permille'), v.get('hardware'), v.get('hybrid'), v.get('hardware_us'), v.get('hybrid_us'))
           for k, v in (r.get('decoders') or {}).items() if isinstance(v, dict)]
    print('==', os.environ['CFG'] or 'defaults', r['kind'], 'img/s', r.get('images_per_s'), 'mem', r.get('gpu_mem_mib'),
          'peak', r.get('torch_peak_mib'), 'reserved', r.get('torch_reserved_mib'), 'streams', list((r.get('segments_by_stream') or {}).values())[:6], 'first', r.get('first_batch_s'), dec,
          r.get('error', '')[-400:])
"
  done
fi
if [ "$STEP" = first ] || [ "$STEP" = first+probe ]; then
  # first batch in fresh processes, each of CONFIGS (';'-separated VAR=value sets) REPEAT times
  IFS=';' read -ra SETS <<< "${CONFIGS:-}"
  for r in $(seq "${REPEAT:-2}"); do
    for cfg in "${SETS[@]}"; do
      env $cfg timeout 60 python3 bench/first_batch.py "${KIND:-fused}" /tmp/ref420 2>&1 | tail -1 | CFG="$cfg" python3 -c "
import json, os, sys
line = sys.stdin.read().strip()
r = json.loads(line) if line.startswith('{') else {'error': line[-300:]}
r['config'] = os.environ['CFG']
open(os.environ['OUT'] + '/first.jsonl', 'a').write(json.dumps(r) + chr(10))
print('== first', r['config'] or 'defaults', r.get('total_s', r.get('first_batch_s')), {k: v for k, v in (r.get('decoder_build_us') or r.get('build_stats') or {}).items()}, r.get('error', ''))
"
    done
  done
fi
if [ "$STEP" = feed ]; then
  # ResNet-50 fed by each MODE (train_feed.py: synthetic, td, tdl) under each CONFIGS set
  IFS=';' read -ra SETS <<< "${CONFIGS:-}"
  for mode in ${MODES:-synthetic td tdl}; do
    for cfg in "${SETS[@]}"; do
      [ "$mode" = synthetic ] && [ -n "$cfg" ] && continue
      env $cfg timeout 120 python3 $H/train_feed.py /tmp/ref420 $mode "${STEPS:-60}" 2>&1 | tail -1 | CFG="$cfg" python3 -c "
import json, os, sys
line = sys.stdin.read().strip()
r = json.loads(line) if line.startswith('{') else {'error': line[-300:]}
r['config'] = os.environ['CFG']
open(os.environ['OUT'] + '/feed.jsonl', 'a').write(json.dumps(r) + chr(10))
print('== feed', r.get('what'), r['config'] or 'defaults', r.get('img_per_s'), r.get('error', ''))
"
    done
  done
fi
if [ "$STEP" = probe ] || [ "$STEP" = first+probe ]; then
  # feed_probe.py (what the training step waits for) per MODE (synthetic td tdl dali) and CONFIGS set
  IFS=';' read -ra SETS <<< "${CONFIGS:-}"
  for mode in ${MODES:-synthetic td tdl}; do
    for cfg in "${SETS[@]}"; do
      [ "$mode" = synthetic ] && [ -n "$cfg" ] && [ "${cfg#*PROBE_}" = "$cfg" ] && continue
      env $cfg timeout 120 python3 bench/feed_probe.py /tmp/ref420 $mode "${STEPS:-60}" 2>&1 | tail -1 | CFG="$cfg" python3 -c "
import json, os, sys
line = sys.stdin.read().strip()
r = json.loads(line) if line.startswith('{') else {'error': line[-300:]}
r['config'] = os.environ['CFG']
open(os.environ['OUT'] + '/probe.jsonl', 'a').write(json.dumps(r) + chr(10))
print('== probe', r.get('what'), r['config'] or 'defaults', r.get('images_per_s'), 'next', r.get('host_next_ms'), 'issue', r.get('host_issue_ms'),
      'gpu wait', r.get('gpu_wait_ms'), 'gpu step', r.get('gpu_step_ms'), 'gap', r.get('gpu_gap_ms'), 'cpu/step', r.get('process_cpu_s_per_step'), r.get('error', ''))
"
    done
  done
fi
if [ "$STEP" = ab ] || [ "$STEP" = all ]; then
  for cfg in "ROI=1" "ROI=0" "ROI=1 LANES=2" "ROI=1 LANES=1" "ROI=1 GPU_ON_LANES=0"; do
    roi=${cfg#ROI=}; roi=${roi%% *}; lanes=3; case "$cfg" in *" LANES="*) lanes=${cfg##*LANES=};; esac
    onl=1; case "$cfg" in *GPU_ON_LANES=0*) onl=0;; esac
    TORCH_DALI_ROI_DECODE=$roi TORCH_DALI_MIXED_LANES=$lanes TORCH_DALI_GPU_ON_LANES=$onl timeout 90 python3 bench/profile_ref.py \
      --kinds fused,val --data /tmp/ref420 --seconds 5 --out "$OUT/ab.json" 2>&1 | python3 -c "
import json, sys
for line in sys.stdin:
    r = json.loads(line) if line.startswith('{') else None
    if r is None: continue
    print('== $cfg', r['kind'], 'img/s', r.get('images_per_s'), 'mem MiB', r.get('gpu_mem_mib'), 'torch peak MiB',
          r.get('torch_peak_mib'), 'first', r.get('first_batch_s'), 'staged', (r.get('memory_stats') or {}), r.get('error', '')[-600:])
" | tee -a "$OUT/ab.txt"
  done
fi
echo "total: $(( $(date +%s) - t0 )) s"
