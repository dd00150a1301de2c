#!/usr/bin/env bash
# A/B of torch_dali settings on the judge's own rows (.refbench/bench_anchors.py, DALI code),
# beside DALI in the same call: each round runs DALI, then torch_dali under each of CONFIGS, each
# in its own process, and prints torch_dali / DALI per config (median over the rounds).
#   OUT=$OUT ROWS="fused:1.0" CONFIGS=';TORCH_DALI_X=1' ROUNDS=3 bash bench/row_ab.sh
# Needs DALI in /tmp/dali-site (../shared/tools/dali_carry.sh) and .refbench carried.
# DATA: /tmp/ref420 (default) or /tmp/ref444 (made here if missing). An empty config: the defaults.
set -u
H=.refbench
OUT=${OUT:-/tmp/row_ab}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
DATA=${DATA:-/tmp/ref420}
[ -d "$DATA" ] || { [ "$DATA" = /tmp/ref444 ] && J=1 || J=; JPEG444=$J python3 $H/bench_anchors.py gen "$DATA" 8192 | grep dataset; }
TD="env PYTHONPATH=$PWD"
DL="env PYTHONPATH=/tmp/dali-site LD_LIBRARY_PATH=/tmp/dali-site/nvidia/cu13/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
IFS=';' read -ra SETS <<< "${CONFIGS:-}"
[ ${#SETS[@]} -eq 0 ] && SETS=("")
tag() { CFG="$1" ROUND="$2" DATA="$DATA" python3 -c "
import json, os, sys
for line in sys.stdin:
    if not line.startswith('{'): continue
    r = json.loads(line)
    if r.get('what') == 'env': continue
    r.update(config=os.environ['CFG'], round=int(os.environ['ROUND']), data=os.environ['DATA'])
    open(os.environ['OUT'] + '/row_ab.jsonl', 'a').write(json.dumps(r) + chr(10))
    print('==', r['round'], r['what'], r['config'] or 'defaults', round(r.get('img_per_s', 0)), r.get('gpu_mem_mib'), r.get('error', ''))
"; }
for r in $(seq "${ROUNDS:-3}"); do
  for row in ${ROWS:-fused:1.0}; do
    $DL timeout 150 python3 $H/bench_anchors.py dali "$DATA" "$row" 2>&1 | grep '^{' | tag dali "$r"
    for cfg in "${SETS[@]}"; do
      env $cfg $TD timeout 150 python3 $H/bench_anchors.py td "$DATA" "$row" 2>&1 | grep '^{' | tag "$cfg" "$r"
    done
  done
done
python3 - "$OUT/row_ab.jsonl" <<'EOF'
import json, statistics, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1])]
dali = defaultdict(dict)
for r in rows:
    if r['what'].startswith('dali_') and 'img_per_s' in r:
        dali[(r['data'], r['what'][5:])][r['round']] = r['img_per_s']
ratios = defaultdict(list)
for r in rows:
    if r['what'].startswith('torch_dali_') and 'img_per_s' in r:
        d = dali[(r['data'], r['what'][11:])].get(r['round'])
        if d:
            ratios[(r['data'], r['what'][11:], r['config'] or 'defaults')].append(r['img_per_s'] / d)
for k, v in sorted(ratios.items()):
    print('ratio', *k, 'median', round(statistics.median(v), 3), 'each', [round(x, 3) for x in v])
EOF
