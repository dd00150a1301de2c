#!/usr/bin/env bash
# The judge's feed runs (train_feed.py: ResNet-50, bf16, channels_last, fed by each library), ROUNDS
# rounds of RUNS alternating in one call, each run in its own process, STEPS timed steps (the judge
# times 60, too few to tell 1% apart). RUNS: ';'-separated "mode [VAR=value ...]" (mode: synthetic,
# dali, td = the fused recipe through DALIGenericIterator, tdl = torch_dali.DataLoader). Each run's
# line goes to $OUT/feed_rounds.jsonl with its config and round; the end prints, per config, the
# median images/s and its ratio to the same config's synthetic median (or the plain synthetic one).
#   OUT=$OUT ROUNDS=2 RUNS='synthetic;dali;td;tdl' bash bench/diag/feed_rounds.sh
# FEED_SCRIPT: another script with train_feed.py's arguments (bench/diag/feed_depth.py: FEED_DEPTH=N in a
# run's config sets the loader's prefetch depth). Needs .refbench carried; dali runs need DALI in /tmp/dali-site (../shared/tools/dali_carry.sh).
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_rounds}; mkdir -p "$OUT"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
DL="PYTHONPATH=/tmp/dali-site LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
IFS=';' read -ra LIST <<< "${RUNS:-synthetic;dali;td;tdl}"
for r in $(seq "${ROUNDS:-2}"); do
  for run in "${LIST[@]}"; do
    read -r mode cfg <<< "$run"
    envs=""; [ "$mode" = dali ] && envs=$DL
    env $envs ${cfg:-} timeout "${RUN_TIMEOUT:-150}" python3 ${FEED_SCRIPT:-.refbench/train_feed.py} /tmp/ref420 "$mode" "${STEPS:-200}" \
      2> "$OUT/err_last.txt" | grep '^{' | MODE=$mode CFG="${cfg:-}" ROUND=$r python3 -c "
import json, os, sys
for line in sys.stdin:
    rec = json.loads(line)
    rec.update(mode=os.environ['MODE'], config=os.environ['CFG'], round=int(os.environ['ROUND']))
    open(os.environ['OUT'] + '/feed_rounds.jsonl', 'a').write(json.dumps(rec) + chr(10))
    print('==', rec['round'], rec['mode'], rec['config'] or 'defaults', rec['img_per_s'], flush=True)
"
    [ "${PIPESTATUS[0]}" != 0 ] && echo "!! $run round $r failed" && grep -v Warning "$OUT/err_last.txt" | tail -4
  done
done
python3 - "$OUT/feed_rounds.jsonl" <<'EOF'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["mode"], r["config"])].append(r["img_per_s"])
syn = {cfg: statistics.median(v) for (mode, cfg), v in runs.items() if mode == "synthetic"}
for (mode, cfg), v in sorted(runs.items()):
    base = syn.get(cfg, syn.get(""))
    ratio = round(statistics.median(v) / base, 3) if base else None
    print(f"{mode:9s} {cfg or 'defaults':45s} median {statistics.median(v):8.1f}  of synthetic {ratio}  runs {v}")
EOF
