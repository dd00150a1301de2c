# Next device session's first call (prepared in session 28, no DALI needed): does the GIL diet
# (9a8759b) and TORCH_DALI_REAPER=1 (2d6e1a9) move the seed and fused rows? Session 28's pairs could not
# tell (per-epoch speed swings 19-38k images/s within one run). Old code (ff56c68) unpacked into
# .ab-old/ (`git archive ff56c68 torch_dali bench | tar -x -C .ab-old`), each version with its own
# extension cache (the build key hashes extension.py, which the diet changed; csrc/ did not: the
# carried build is restamped, not rebuilt). ROUNDS rounds, the order rotating each round; lines to
# $OUT/ab.jsonl as they come.
#   ROUNDS=4 OUT=$OUT bash bench/diag/s29_ab.sh     (carry [".refbench", ".ext-carry", ".ab-old"]; ~40 s a round
#   of three seed runs plus ~40 s of fused runs, after ~30 s of set-up)
set -u
export PYTHONUNBUFFERED=1
J=$OUT/ab.jsonl; ROUNDS=${ROUNDS:-4}
NEW=$PWD; OLD=$PWD/.ab-old
for v in old new; do
  src=$NEW; [ $v = old ] && src=$OLD
  mkdir -p /tmp/ext_$v && tar xzf .ext-carry/ext_cache.tgz -C /tmp/ext_$v
  TORCH_DALI_EXT_DIR=/tmp/ext_$v PYTHONPATH=$src python3 -c "
from pathlib import Path; from torch_dali._native import extension as e
Path(e._build_dir(), 'built.key').write_text(e._source_key()); print('$v extension', e.load() is not None)"
done
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
one() {  # label kind
  local label=$1 kind=$2 src=$NEW ext=/tmp/ext_new reap=0
  [ $label = old ] && src=$OLD && ext=/tmp/ext_old
  [ $label = reaper ] && reap=1
  local data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
  TORCH_DALI_REAPER=$reap TORCH_DALI_EXT_DIR=$ext PYTHONPATH=$src timeout 60 \
    python3 $src/bench/diag/epoch_steady.py torch_dali $data $kind 8 2>&1 \
    | grep '^{' | sed "s/^{/{\"code\": \"$label\", /" >> $J
  tail -1 $J | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['code'], r['what'], 'median', r['median'])"
}
orders=("old new reaper" "new reaper old" "reaper old new")
for ((i = 0; i < ROUNDS; i++)); do
  for kind in seed fused; do
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
