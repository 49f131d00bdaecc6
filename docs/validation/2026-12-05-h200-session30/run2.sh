#!/usr/bin/env bash
# gpu30, device call 2 (repo root; carry .whl (FLA 0.6.0 wheels) and .gpu30 (this script and gpu30's
# scripts/expect-open-files)): the open-files thresholds between run1's points (torch's first tensor
# failed at 44 and worked at 48; the Triton launch failed at 52 and worked at 56), a whole check at
# each with gpu30's expect-open-files, the bare first tensor at each, and explain on its output at 44.
set -u
START=$(date +%s); el() { echo $(( $(date +%s) - START )); }
T=${T:-/opt/torch/.venv/bin/python3}; P=$T; W=/tmp/g30c; SITE=/var/g30site; mkdir -p "$W" "$SITE"
WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/nvidia_')
[ -z "$WHEELS" ] || $P -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" $WHEELS > "$W/pip.log" 2>&1
export PYTHONPATH="$PWD/src:$SITE"
EXPECT=${EXPECT:-.gpu30/expect-open-files}
CHECK="$P -m stackpeel check --fresh --format json --no-plugins --python $T"
NS="44 45 46 47 48 53 54 55 56"
for n in $NS; do
  ( bash -c "ulimit -n $n; exec timeout 200 $CHECK" > "$W/ofl-n$n.json" 2> "$W/ofl-n$n.err"; echo "rc=$?" > "$W/ofl-n$n.rc" ) &
done
for n in $NS; do
  bash -c "ulimit -n $n; exec timeout 60 $T -c 'import torch; x = torch.ones(4, device=\"cuda\"); print(\"first tensor ok\", float(x.sum()))'" \
    > "$W/tensor-n$n.txt" 2>&1; echo "rc=$?" >> "$W/tensor-n$n.txt"
done
wait
echo "[$(el)s] sweep done"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r
  for n in $NS; do
    echo "=== ulimit -n $n: check $(cat "$W/ofl-n$n.rc"); the first tensor alone: $(grep -E '^(first tensor|torch\.|RuntimeError)' "$W/tensor-n$n.txt" | head -1 | cut -c1-120) $(tail -n 1 "$W/tensor-n$n.txt")"
    $P "$EXPECT" "$n" "$W/ofl-n$n.json"; echo "expect-open-files rc=$?"
    $P - "$W/ofl-n$n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); by = {r["id"]: r for r in d["results"]}
for cid in ("torch.cuda", "triton.kernel_launch", "multi_gpu.open_files"):
    r = by[cid]; print("  %-22s %-5s %s %s" % (cid, r["status"], [f["code"] for f in r["findings"]], r["summary"][:110]))
PY
  done
  echo "=== explain on the bare first tensor's output at 44 (a log alone)"
  $P -m stackpeel explain --format json "$W/tensor-n44.txt" | $P -c "import json,sys; print([c['code'] for c in json.load(sys.stdin)['candidates'][:3]])"
} > "$OUT/c2-open-files.txt" 2>&1
(cd /tmp && tar czf "$OUT/c2-reports.tgz" g30c)
echo "[$(el)s] done"
