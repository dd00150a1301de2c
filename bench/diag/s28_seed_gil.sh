# Next device session (prepared in session 27, no DALI needed): does the Serialization row's slow
# epochs line up with GIL waits? epoch_steady.py seed with the GIL probe, Python's 5 ms switch interval
# against 1 ms and 0.5 ms, 3 rounds; then the fused row the same way. Lines to $OUT/seed_gil.jsonl.
#   OUT=$OUT bash bench/diag/s28_seed_gil.sh     (carry [".refbench"])
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD GIL_PROBE=1
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
python3 -c "from torch_dali._native import extension as e; print('extension', e.load() is not None)" 2>&1 | tail -1
# the built extension comes back (about a minute to build on each fresh machine): unpacked into
# .ext-carry/ here and carried, `tar xzf .ext-carry/ext_cache.tgz -C ~/.cache/torch_dali` skips the build
# while csrc/ and torch are unchanged (the build's key covers them)
tar czf "$OUT/ext_cache.tgz" --exclude="*.o" -C ~/.cache/torch_dali . && ls -la "$OUT/ext_cache.tgz"
for i in 1 2 3; do
  for kind in seed fused; do
    data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
    for cfg in "" SWITCH_INTERVAL=0.001 SWITCH_INTERVAL=0.0005; do
      env $cfg timeout 60 python3 bench/diag/epoch_steady.py torch_dali $data $kind 8 2>&1 | grep '^{' \
        | CFG="$cfg" python3 -c "
import json, os, sys
for l in sys.stdin:
    r = json.loads(l); r['config'] = os.environ['CFG']
    open(os.environ['OUT'] + '/seed_gil.jsonl', 'a').write(json.dumps(r) + chr(10))
    print(r['what'], r['config'] or 'defaults', r['per_epoch_img_s'], r['gil_probe_late_ms_per_epoch_median_p90'])
"
    done
  done
done
