# Session 27, call 8 (no DALI on the machine): the Serialization row's per-epoch speed under torch_dali,
# default against TORCH_DALI_NVJPEG_HW_SHARE=1 (no hybrid Huffman decoding on the host's cores), with each
# stage's busy seconds, this process's CPU seconds and the host's CPU load per epoch.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
for i in 1 2 3; do
  for cfg in "" TORCH_DALI_NVJPEG_HW_SHARE=1; do
    env $cfg timeout 60 python3 bench/diag/epoch_steady.py torch_dali /tmp/ref420.rec seed 8 2>&1 | grep '^{' \
      | CFG="$cfg" python3 -c "
import json, os, sys
for l in sys.stdin:
    r = json.loads(l); r['config'] = os.environ['CFG']
    open(os.environ['OUT'] + '/seed_epochs.jsonl', 'a').write(json.dumps(r) + chr(10))
    print(r['config'] or 'defaults', r['per_epoch_img_s'], r['process_cpu_s_per_epoch'], r['host_cpu_busy_per_epoch'])
    print('   ', {k: v for k, v in r['stage_busy_per_epoch_s'].items()})
"
  done
done
