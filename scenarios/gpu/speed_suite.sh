#!/usr/bin/env bash
# Issue 9 on an NVIDIA GPU machine, in ONE command of under 8 minutes:
#   1. bench/check_bench.py (5 rounds; with 3 the ratio to collect_env moved by about 20 % between runs):
#      collect_env vs the fast default check, the repeat run,
#      the critical path;
#   2. `stackpeel check --deep` on the machine's Triton (3.6.0 on the lent H200) with FLA 0.6.0:
#      must report FLA's backward guard as kernel-backward-failed (blocking for training) with
#      FLA's own message;
#   3. `--deep` on a healthy combination: the same with Triton >= 3.7.1, when its wheel was
#      carried (see below); reported as skipped otherwise, never as a pass;
#   4. the GPU fault suite (scenarios/gpu/suite.py) with the fast default: same root causes;
#   5. the fast default and the full imports on this machine: the same verdicts and bindings.
# 2 to 5 run at the same time (16 cores; the ops are tiny); each has its own time limit.
#
# Run from the repository root (the device call's working tree), with the FLA wheels in .whl/:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       -d .whl fla-core==0.6.0 flash-linear-attention==0.6.0 einops   (einops: FLA's one hard dependency)
#   (device call, carry [".whl"]):  bash scenarios/gpu/speed_suite.sh
# Optional healthy Triton: a triton>=3.7.1 cp312 wheel is larger than one call may carry (64 MiB):
#   split -b 60M triton-3.7.1-*.whl .whl-triton/part-   (here), then carry .whl-triton in
#   consecutive calls, each `mkdir -p /tmp/tw && cp .whl-triton/part-* /tmp/tw/`, and in the last
#   one set HEALTHY_TRITON_PARTS=/tmp/tw (and the wheel's file name in HEALTHY_TRITON_NAME).
# Results go to $OUT (default ./speed-out): bench.txt/json, deep-*.json/txt, faults/, summary.txt.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
OUT=${OUT:-$REPO/speed-out}
mkdir -p "$OUT"
PY=${PY:-$(command -v python3)}
START=$(date +%s)
left() { echo $(( 470 - ($(date +%s) - START) )); }
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/summary.txt"; }

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPUs"
SITE=/tmp/site
# only the Python packages: nvidia-* wheels in .whl/ are older CUDA libraries the fault suite unpacks
# itself (suite.py older_nvjitlink_*); installed, torch would preload them for every scenario
WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/nvidia_')
if [ -n "$WHEELS" ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" $WHEELS \
    || log "FLA wheels did not install"
fi
export PYTHONPATH=$SITE
SP="env PYTHONPATH=$REPO/src:$SITE $PY -m stackpeel"
"$PY" - <<'PYEOF' | tee "$OUT/env.txt"
import importlib.metadata as m
for d in ("torch", "triton", "fla-core", "flash-linear-attention", "transformers", "causal-conv1d", "einops"):
    try:
        print(d, m.version(d))
    except Exception:
        print(d, "not installed")
PYEOF

# 1. bench (sequential: nothing else runs meanwhile)
log "bench: 5 rounds"
timeout 230 env PYTHONPATH="$REPO/src:$SITE" "$PY" bench/check_bench.py --python "$PY" --rounds 5 --deep-rounds 0 --alone-rounds 3 \
  --label "lent GPU machine" --json "$OUT/bench.json" > "$OUT/bench.txt" 2> "$OUT/bench.stderr"
log "bench rc=$? (figures in bench.txt)"
grep -E "^(ratio|speed-up|slowest|critical|  the same checks run alone)" "$OUT/bench.txt" | tee -a "$OUT/summary.txt"
# each check's wall in the last default run (torch-free ones also alone): issue 9 wants <= 0.3 s for
# every check that does not import torch
sed -n '/^per-check wall/,/^$/p' "$OUT/bench.txt" | tee -a "$OUT/summary.txt"

# 2-4 at the same time
budget=$(( $(left) - 20 ))
# each check's own timeout stays inside the budget (kernels.fla_ops has 900 s), so a slow op
# is reported as a timeout in the JSON instead of the whole run being killed without a report
scale=$("$PY" -c "print(round(max(0.1, ($budget - 40) / 900.0), 2))")
log "deep runs and fault suite, $budget s each at most (--timeout-scale $scale)"
( timeout "$budget" $SP check --python "$PY" --deep --fresh --only kernels --timeout-scale "$scale" --format json -o "$OUT/deep-installed-triton.json" \
    2> "$OUT/deep-installed-triton.stderr"; echo "rc=$?" > "$OUT/deep-installed-triton.rc" ) &
P1=$!
P2=
if [ -n "${HEALTHY_TRITON_PARTS:-}" ] && ls "$HEALTHY_TRITON_PARTS"/part-* >/dev/null 2>&1; then
  name=${HEALTHY_TRITON_NAME:-triton-3.7.1-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl}
  cat "$HEALTHY_TRITON_PARTS"/part-* > "/tmp/$name"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-healthy "/tmp/$name" \
    && ( timeout "$budget" env PYTHONPATH="$REPO/src:/tmp/site-healthy:$SITE" "$PY" -m stackpeel check --python "$PY" \
           --deep --fresh --only kernels --timeout-scale "$scale" --format json -o "$OUT/deep-healthy-triton.json" \
           2> "$OUT/deep-healthy-triton.stderr"; echo "rc=$?" > "$OUT/deep-healthy-triton.rc" ) &
  P2=$!
else
  log "healthy combination: SKIPPED (no Triton >= 3.7.1 wheel carried; see the header of this script)"
fi
( timeout "$budget" env PYTHONPATH="$REPO/src:$SITE" "$PY" scenarios/gpu/suite.py --python "$PY" --out "$OUT/faults" \
    --timeout 240 > "$OUT/faults.txt" 2>&1; echo "rc=$?" >> "$OUT/faults.txt" ) &
P3=$!
# 5. the fast default against the full imports (every probe in its own interpreter, whole `import
#    fla`, the transformers model imported): the same verdicts and bindings (tests/test_speed.py
#    does this on CPU under injected faults; here with CUDA, where the join of torch.cuda matters)
( export PYTHONPATH="$REPO/src:$SITE"
  timeout "$budget" "$PY" -m stackpeel check --python "$PY" --fresh --format json -o "$OUT/agree-fast.json" 2>/dev/null
  STACKPEEL_NO_PRELOAD=1 timeout "$budget" "$PY" -m stackpeel check --python "$PY" --fresh --deep \
    --skip kernels.fla_ops,kernels.torch_compile,kernels.causal_conv1d_ops --format json -o "$OUT/agree-full.json" 2>/dev/null
  "$PY" - "$OUT/agree-fast.json" "$OUT/agree-full.json" > "$OUT/agree.txt" 2>&1 <<'PYEOF'
import json, sys
deep = ("kernels.fla_ops", "kernels.torch_compile", "kernels.causal_conv1d_ops")
def load(path):
    r = json.load(open(path))
    checks = {x["id"]: (x["status"], sorted(f["code"] + ":" + f["severity"] for f in x["findings"]))
              for x in r["results"] if x["id"] not in deep}
    tf = next((x for x in r["results"] if x["id"] == "kernels.transformers_fast_path"), {"facts": {}})
    binds = {b["func_name"]: ("reference" if b["reference"] else b["package"]) for b in tf["facts"].get("bindings") or []}
    return checks, binds, tf["facts"].get("bindings_from"), tf.get("duration_s")
fast, full = load(sys.argv[1]), load(sys.argv[2])
diff = {k: (fast[0].get(k), full[0].get(k)) for k in set(fast[0]) | set(full[0]) if fast[0].get(k) != full[0].get(k)}
print("fast default vs full imports:", "SAME verdicts" if not diff else "DIFFERENT verdicts: %s" % diff)
print("bindings fast %s (%s, %.2f s) / full %s (%s, %.2f s): %s" % (fast[1], fast[2], fast[3] or 0, full[1], full[2],
      full[3] or 0, "same" if fast[1] == full[1] else "DIFFERENT"))
PYEOF
) &
P4=$!
wait $P1 ${P2:-} $P3 $P4
cat "$OUT/agree.txt" | tee -a "$OUT/summary.txt"

# what the lead reads first
for f in "$OUT"/deep-*.json; do
  [ -e "$f" ] || continue
  "$PY" - "$f" <<'PYEOF' | tee -a "$OUT/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
print("==", sys.argv[1].rsplit("/", 1)[-1], "exit", r["diagnosis"]["exit_code"], "in", r["duration_s"], "s")
for x in r["results"]:
    if x["id"] in ("kernels.fla", "kernels.fla_ops", "kernels.torch_compile", "kernels.causal_conv1d_ops",
                   "kernels.transformers_fast_path", "triton.kernel_launch"):
        print("  %-32s %-5s %7.1f s  %s" % (x["id"], x["status"], x["duration_s"], x["summary"][:240]))
        for f in x["findings"]:
            print("      %s [%s]: %s" % (f["code"], f["severity"], f["message"][:400]))
PYEOF
  env PYTHONPATH="$REPO/src" "$PY" - "$f" > "${f%.json}.txt" <<'PYEOF'
import json, sys
from stackpeel.model import Report
from stackpeel.render import render
print(render(Report.from_dict(json.load(open(sys.argv[1]))), "text", verbose=True))
PYEOF
done
tail -30 "$OUT/faults.txt" | tee -a "$OUT/summary.txt"
log "done in $(( $(date +%s) - START )) s"
