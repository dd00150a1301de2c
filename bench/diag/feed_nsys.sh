#!/usr/bin/env bash
# What GPU work runs beside ResNet-50's training when a loader feeds it (the feed ratio's open
# question, session 12: the step's GPU time grows ~1.3 ms median, 2.6 ms mean, and the loader's own
# kernels should be far less). Nsight Systems over bench/feed_probe.py for MODES (default synthetic
# and td), then per mode the kernel summary: every kernel's total GPU time, so the loader's kernels
# (nvJPEG's, ours) per training step can be read beside the training's.
#   OUT=$OUT STEPS=40 [MODES='synthetic td dali'] bash bench/diag/feed_nsys.sh  (GPU machine; dali: DALI in /tmp/dali-site)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_nsys}; mkdir -p "$OUT"
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
[ -n "$NSYS" ] || { echo "no nsys here"; exit 1; }
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
for mode in ${MODES:-synthetic td}; do
  ENVS=""
  [ "$mode" = dali ] && ENVS="PYTHONPATH=/tmp/dali-site:$PWD LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
  env $ENVS timeout 300 "$NSYS" profile -t cuda -s none --cpuctxsw none -o "$OUT/$mode" --force-overwrite true \
    python3 bench/feed_probe.py /tmp/ref420 "$mode" "${STEPS:-40}" 2>&1 | grep '^{' | cut -c1-300
  "$NSYS" stats -q --report cuda_gpu_kern_sum,cuda_api_sum --format csv -o "$OUT/$mode" "$OUT/$mode.nsys-rep" >/dev/null 2>&1
  [ -f "$OUT/$mode.sqlite" ] || "$NSYS" export --type sqlite -o "$OUT/$mode.sqlite" "$OUT/$mode.nsys-rep" >/dev/null 2>&1
  # per stream: the training's busy and idle time, the loader's kernels that overlapped it
  python3 bench/diag/nsys_streams.py "$OUT/$mode.sqlite" "$mode" | tee -a "$OUT/streams.jsonl" | cut -c1-1500
  # host calls that can stall the device or the caller (allocation, frees, synchronisation)
  python3 - "$OUT/${mode}_cuda_api_sum.csv" <<'PY'
import csv, sys
for r in sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: -float(r["Total Time (ns)"]))[:14]:
    print(f"  api {float(r['Total Time (ns)']) / 1e6:9.1f} ms  {int(r['Num Calls']):7d}x  {r['Name']}")
PY
  rm -f "$OUT/$mode.sqlite" "$OUT/$mode.nsys-rep"
  python3 - "$OUT/${mode}_cuda_gpu_kern_sum.csv" "$mode" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
total = sum(float(r["Total Time (ns)"]) for r in rows)
print(f"== {sys.argv[2]}: {len(rows)} kernels, {total / 1e6:.1f} ms GPU time in all; the 12 longest:")
for r in sorted(rows, key=lambda r: -float(r["Total Time (ns)"]))[:12]:
    print(f"  {float(r['Total Time (ns)']) / 1e6:9.1f} ms  {int(r['Instances']):6d}x  {r['Name'][:90]}")
PY
done
