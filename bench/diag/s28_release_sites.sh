# Session 28, fourth device call: where the stage threads give the GIL away. gil_releases.py runs the
# seed and fused rows beside a thread spinning in Python at a 20 ms switch interval, so every release
# costs ~20 ms, under py-spy --idle: the lines a stage thread waits at are its release sites.
#   OUT=$OUT bash bench/diag/s28_release_sites.sh     (carry [".refbench", ".ext-carry"])
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
mkdir -p ~/.cache/torch_dali && tar xzf .ext-carry/ext_cache.tgz -C ~/.cache/torch_dali
pip install -q --no-deps .ext-carry/py_spy-*.whl 2>&1 | grep -v WARNING | tail -1
[ -d /tmp/ref420 ] || python3 .refbench/bench_anchors.py gen /tmp/ref420 8192 | tail -1
[ -f /tmp/ref420.rec ] || python3 .refbench/bench_more.py rec /tmp/ref420 /tmp/ref420.rec
for kind in seed fused; do
  data=/tmp/ref420; [ $kind = seed ] && data=/tmp/ref420.rec
  timeout 100 py-spy record --idle --threads -r 100 -f raw -o $OUT/sites_$kind.txt -- \
    python3 bench/diag/gil_releases.py $data 6 0.02 $kind 2>&1 | grep '^{'
done
