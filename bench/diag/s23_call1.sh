#!/usr/bin/env bash
# Session 23's GPU tests: the CPU color matrices (hsv / color_twist / RGB->YCbCr in C; one
# sample's matrix on Python floats) against the CUDA results (test_gpu_color_ops), the executor's
# reused CPU batch memory under GPU pipelines (test_gpu_pipeline, test_gpu_rerun, test_gpu_streams,
# test_gpu_tensor_ops: full / full_like), the fused kernels, and the user's two examples (their GPU
# variant on CUDA), with the extension built first.
#   OUT=$OUT bash bench/diag/s23_call1.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout "${TESTS_S:-420}" python3 -m pytest -o addopts= -v -rf -p no:cacheprovider --durations=8 \
  tests/gpu/test_gpu_color_ops.py tests/gpu/test_gpu_pipeline.py tests/gpu/test_gpu_rerun.py \
  tests/gpu/test_gpu_streams.py tests/gpu/test_gpu_tensor_ops.py tests/gpu/test_gpu_fused.py \
  tests/test_batch_buffers.py tests/test_cpu_color.py tests/test_mission_examples.py > "$OUT/gpu_tests.txt" 2>&1
echo "pytest rc=$?"
grep -E "FAILED|ERROR|passed|failed" "$OUT/gpu_tests.txt" | tail -20
echo "done $(( $(date +%s) - t0 )) s"
