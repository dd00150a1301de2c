# Session 28, second device call: which threads hold the GIL in the Serialization (seed) row, and
# for how much of the wall time. py-spy (carried as a wheel in .ext-carry/) samples only the thread
# holding the GIL (--gil), 250 times a second, while epoch_steady.py runs the row for 12 epochs.
#   OUT=$OUT bash bench/diag/s28_gil_profile.sh     (carry [".refbench", ".ext-carry"])
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD GIL_PROBE=1
mkdir -p ~/.cache/torch_dali && tar xzf .ext-carry/ext_cache.tgz -C ~/.cache/torch_dali
pip install -q --no-deps .ext-carry/py_spy-*.whl 2>&1 | tail -1
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
python3 -c "
import time; t=time.time()
from torch_dali._native import extension as e; print('extension', e.load() is not None, round(time.time()-t,1), 's')"
run() {  # name, py-spy flags, epoch_steady args
  local name=$1 flags=$2; shift 2
  timeout 120 py-spy record $flags --threads -r 250 -f raw -o "$OUT/$name.txt" -- \
    python3 bench/diag/epoch_steady.py torch_dali "$@" > "$OUT/$name.log" 2>&1
  grep '^{' "$OUT/$name.log" | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); print('$name', r['per_epoch_img_s'], r['gil_probe_late_ms_per_epoch_median_p90'])"
  tail -2 "$OUT/$name.log" | grep -i samples
}
for i in 1 2 3; do run seed_gil_$i --gil /tmp/ref420.rec seed 12; done
run seed_gil_native "--gil --native" /tmp/ref420.rec seed 12
run seed_all_1 --idle /tmp/ref420.rec seed 12
run fused_gil_1 --gil /tmp/ref420 fused 12
