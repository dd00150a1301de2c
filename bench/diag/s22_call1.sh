#!/usr/bin/env bash
# Session 22's one device call: session 21 moved the warp family's CPU resampling into C
# (cpu_warp.c) and routed the CUDA warp_perspective through _dispatch.call; the GPU tests that hold
# the warp ops' CPU and CUDA results together (geometry ops, auto-augment, bbox rotate) and the
# user's two examples (tests/test_mission_examples.py, on the GPU machine their GPU variant runs on
# CUDA), with the extension built first.
#   OUT=$OUT bash bench/diag/s22_call1.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout "${TESTS_S:-420}" python3 -m pytest -o addopts= -v -rf -p no:cacheprovider --durations=8 \
  tests/gpu/test_gpu_geometry_ops.py tests/gpu/test_gpu_auto_aug.py tests/gpu/test_gpu_bbox_rotate.py \
  tests/test_cpu_warp.py tests/test_mission_examples.py > "$OUT/gpu_tests.txt" 2>&1
echo "pytest rc=$?"
grep -E "FAILED|ERROR|passed|failed" "$OUT/gpu_tests.txt" | tail -20
echo "done $(( $(date +%s) - t0 )) s"
