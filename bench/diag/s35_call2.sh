#!/usr/bin/env bash
# Session 35, second device call (carry [".gpucv"]), on the machine s35_call1.sh left warm: DALI's
# own tests on the GPU, torch_dali's side only, against session 17's control baseline (real DALI 2.4
# on an H200: bench/results/h200_2026-12-03_s17/gpu_baseline.json).
#   OUT=$OUT bash bench/diag/s35_call2.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
t0=$(date +%s)
SIDE=ours TESTS=/tmp/gpuconf/tests WHEELS=.gpucv/wheels BUDGET=${BUDGET:-240} JOBS=14 \
  BASELINE=bench/results/h200_2026-12-03_s17/gpu_baseline.json \
  timeout "${CONF_S:-540}" bash conformance/gpu.sh 2>&1 | tail -15
echo "conformance done $(( $(date +%s) - t0 )) s"
grep -m3 "passes" "$OUT/conformance_gpu.md" 2>/dev/null
