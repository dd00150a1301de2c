#!/usr/bin/env bash
# GPU tests on the device machine, the CUDA extension built (or loaded) first; the pytest log goes
# to $OUT/NAME.txt and its summary lines to stdout.
#   OUT=$OUT [TESTS_S=420] bash bench/diag/gpu_tests.sh NAME TEST_FILE...
# Session 23: NAME=gpu_tests with tests/gpu/test_gpu_color_ops.py test_gpu_pipeline.py
# test_gpu_rerun.py test_gpu_streams.py test_gpu_tensor_ops.py test_gpu_fused.py and
# tests/test_batch_buffers.py test_cpu_color.py test_mission_examples.py (the CPU color matrices
# against CUDA, reused CPU batch memory under GPU pipelines, the user's two examples on CUDA).
set -u
name=$1; shift
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
t0=$(date +%s)
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
timeout "${TESTS_S:-420}" python3 -m pytest -o addopts= -v -rf -p no:cacheprovider --durations=8 "$@" > "$OUT/$name.txt" 2>&1
echo "pytest rc=$?"
grep -E "FAILED|ERROR|passed|failed" "$OUT/$name.txt" | tail -20
echo "done $(( $(date +%s) - t0 )) s"
