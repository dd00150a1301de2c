# Session 28, third device call: the GIL diet (9a8759b) against the code before it (ff56c68, unpacked
# into .ab-old/), no DALI: GIL releases per batch and per stage (bench/diag/gil_releases.py), the
# seed and fused rows' per-epoch speed alternating old/new (epoch_steady.py), and py-spy profiles of
# the new code. Everything under $OUT in one tar (the device returns at most 8 files).
#   OUT=$OUT bash bench/diag/s28_ab.sh     (carry [".refbench", ".ext-carry", ".ab-old"])
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
mkdir -p ~/.cache/torch_dali && tar xzf .ext-carry/ext_cache.tgz -C ~/.cache/torch_dali
pip install -q --no-deps .ext-carry/py_spy-*.whl 2>&1 | grep -v WARNING | tail -1
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
NEW=$PWD; OLD=$PWD/.ab-old
PYTHONPATH=$NEW python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)"
for kind in seed fused; do
  data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
  for v in old new; do
    src=$NEW; [ $v = old ] && src=$OLD
    PYTHONPATH=$src timeout 150 python3 bench/diag/gil_releases.py $data 8 0.02 $kind 2>&1 | grep '^{' \
      | sed "s/^{/{\"code\": \"$v\", /" | tee -a $R/gil_releases.jsonl
  done
done
for i in 1 2 3; do
  for kind in seed fused; do
    [ $kind = fused ] && [ $i = 3 ] && continue
    data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
    for v in old new; do
      src=$NEW; [ $v = old ] && src=$OLD
      GIL_PROBE=1 PYTHONPATH=$src timeout 90 python3 $src/bench/diag/epoch_steady.py torch_dali $data $kind 8 2>&1 \
        | grep '^{' | sed "s/^{/{\"code\": \"$v\", /" >> $R/epoch_ab.jsonl
      tail -1 $R/epoch_ab.jsonl | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(r['code'], r['what'], r['per_epoch_img_s'], 'median', r['median'])"
    done
  done
done
PYTHONPATH=$NEW timeout 120 py-spy record --idle --threads -r 250 -f raw -o $R/new_seed_idle.txt -- \
  python3 bench/diag/epoch_steady.py torch_dali /tmp/ref420.rec seed 12 > $R/new_seed_idle.log 2>&1
PYTHONPATH=$NEW timeout 120 py-spy record --gil --threads -r 250 -f raw -o $R/new_seed_gil.txt -- \
  python3 bench/diag/epoch_steady.py torch_dali /tmp/ref420.rec seed 12 > $R/new_seed_gil.log 2>&1
PYTHONPATH=$NEW timeout 120 py-spy record --idle --threads -r 250 -f raw -o $R/new_fused_idle.txt -- \
  python3 bench/diag/epoch_steady.py torch_dali /tmp/ref420 fused 12 > $R/new_fused_idle.log 2>&1
grep -h '^{' $R/new_*.log | cut -c1-200
tar czf $OUT/ab.tgz -C $OUT r && rm -rf $R
