#!/usr/bin/env bash
# Everything one GPU machine has to show, in one call (device time is scarce). Run from the repo
# root on the GPU machine; results go to $OUT (or ./gpu_out). If DALI was carried over first
# (../shared/tools/dali_carry.sh, four calls), it is measured in the same run. On a machine with
# more than 16 cores the timed runs are pinned to 16 (the reference machine's count).
# STEPS picks parts (default "tests sweep throughput profile ddp"): the GPU tests and the user's
# Python-operators example on the GPU; the decoder sweeps on both data sets; the throughput run
# against DALI; where the time goes (stage split, CPU per thread group, GIL samples when a py-spy
# binary is at $PYSPY or .spy/py-spy); DDP over every GPU (skipped on one GPU), twice (it hung once).
set -u
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
STEPS=${STEPS:-tests sweep throughput profile ddp}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if [ -d /tmp/dali-site ]; then
  export PYTHONPATH=$PYTHONPATH:/tmp/dali-site
  export LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}
fi
PIN=""; [ "$(nproc)" -gt 16 ] && PIN="taskset -c 0-15"
nvidia-smi -L; python3 -c "import torch_dali._native as n; print(n.status(load=True))" 2>&1 | tail -1
if [[ " $STEPS " == *" tests "* ]]; then
  timeout 300 python3 -m pytest -q tests/gpu -p no:cacheprovider -p no:warnings 2>&1 | tail -8 | tee "$OUT/gpu_tests.txt"
  D=$(python3 -c "
import tempfile; from torch_dali.sample_data import make_sample_dataset
d = tempfile.mkdtemp(); make_sample_dataset(d, images_per_class=4); print(d)")
  IMAGE_DIR=$D/images timeout 120 python3 examples/mission/python_operators_gpu.py 2>&1 | grep -v Warn | tail -5 | tee "$OUT/python_operators_gpu.txt"
fi
if [[ " $STEPS " == *" sweep "* ]]; then
  $PIN python3 bench/decoder_sweep.py --images 8192 --batches ${SWEEP_BATCHES:-150} --timeout 90 \
    --out "$OUT/decoder_sweep_h200.json" 2>&1 | cut -c1-300
  $PIN python3 bench/decoder_sweep.py --images 8192 --batches ${SWEEP_BATCHES:-150} --timeout 90 --subsampling 4:4:4 \
    --out "$OUT/decoder_sweep_444_h200.json" 2>&1 | cut -c1-300
fi
if [[ " $STEPS " == *" throughput "* ]]; then
  $PIN python3 bench/throughput.py --images ${IMAGES:-8192} --batch-size 256 --batches ${BATCHES:-300} --q95 \
    --out "$OUT/throughput_h200.json" 2>&1 | grep -v "Warning\|warn" | cut -c1-400 | tail -30
fi
if [[ " $STEPS " == *" profile "* ]]; then
  PYSPY=${PYSPY:-.spy/py-spy}; SPY=""; [ -x "$PYSPY" ] && SPY="--py-spy $PYSPY"
  $PIN timeout 120 python3 bench/profile_stages.py --seconds 6 $SPY --out "$OUT/profile_h200.json" 2>&1 | tail -3
fi
NGPU=$(nvidia-smi -L | wc -l)
if [[ " $STEPS " == *" ddp "* ]] && [ "$NGPU" -ge 2 ]; then
  for k in $(seq 1 ${DDP_RUNS:-2}); do
    timeout 200 torchrun --nproc-per-node "$NGPU" bench/ddp.py --images 4000 --batch-size 256 --train-steps 30 \
      --hang-dump-s 120 --out "$OUT/ddp_h200x$NGPU.$k.json" 2>&1 | grep -v "Warning\|warn" | tail -4
  done
fi
