#!/usr/bin/env bash
# Session 32's first device call: builds the extension (now with the hardware-queue probe, a fresh
# build), shows which streams share a hardware queue (bench/diag/queue_probe.py, 8 and 32 queues),
# libjpeg-turbo's window decode rate on the host's cores
# (bench/diag/cpu_roi_rate.py; needs .refbench carried), then every GPU test file and the user's two examples; the build cache goes back under $OUT.
#   OUT=$OUT bash bench/diag/s32_call1.sh      (~8-10 min)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
mkdir -p /tmp/ext_new
[ -f .ext-carry/ext_cache.tgz ] && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
export TORCH_DALI_EXT_DIR=/tmp/ext_new
python3 -c "from torch_dali._native import extension as e; import time; t=time.time(); m=e.load(); print('extension', m is not None, round(time.time()-t,1), 's', e.load_error())" 2>&1 | tail -2
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new . && ls -la "$OUT/ext_cache.tgz"
timeout 60 python3 bench/diag/queue_probe.py 2>&1 | tail -3
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 60 python3 bench/diag/queue_probe.py 2>&1 | tail -3
[ -d /tmp/q444s ] || JPEG444=1 python3 .refbench/bench_anchors.py gen /tmp/q444s 512 | tail -1
timeout 60 python3 bench/diag/cpu_roi_rate.py /tmp/q444s 2>&1 | tail -2
TESTS_S=${TESTS_S:-400} bash bench/diag/gpu_tests.sh gpu_tests tests/gpu tests/test_mission_examples.py
