#!/usr/bin/env bash
# ResNet-50 fed by torch_dali (train_feed.py, the judge's feed run) under several settings, in
# rotating order each round, with synthetic-data runs first and last for the ratio. For the feed
# ratio (0.92-0.95 against DALI's 0.96): settings not yet tried on the feed are fewer decoding lanes
# (DALI has one mixed stage; ours race three batches to fill the prefetch queue) and fewer permits.
#   OUT=$OUT MODES="td tdl" ROUNDS=3 CONFIGS=";TORCH_DALI_MIXED_LANES=2;TORCH_DALI_MIXED_LANES=1" \
#     bash bench/diag/feed_sweep.sh        (GPU machine; .refbench carried)
set -u
export PYTHONUNBUFFERED=1
H=.refbench; OUT=${OUT:-/tmp/feed_sweep}; mkdir -p "$OUT"; t0=$(date +%s)
[ -d /tmp/ref420 ] || python3 $H/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
PYTHONPATH=$PWD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
IFS=';' read -ra SETS <<< "${CONFIGS:-}"
[ ${#SETS[@]} -eq 0 ] && SETS=("")
one() {  # mode config round
  [ $(( $(date +%s) - t0 )) -gt "${BUDGET_S:-480}" ] && { echo "budget: skipped $1 [$2]"; return; }
  env $2 PYTHONPATH=$PWD timeout "${RUN_S:-60}" python3 $H/train_feed.py /tmp/ref420 "$1" "${STEPS:-60}" 2>&1 | grep '^{' \
    | CFG="$2" ROUND="$3" python3 -c "
import json, os, sys
for l in sys.stdin:
    r = json.loads(l); r.update(config=os.environ['CFG'], round=int(os.environ['ROUND'])); print(json.dumps(r))" \
    | tee -a "$OUT/feed_sweep.jsonl" | cut -c1-150
}
one synthetic "" 0
for r in $(seq "${ROUNDS:-3}"); do
  n=${#SETS[@]}
  for mode in ${MODES:-td tdl}; do
    for k in $(seq 0 $((n - 1))); do one "$mode" "${SETS[$(( (k + r) % n ))]}" "$r"; done
  done
done
one synthetic "" 99
python3 - "$OUT/feed_sweep.jsonl" <<'PY'
import json, statistics, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1])]
syn = statistics.median([r["img_per_s"] for r in rows if r["what"] == "train_feed_synthetic"] or [float("nan")])
got = defaultdict(list)
for r in rows:
    if r["what"] != "train_feed_synthetic":
        got[(r["what"], r["config"])].append(r["img_per_s"])
print(f"synthetic median {syn:.1f}")
for (what, cfg), v in sorted(got.items()):
    m = statistics.median(v)
    print(f"{what:16s} {cfg or 'defaults':45s} n={len(v)} median={m:7.1f} ratio={m / syn:.3f} {[round(x) for x in v]}")
PY
echo "all done $(( $(date +%s) - t0 )) s"
