set -u
export PYTHONUNBUFFERED=1
python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
DL="env PYTHONPATH=/tmp/dali-site LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
for i in 1 2 3; do
  PYTHONPATH=$PWD timeout 60 python3 bench/diag/epoch_steady.py torch_dali /tmp/ref420.rec seed 8 2>&1 | grep '^{' | tee -a $OUT/seed_steady.jsonl | cut -c1-330
  $DL timeout 60 python3 bench/diag/epoch_steady.py nvidia.dali /tmp/ref420.rec seed 8 2>&1 | grep '^{' | tee -a $OUT/seed_steady.jsonl | cut -c1-330
done
