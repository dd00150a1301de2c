#!/usr/bin/env bash
# Session 35, first device call (carry [".gpuconf", ".ext-carry"]): the extension from the carried
# cache (built if its sources changed), every GPU test (tests/gpu/, among them session 34's unrun
# test_gpu_filter_fma.py and test_gpu_ndd_streams.py) and the user's two examples on CUDA; then
# DALI's test files and nose2/scipy put in /tmp for the conformance call that follows.
#   OUT=$OUT bash bench/diag/s35_call1.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
TESTS_S=330 bash bench/diag/gpu_tests.sh gpu_tests tests/gpu tests/test_mission_examples.py
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new .
rm -rf /tmp/gpuconf && cp -r .gpuconf /tmp/gpuconf
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/conf-site /tmp/gpuconf/wheels/*.whl 2>&1 | tail -2
ls /tmp/conf-site | head -20
