#!/usr/bin/env bash
# Session 32's second device call (after s32_call1.sh; carry [".refbench", ".ext-carry"]): the fused
# rows (DALI's ResNet-50 recipe, the judge's bench_anchors.py) with a CPU share of the windows
# (TORCH_DALI_NVJPEG_CPU_SHARE 0 / 0.2 / 0.3) on the 4:4:4 and 4:2:0 sets, alternating; DALI beside
# them where /tmp/dali-site exists.  OUT=$OUT bash bench/diag/s32_call2.sh   (~5 min)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
mkdir -p /tmp/ext_new
[ -f .ext-carry/ext_cache.tgz ] && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
export TORCH_DALI_EXT_DIR=/tmp/ext_new
SHARES=${SHARES:-';TORCH_DALI_NVJPEG_CPU_SHARE=0.2;TORCH_DALI_NVJPEG_CPU_SHARE=0.3'}
OUT=$OUT/ab444 DATA=/tmp/ref444 ROWS=fused:1.0 CONFIGS="$SHARES" ROUNDS=${ROUNDS:-2} bash bench/row_ab.sh 2>&1 | grep '^==\|^ratio'
OUT=$OUT/ab420 DATA=/tmp/ref420 ROWS=fused:1.0 CONFIGS="$SHARES" ROUNDS=${ROUNDS:-2} bash bench/row_ab.sh 2>&1 | grep '^==\|^ratio'
