#!/usr/bin/env bash
# Next device session's first call (prepared in session 29, no GPU lent then): builds the CUDA
# extension (csrc changed: NvJpegDecoder.decode_packed; the carried cache holds the other objects,
# so ninja recompiles only what changed), then the GPU tests that cover session 28's and 29's
# unrun changes (fused-kernel arguments from NumPy, the decoder's GPU candidates, branch inputs,
# packed reader batches through the mixed decoder, decode_packed == decode bit for bit).
#   OUT=$OUT bash bench/diag/s30_call1.sh      (carry [".refbench", ".ext-carry", ".ab-old"]; ~6-8 min)
set -u
export PYTHONUNBUFFERED=1
mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
export TORCH_DALI_EXT_DIR=/tmp/ext_new
TESTS_S=${TESTS_S:-420} bash bench/diag/gpu_tests.sh gpu_tests \
  tests/gpu/test_extension.py tests/gpu/test_gpu_pipeline.py tests/gpu/test_gpu_fused.py \
  tests/gpu/test_gpu_rerun.py tests/gpu/test_gpu_streams.py tests/gpu/test_gpu_resize_roi.py \
  tests/gpu/test_gpu_color_ops.py tests/test_streams.py tests/test_mission_examples.py tests/test_packed_samples.py
# the built cache for the later calls (and the next sessions), with the old code's key beside it
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new . && ls -la "$OUT/ext_cache.tgz"
