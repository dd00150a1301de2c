#!/usr/bin/env bash
# Catches the fused recipe's feed hang in the act: train_feed.py td (DALIGenericIterator, ResNet-50
# beside it) run up to RUNS times; a run still going after STALL_S seconds gets every native
# thread's stack taken with cuda-gdb (attached; the machine has no gdb) and nvidia-smi's view, then
# is killed. Session 19's first call saw 1 hang in 4 runs: the three decoding lanes all inside the
# extension's decode(), which Python stacks cannot see into. Stops starting runs after BUDGET_S.
#   OUT=$OUT RUNS=14 bash bench/diag/feed_hang.sh      (GPU machine; .refbench carried)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_hang}; mkdir -p "$OUT/runs"
t0=$(date +%s)
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
hangs=0
for i in $(seq "${RUNS:-14}"); do
  [ $(( $(date +%s) - t0 )) -gt "${BUDGET_S:-420}" ] && { echo "budget: stopped before run $i"; break; }
  s=$(date +%s)
  TORCH_DALI_STALL_DUMP_S=${PY_DUMP_S:-35} python3 .refbench/train_feed.py /tmp/ref420 "${MODE:-td}" 60 \
    > "$OUT/runs/$i.out" 2> "$OUT/runs/$i.err" &
  pid=$!
  while kill -0 $pid 2>/dev/null && [ $(( $(date +%s) - s )) -lt "${STALL_S:-50}" ]; do sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    hangs=$((hangs + 1))
    echo "run $i: still running after ${STALL_S:-50} s: native stacks"
    nvidia-smi --query-gpu=utilization.gpu,memory.used,clocks.sm --format=csv > "$OUT/runs/$i.smi" 2>&1
    nvidia-smi -q -d PERFORMANCE,UTILIZATION >> "$OUT/runs/$i.smi" 2>&1
    timeout 150 cuda-gdb -q -batch -p $pid -ex "set pagination off" -ex "info threads" \
      -ex "thread apply all bt 30" > "$OUT/runs/$i.gdb" 2>&1
    echo "  cuda-gdb rc=$? $(wc -l < "$OUT/runs/$i.gdb") lines"
    grep -c "nvjpeg\|NvJpeg" "$OUT/runs/$i.gdb"
    cp "$OUT/runs/$i.gdb" "$OUT/hang_$i.gdb"; cp "$OUT/runs/$i.err" "$OUT/hang_$i.err"  # back even if the call is cut
    kill -9 $pid; wait $pid 2>/dev/null
    [ "$hangs" -ge "${MAX_HANGS:-2}" ] && break
  else
    wait $pid; rc=$?
    echo "run $i rc=$rc $(( $(date +%s) - s )) s $(grep -h '"what"' "$OUT/runs/$i.out" | cut -c1-120)"
  fi
done
echo "hangs: $hangs"
tar czf "$OUT/runs.tgz" -C "$OUT" runs && rm -rf "$OUT/runs"
