#!/usr/bin/env bash
# Session 34: one judge round (../shared/bench/reference.sh 1, carried as .refbench) beside DALI 2.4
# on the warm machine DALI was carried to, with the extension cache of session 33 (carry
# [".refbench", ".ext-carry"]). Extra environment (e.g. TORCH_DALI_QUEUE_PROBE=1) reaches every
# torch_dali run.   OUT=$OUT TAG=judge1 bash bench/diag/s34_judge.sh
set -u
export PYTHONUNBUFFERED=1
if [ ! -d /tmp/ext_new ]; then
  mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new
fi
export TORCH_DALI_EXT_DIR=/tmp/ext_new
t0=$(date +%s)
PYTHONPATH=$PWD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
echo "extension ready in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
env | grep '^TORCH_DALI_' | sort
mkdir -p "$OUT/${TAG:-judge}"
OUT=$OUT/${TAG:-judge} bash .refbench/reference.sh 1
[ -f "$OUT/ext_cache.tgz" ] || [ -n "${NO_CACHE:-}" ] || tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new .
