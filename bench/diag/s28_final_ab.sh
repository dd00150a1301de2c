# Session 28, last device call: the seed and fused rows' per-epoch speed, code before the GIL diet
# (ff56c68 in .ab-old/) against now, and now with TORCH_DALI_REAPER=1; GIL releases per stage with
# the reaper. Lines to $OUT/final_ab.jsonl as they come (the call may be cut short).
#   OUT=$OUT bash bench/diag/s28_final_ab.sh     (carry [".refbench", ".ext-carry", ".ab-old"])
set -u
export PYTHONUNBUFFERED=1
J=$OUT/final_ab.jsonl
mkdir -p ~/.cache/torch_dali && tar xzf .ext-carry/ext_cache.tgz -C ~/.cache/torch_dali
# csrc/ and the build flags are unchanged since the carried build; only extension.py's Python changed,
# which the build key also hashes: restamp rather than spend a minute rebuilding the same library
PYTHONPATH=$PWD python3 -c "
from pathlib import Path; from torch_dali._native import extension as e
Path(e._build_dir(), 'built.key').write_text(e._source_key()); print('extension', e.load() is not None)"
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
NEW=$PWD; OLD=$PWD/.ab-old
one() {  # label src kind [env]
  local label=$1 src=$2 kind=$3; shift 3
  local data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
  env "$@" PYTHONPATH=$src timeout 60 python3 $src/bench/diag/epoch_steady.py torch_dali $data $kind 8 2>&1 \
    | grep '^{' | sed "s/^{/{\"code\": \"$label\", /" >> $J
  tail -1 $J | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['code'], r['what'], r['per_epoch_img_s'], 'median', r['median'])"
}
for i in 1 2; do
  one old $OLD seed X=1; one new $NEW seed X=1; one reaper $NEW seed TORCH_DALI_REAPER=1
done
TORCH_DALI_REAPER=1 PYTHONPATH=$NEW timeout 60 python3 bench/diag/gil_releases.py /tmp/ref420.rec 6 0.02 seed 2>&1 \
  | grep '^{' | sed 's/^{/{"code": "reaper", /' | tee -a $J
one old $OLD fused X=1; one new $NEW fused X=1; one reaper $NEW fused TORCH_DALI_REAPER=1
