#!/usr/bin/env bash
# Session 36, after the DALI carry (carry [".refbench", ".ext-carry"]): the extension rebuilt with
# the trimmed CUDA-backend states (hw_load 1), its GPU tests and the proxy's exit tests, then the
# fused reference rows beside DALI 2.4 (the judge's bench_anchors.py, both data sets, alternating,
# ROUNDS rounds).   OUT=$OUT ROUNDS=2 bash bench/diag/s36_call2.sh
set -u
export PYTHONUNBUFFERED=1 TORCH_DALI_EXT_DIR=/tmp/ext_new
[ -d /tmp/ext_new ] || { mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new; }
t0=$(date +%s)
PYTHONPATH=$PWD python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None, e.load_error())" 2>&1 | tail -1
echo "extension ready in $(( $(date +%s) - t0 )) s"
tar czf "$OUT/ext_cache.tgz" -C /tmp/ext_new .
timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/gpu/test_extension.py 2>&1 | tail -4
timeout 60 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_dali_proxy.py -k "exit" 2>&1 | tail -2
[ -d /tmp/ref420 ] || JPEG444= python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | grep dataset
[ -d /tmp/ref444 ] || JPEG444=1 python3 .refbench/bench_anchors.py gen /tmp/ref444 8192 | grep dataset
TD="env PYTHONPATH=$PWD"
DL="env PYTHONPATH=/tmp/dali-site LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
mkdir -p "$OUT/rows"
for r in $(seq "${ROUNDS:-2}"); do
  for D in /tmp/ref444 /tmp/ref420; do
    $TD OUT=$OUT/rows timeout 100 python3 .refbench/bench_anchors.py td $D fused:1.0 2>&1 | grep '"what": "torch_dali' | cut -c1-300
    $DL OUT=$OUT/rows timeout 100 python3 .refbench/bench_anchors.py dali $D fused:1.0 2>&1 | grep '"what": "dali' | cut -c1-300
  done
done
