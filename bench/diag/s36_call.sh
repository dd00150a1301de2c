#!/usr/bin/env bash
# Session 36 device call (carry [".refbench", ".ext-carry", ".gpuconf"]): the fused reference
# pipeline's GPU memory under a few decoder settings (bench/diag/s36_mem.py, both data sets), then
# DALI's test files and nose2/scipy put in /tmp for the conformance call after it.
#   OUT=$OUT bash bench/diag/s36_call.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
[ -d /tmp/ext_new ] || { mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new; }
[ -d /tmp/ref420 ] || JPEG444= python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
[ -d /tmp/ref444 ] || JPEG444=1 python3 .refbench/bench_anchors.py gen /tmp/ref444 8192 | grep dataset
run() { env "$@" PYTHONPATH=$PWD timeout 90 python3 bench/diag/s36_mem.py "${D}" "$*" 2>&1 | grep -E '^\{|Error' | cut -c1-900; }
for D in /tmp/ref444 /tmp/ref420; do
  run X=default
  run TORCH_DALI_NVJPEG_PREALLOCATE=0
  run TORCH_DALI_NVJPEG_SHARED_HW_HANDLE=1
  run TORCH_DALI_NVJPEG_CUDA_STATES=2
  run TORCH_DALI_NVJPEG_ARENA=1
  run TORCH_DALI_OUTPUT_HELD_COUNTS=1
  run TORCH_DALI_DECODE_PERMITS=1
  run PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
done
rm -rf /tmp/gpuconf && cp -r .gpuconf /tmp/gpuconf
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/conf-site /tmp/gpuconf/wheels/*.whl 2>&1 | tail -2
