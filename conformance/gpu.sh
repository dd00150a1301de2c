#!/usr/bin/env bash
# DALI's own tests on the GPU machine, where the cases that need a GPU run too. The device tool
# allows 10 minutes a call, so each side is its own call while the machine stays warm:
#   SIDE=control  real DALI (installed into /tmp/dali-site by ../shared/tools/dali_carry.sh's
#                 install.sh) runs every collected case; its passes become /tmp/conf/gpu_baseline.json
#   SIDE=ours     torch_dali runs the cases DALI passed; the report goes to $OUT/conformance_gpu.md
# TESTS: DALI's tests folder (carried: shared/ is not on that machine); WHEELS: a folder of wheels
# the test files import and the machine lacks (nose2, scipy, OpenCV), installed once into
# /tmp/conf-site. FILES: comma-separated modules (default: all); JOBS (14); BUDGET: seconds per
# file and side (420); TIMEOUT: seconds per case (60). BASELINE: for SIDE=ours on a fresh machine, a
# control run's gpu_baseline.json carried over (by default the one the control call left in /tmp).
set -euo pipefail
: "${SIDE:?control or ours}" "${OUT:?}" "${TESTS:?DALI tests folder}"
JOBS=${JOBS:-14}; BUDGET=${BUDGET:-420}; TIMEOUT=${TIMEOUT:-60}
SITE=/tmp/conf-site; WORK=/tmp/conf; mkdir -p "$WORK" "$OUT"
[ -n "${BASELINE:-}" ] && cp "$BASELINE" "$WORK/gpu_baseline.json"
if [ -n "${WHEELS:-}" ] && ls "$WHEELS"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHEELS"/*.whl
fi
TESTS=$(readlink -f "$TESTS")
files=(); [ -n "${FILES:-}" ] && files=(--files "$FILES")
# one interpreter per side: DALI's sees DALI; ours sees only the helpers the test files import
cat > "$WORK/dali-python" <<EOF
#!/bin/sh
PYTHONPATH=/tmp/dali-site:$SITE\${PYTHONPATH:+:\$PYTHONPATH} exec python3 "\$@"
EOF
cat > "$WORK/ours-python" <<EOF
#!/bin/sh
PYTHONPATH=$SITE\${PYTHONPATH:+:\$PYTHONPATH} exec python3 "\$@"
EOF
chmod +x "$WORK/dali-python" "$WORK/ours-python"
case "$SIDE" in
  control)
    python3 -m conformance run --tests "$TESTS" --dali-python "$WORK/dali-python" --control-only \
      --jobs "$JOBS" --module-budget "$BUDGET" --timeout "$TIMEOUT" --work "$WORK/work" \
      --baseline "$WORK/gpu_baseline.json" "${files[@]}"
    cp "$WORK/gpu_baseline.json" "$OUT/" ;;
  ours)
    python3 -m conformance run --tests "$TESTS" --no-control --dali-python none \
      --ours-python "$WORK/ours-python" --jobs "$JOBS" --module-budget "$BUDGET" --timeout "$TIMEOUT" \
      --work "$WORK/work" --baseline "$WORK/gpu_baseline.json" --doc "$OUT/conformance_gpu.md" \
      --command "SIDE=control|ours bash conformance/gpu.sh (H200)" "${files[@]}"
    cp "$WORK/gpu_baseline.json" "$OUT/"
    tar czf "$OUT/results.tgz" -C "$WORK/work" results ;;  # one file: the tool brings back few
  *) echo "SIDE must be control or ours" >&2; exit 2 ;;
esac
