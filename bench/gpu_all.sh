#!/usr/bin/env bash
# Everything the GPU machine has to show, in one call (device time is scarce). Run from the repo
# root on the GPU machine; results go to $OUT (or ./gpu_out). If DALI was carried over first
# (../shared/tools/dali_carry.sh, four calls), it is measured in the same run.
set -u
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if [ -d /tmp/dali-site ]; then
  export PYTHONPATH=$PYTHONPATH:/tmp/dali-site
  export LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}
fi
python3 -c "import torch_dali._extension as e; e.load(); print(e.status())" 2>&1 | tail -1
python3 -m pytest -q -x tests/gpu -p no:cacheprovider 2>&1 | tail -5 | tee "$OUT/gpu_tests.txt"
python3 -c "
import os, tempfile
from torch_dali.sample_data import make_sample_dataset
d = tempfile.mkdtemp(); make_sample_dataset(d, images_per_class=4); print(d)" > "$OUT/sample_dir.txt"
IMAGE_DIR=$(cat "$OUT/sample_dir.txt")/images python3 examples/mission/python_operators_gpu.py 2>&1 | grep -v Warn | tee "$OUT/python_operators_gpu.txt"
python3 bench/throughput.py --images ${IMAGES:-8192} --batch-size 256 --batches ${BATCHES:-20} --q95 \
  --out "$OUT/gpu_session.json" 2>&1 | grep -v "Warning\|warn" | tail -40
