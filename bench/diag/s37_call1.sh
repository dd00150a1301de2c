#!/usr/bin/env bash
# Session 37, first device call (carry [".ext-carry"]): the extension from the carried cache
# (rebuilt: the decoder's first-batch rule changed its C++ after the cache was made), every GPU
# test (tests/gpu/, the first-batch rule's new test among them) and the user's two examples on CUDA.
#   OUT=$OUT bash bench/diag/s37_call1.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
TESTS_S=${TESTS_S:-480} bash bench/diag/gpu_tests.sh gpu_tests tests/gpu tests/test_mission_examples.py
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new .
