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
G=tests/gpu  # most wanted first: the call's time limit may cut the last files
TESTS_S=${TESTS_S:-330} bash bench/diag/gpu_tests.sh gpu_tests $G/test_gpu_queue_probe.py $G/test_gpu_cpu_share.py \
  $G/test_gpu_ragged.py $G/test_gpu_auto_aug.py tests/test_mission_examples.py $G/test_extension.py \
  $G/test_gpu_pipeline.py $G/test_gpu_fused.py $G/test_gpu_rerun.py $G/test_gpu_streams.py $G/test_gpu_resize_roi.py \
  $G/test_gpu_bad_data.py $G/test_gpu_detection.py $G/test_gpu_python_function.py $G/test_gpu_color_ops.py \
  $G/test_gpu_debayer.py $G/test_gpu_bbox_rotate.py $G/test_gpu_arg_extremes.py $G/test_gpu_dump_image.py \
  $G/test_gpu_eager.py $G/test_gpu_experimental_resize.py $G/test_gpu_io_file.py $G/test_gpu_readers_sequence.py \
  $G/test_gpu_tensor_ops.py $G/test_gpu_audio.py $G/test_gpu_geometry_ops.py
