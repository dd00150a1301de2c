#!/usr/bin/env bash
# Session 32's third device call (carry [".refbench", ".ext-carry"]): ResNet-50 fed (the judge's
# train_feed.py) with and without the hardware-queue probe, and with the windows' non-engine share
# on the host instead of the CUDA backend (HW_SHARE 1 + CPU_SHARE 0.1), alternating; DALI beside
# them where /tmp/dali-site exists (add 'dali' to RUNS).  OUT=$OUT bash bench/diag/s32_call3.sh  (~5 min)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
mkdir -p /tmp/ext_new
[ -f .ext-carry/ext_cache.tgz ] && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
export TORCH_DALI_EXT_DIR=/tmp/ext_new
S='TORCH_DALI_NVJPEG_HW_SHARE=1 TORCH_DALI_NVJPEG_CPU_SHARE=0.1'
OUT=$OUT/feed ROUNDS=${FEED_ROUNDS:-2} STEPS=${STEPS:-120} \
  RUNS=${RUNS:-"synthetic;td;td TORCH_DALI_QUEUE_PROBE=1;td $S;tdl;tdl TORCH_DALI_QUEUE_PROBE=1;tdl $S"} \
  bash bench/diag/feed_rounds.sh 2>&1 | tail -16
