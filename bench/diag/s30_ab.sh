#!/usr/bin/env bash
# Second call of the next device session (after s30_call1.sh, same warm machine: /tmp/ext_new is
# there): do packed reader batches (session 29: readers.file / readers.mxnet hand the mixed
# decoder one buffer + offsets, no tensor per sample) move the Serialization (seed), fused and
# validation rows? Old code: c91e99d, unpacked into .ab-old/ (`git archive c91e99d torch_dali bench
# | tar -x -C .ab-old`); it runs on the same extension build (only decode_packed was added), its
# key restamped. "reaper" is the new code with TORCH_DALI_REAPER=1. ROUNDS rounds, the order
# rotating each round; lines to $OUT/ab.jsonl as they come, then a summary per row and code.
#   ROUNDS=3 OUT=$OUT bash bench/diag/s30_ab.sh     (carry [".refbench", ".ext-carry", ".ab-old"]; ~8-9 min)
set -u
export PYTHONUNBUFFERED=1
J=$OUT/ab.jsonl; ROUNDS=${ROUNDS:-3}
NEW=$PWD; OLD=$PWD/.ab-old
[ -d /tmp/ext_new ] || { mkdir -p /tmp/ext_new && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_new; }
rm -rf /tmp/ext_old && cp -r /tmp/ext_new /tmp/ext_old
for v in new old; do
  src=$NEW; ext=/tmp/ext_new; [ $v = old ] && src=$OLD && ext=/tmp/ext_old
  TORCH_DALI_EXT_DIR=$ext PYTHONPATH=$src python3 -c "
from pathlib import Path; from torch_dali._native import extension as e
if '$v' == 'old': Path(e._build_dir(), 'built.key').write_text(e._source_key())
m = e.load(); print('$v extension', m is not None, hasattr(m, 'NvJpegDecoder') and hasattr(m.NvJpegDecoder, 'decode_packed'), e.load_error())"
done
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
one() {  # label kind
  local label=$1 kind=$2 src=$NEW ext=/tmp/ext_new reap=0
  [ $label = old ] && src=$OLD && ext=/tmp/ext_old
  [ $label = reaper ] && reap=1
  local data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
  TORCH_DALI_REAPER=$reap TORCH_DALI_EXT_DIR=$ext PYTHONPATH=$src timeout 60 \
    python3 $src/bench/diag/epoch_steady.py torch_dali $data $kind 6 2>&1 \
    | grep '^{' | sed "s/^{/{\"code\": \"$label\", /" >> $J
  tail -1 $J | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['code'], r['what'], 'median', r['median'])"
}
orders=("old new reaper" "new reaper old" "reaper old new")
for ((i = 0; i < ROUNDS; i++)); do
  for kind in seed fused val; do
    for v in ${orders[$((i % 3))]}; do one $v $kind; done
  done
done
python3 - "$J" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for what in sorted({r["what"] for r in rows}):
    for code in ("old", "new", "reaper"):
        epochs = [e for r in rows if r["what"] == what and r["code"] == code for e in r["per_epoch_img_s"]]
        if epochs:
            print(what, code, "runs", sum(r["what"] == what and r["code"] == code for r in rows),
                  "epochs", len(epochs), "mean", round(statistics.mean(epochs)), "median", round(statistics.median(epochs)))
PY
