#!/usr/bin/env bash
# Session 35, last device call (carry [".ext-carry"]): the GPU tests of this session's fixes and
# new modules (ndd arithmetic beside GPU operands; the float32 colour matrices; experimental.torchvision and the PyTorch proxy on
# the GPU), with the GPU tests nearest them.   OUT=$OUT bash bench/diag/s35_call3.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
nvidia-smi --query-gpu=name --format=csv,noheader
TESTS_S=200 bash bench/diag/gpu_tests.sh gpu_tests_s35c3 tests/gpu/test_gpu_ndd_streams.py \
  tests/gpu/test_gpu_torchvision_proxy.py tests/gpu/test_gpu_color_ops.py tests/test_experimental_torchvision.py \
  tests/test_dali_proxy.py
grep -E "FAILED|Error" "$OUT/gpu_tests_s35c3.txt" | head -30
