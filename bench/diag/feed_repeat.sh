#!/usr/bin/env bash
# Reruns the judge's feed run of the fused recipe through DALIGenericIterator (train_feed.py td)
# RUNS times, each with its stderr kept and every thread's stack printed after STALL_S seconds
# without a batch: session 18's judge round got no result line from this run (within its 150 s),
# and three runs after it did not repeat that. Results and stderr files under $OUT (tarred).
#   OUT=$OUT RUNS=6 bash bench/diag/feed_repeat.sh      (GPU machine; .refbench carried)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_repeat}; mkdir -p "$OUT/runs"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
for i in $(seq "${RUNS:-6}"); do
  t0=$(date +%s)
  TORCH_DALI_STALL_DUMP_S=${STALL_S:-40} timeout "${RUN_TIMEOUT:-150}" python3 .refbench/train_feed.py /tmp/ref420 "${MODE:-td}" 60 \
    > "$OUT/runs/$i.out" 2> "$OUT/runs/$i.err"
  rc=$?
  echo "run $i rc=$rc $(( $(date +%s) - t0 )) s $(grep -h '"what"' "$OUT/runs/$i.out" | cut -c1-160)"
  [ "$rc" != 0 ] && grep -v "UserWarning\|Consider using\|loss=float" "$OUT/runs/$i.err" | tail -30
done
tar czf "$OUT/runs.tgz" -C "$OUT" runs && rm -rf "$OUT/runs"
