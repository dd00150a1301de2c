#!/usr/bin/env bash
# Next device session's first call (prepared in session 31, which had 254 s of device time: only
# test_gpu_geometry_ops, test_gpu_ragged and test_gpu_auto_aug ran, without the extension). Builds
# the CUDA extension (from .ext-carry/ext_cache.tgz when carried; session 30's cache was lost with
# its machine, so a fresh build: several minutes), then every GPU test file: the CPU/CUDA bounds
# changed in session 31 (affine row walk, jpeg_compression_distortion against the torch spec),
# crop's border policies and resize of empty samples on CUDA (new on the CPU in session 31), and
# the files not run since session 27. The cache goes back under $OUT for the later calls.
#   OUT=$OUT bash bench/diag/s31_call1.sh      (carry [".ext-carry"] if present; ~8-10 min)
set -u
export PYTHONUNBUFFERED=1
mkdir -p /tmp/ext_new
[ -f .ext-carry/ext_cache.tgz ] && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
export TORCH_DALI_EXT_DIR=/tmp/ext_new
TESTS_S=${TESTS_S:-480} bash bench/diag/gpu_tests.sh gpu_tests tests/gpu tests/test_mission_examples.py
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new . && ls -la "$OUT/ext_cache.tgz"
