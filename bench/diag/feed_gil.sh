#!/usr/bin/env bash
# Issue 12's feed gap (DALI 0.95-0.96 of synthetic, torch_dali 0.93-0.94): which threads hold the
# GIL while ResNet-50 trains on the loader's batches? train_feed.py runs under py-spy in --gil mode
# (only the thread holding the GIL is sampled), once per MODE, and bench/diag/gil_summary.py ranks
# the threads and lines. py-spy is not on the GPU machine: carry its wheel
# (`.venv/bin/pip download py-spy --no-deps -d .whl` here; carry [".whl", ".refbench"]).
#   OUT=$OUT MODES="td tdl" bash bench/diag/feed_gil.sh      (GPU machine)
# Sampling costs the process some speed: compare its images/s with an unsampled run of the same call.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/feed_gil}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps .whl/py_spy-*.whl 2>&1 | tail -1
command -v py-spy >/dev/null || { echo "py-spy not installed (carry .whl/py_spy-*.whl)"; exit 1; }
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
for mode in ${MODES:-td tdl}; do
  timeout "${RUN_TIMEOUT:-200}" py-spy record --gil --threads -r "${RATE:-200}" -f raw -o "$OUT/gil_$mode.txt" \
    -- python3 .refbench/train_feed.py /tmp/ref420 "$mode" "${STEPS:-120}" > "$OUT/$mode.out" 2> "$OUT/$mode.err"
  echo "$mode rc=$? $(grep -h '"what"' "$OUT/$mode.out" | cut -c1-200)"
  python3 bench/diag/gil_summary.py "$OUT/gil_$mode.txt" > "$OUT/gil_$mode.summary.txt" && head -40 "$OUT/gil_$mode.summary.txt"
done
