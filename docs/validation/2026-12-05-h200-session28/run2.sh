#!/usr/bin/env bash
# session 28, device call 2 (from the checkout's root, carry .whl): chk28's open-files deaths
# (docs/dev/chk28.md) and the file-size limit (system.file_size_limit) on the H200, as landed on main.
set -u
T=${T:-/opt/torch/.venv/bin/python3}; SITE2=/var/g28site; W=/tmp/g28b; mkdir -p "$W" "$SITE2"
[ -d "$SITE2/fla" ] || $T -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE2" .whl/*.whl > "$W/pip.log" 2>&1
export PYTHONPATH="$PWD/src:$SITE2"
CHECK="$T -m stackpeel check --fresh --format json --no-plugins --python $T"
summ() {  # report.json -> one paragraph
  $T - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); g = d["diagnosis"]
err = [r for r in d["results"] if r["status"] == "error"]
notes = lambda code: sum(f["code"] == code for r in d["results"] for f in r["findings"])
print(sys.argv[1].rsplit("/", 1)[1], "nofile", d["target"].get("nofile"), "fsize", d["target"].get("fsize"))
print("  errors", g["errors"])
print("  blocking", [(b["check"], b["codes"], len(b["symptoms"])) for b in g["blocking"]])
print("  degraded", [b["check"] for b in g["degraded"]])
print("  died", len(err), "with no finding", [r["id"] for r in err if not r["findings"]])
print("  open-files-limit-low findings", notes("open-files-limit-low"), "file-size-limit findings", notes("file-size-limit"))
fs = [r for r in d["results"] if r["id"] == "system.file_size_limit"]
if fs: print("  system.file_size_limit", fs[0]["status"], fs[0].get("facts"), [f["severity"] for f in fs[0]["findings"]])
kc = [r for r in d["results"] if r["id"] == "config.known_combinations"]
if kc: print("  known_combinations machine", (kc[0]["facts"].get("versions") or {}).get("machine"),
              "matched", [m.get("id") if isinstance(m, dict) else m for m in kc[0]["facts"].get("matched") or []])
PY
}
for n in 5 20; do bash -c "ulimit -Sn $n; exec $CHECK" > "$W/ofl$n.json" 2> "$W/ofl$n.err"; done
$CHECK > "$W/normal.json" 2> "$W/normal.err"
bash -c "ulimit -Sn 5; exec $T -m stackpeel check --fresh --no-plugins --python $T" > "$W/ofl5.txt" 2>&1
# under a file-size limit the report goes through a pipe (a regular file would be bounded too)
bash -c "ulimit -f 0; exec $CHECK" 2> "$W/fsize0.err" | cat > "$W/fsize0.json"
bash -c "ulimit -Sf 1024; exec $CHECK" 2> "$W/fsize1m.err" | cat > "$W/fsize1m.json"
bash -c "ulimit -f 0; exec $T -m stackpeel check --fresh --no-plugins --python $T" 2>&1 | cat > "$W/fsize0.txt"
for f in ofl5 ofl20 normal fsize0 fsize1m; do summ "$W/$f.json"; done > "$OUT/summary2.txt" 2>&1
[ -n "${SKIP_TESTS:-}" ] || timeout 280 env STACKPEEL_STACK_PYTHON=$T $T -m pytest -q -p no:cacheprovider tests/test_file_size_limit.py \
  tests/test_runner_nofile.py tests/test_combinations.py tests/test_cxx_compiler.py tests/test_diagnosis.py \
  > "$OUT/tests2.txt" 2>&1; echo "rc=$?" >> "$OUT/tests2.txt"
cp "$W/ofl5.txt" "$OUT/ofl5.txt"; cp "$W/fsize0.txt" "$OUT/fsize0.txt"
(cd /tmp && tar czf "$OUT/reports2.tgz" g28b)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/machine2.txt" 2>&1
