#!/bin/bash
# DALI's documentation examples (dynamic mode, PyTorch, torchvision API) under DALI 2.4 and under
# torch_dali through the conformance shim; see docs/dali_examples_dynamic.md.
#   EX_ROOT=/tmp/dali_examples NB_DIR=<extracted notebook scripts> conformance/examples/run_all.sh
# Run from the repository root. DALI_PY: DALI 2.4's interpreter (default ../dali-venv/bin/python);
# EX_SITE: extra packages for both sides (torchdata, torchvision, tqdm), kept out of DALI's venv.
set -u
REPO=$(pwd)
DALI_PY=${DALI_PY:-$REPO/../dali-venv/bin/python}
EX_ROOT=${EX_ROOT:-/tmp/dali_examples}; export EX_ROOT TORCH_DALI_REPO=$REPO
NB_DIR=${NB_DIR:?set NB_DIR to the folder of extracted notebook scripts}
EX_SITE=${EX_SITE:-$EX_ROOT/site}
HERE=$REPO/conformance/examples
mkdir -p "$EX_ROOT/bin_ours" "$EX_ROOT/bin_dali" "$EX_ROOT/out"
if [ ! -d "$EX_ROOT/extra/db" ]; then
  PYTHONPATH=$REPO "$DALI_PY" -m conformance.extra_standin "$EX_ROOT/extra" >/dev/null
  PYTHONPATH=$REPO "$DALI_PY" "$HERE/make_data.py" "$(dirname "$DALI_PY")/wds2idx"
fi
# tfrecord2idx by its DALI name: DALI's own tool on DALI's side, torch_dali's on ours
ln -sf "$(dirname "$DALI_PY")/tfrecord2idx" "$EX_ROOT/bin_dali/tfrecord2idx"
printf '#!/bin/bash\nPYTHONPATH=%s exec %s -c "import sys; from torch_dali.io.tfrecord_index import main; sys.exit(main())" "$@"\n' \
  "$REPO" "$DALI_PY" > "$EX_ROOT/bin_ours/tfrecord2idx"; chmod +x "$EX_ROOT/bin_ours/tfrecord2idx"
for f in "$NB_DIR"/*.py; do
  n=$(basename "$f" .py)
  mkdir -p "$EX_ROOT/work/$n/dali" "$EX_ROOT/work/$n/ours"
  (cd "$EX_ROOT/work/$n/dali" && PATH=$EX_ROOT/bin_dali:$PATH PYTHONPATH=$EX_SITE timeout 900 \
    "$DALI_PY" "$HERE/runnb.py" dali "$f" "$EX_ROOT/out/$n.dali.pkl" >"$EX_ROOT/out/$n.dali.log" 2>&1)
  (cd "$EX_ROOT/work/$n/ours" && PATH=$EX_ROOT/bin_ours:$PATH PYTHONPATH=$REPO:$EX_SITE timeout 900 \
    "$DALI_PY" "$HERE/runnb.py" ours "$f" "$EX_ROOT/out/$n.ours.pkl" >"$EX_ROOT/out/$n.ours.log" 2>&1)
  echo "## $n"
  "$DALI_PY" "$HERE/compare.py" "$EX_ROOT/out/$n.dali.pkl" "$EX_ROOT/out/$n.ours.pkl"
done
