#!/usr/bin/env bash
# The device call's work, from the sent checkout's root (go.sh runs it; scripts/device/README.md). One file for
# every session: sessions 33-37 each copied docs/validation/*/run1.sh with small edits (session 37's is the last
# such copy). A = the sent checkout's src, B = NEWSRC (go.sh unpacks the staged srcB.tgz there).
#
#   PART=V   the machine; check_bench.py against collect_env (2 rounds, alone 3); zyprof.py (ZROUNDS whole checks:
#            each probe's time); the default check (text and JSON: the FLA/Triton/Hopper blocking root); launchfew;
#            the whole fault suite with explain on each failing output. All on A.
#   PART=VT  the A/B: ABROUNDS rounds of `python -m torch.utils.collect_env`, a whole default check on A and one on B,
#            alternating (each one's wall, its report's duration, triton.kernel_launch's time and stages); the default
#            check on A (text and JSON); launchfew on B (LFROUNDS); the fault suite on SUITESRC (default B).
#   PART=AB  the A/B alone.
#
# Parameters (environment): PART, DEADLINE (s: every part packs its files into $OUT before it), ABROUNDS (4),
# LFROUNDS (2), ZROUNDS (3), SPLIT (fault-suite instances side by side, 4; the GPU memory holder runs alone after),
# SUITESRC (A or B: whose scenarios/gpu/suite.py runs, and so whose src it tests), NEWSRC (B's src, relative to the
# checkout), BROOT (B's tree: src, scenarios, bench/explain_accuracy.py, scripts/corpus_split.py), NVJ_PARTS (the nvJitLink pieces), T (the target
# Python, /opt/torch/.venv/bin/python3 on the lent machines), W (work folder), SITE (where the carried wheels are
# installed), STAGE_TXT (stage.sh's record, copied into the machine's record).
# CPU dry run (no GPU: the GPU steps fail or skip): OUT=/tmp/x T=<stack venv python> PART=V bash scripts/device/run.sh
set -u
START=$(date +%s)
PART=${PART:-VT}
DEADLINE=${DEADLINE:-540}
REPO=$PWD
T=${T:-/opt/torch/.venv/bin/python3}; P=$T
W=${W:-/tmp/stackpeel-device}; SITE=${SITE:-/var/stackpeel-device-site}; mkdir -p "$W" "$SITE"
el() { echo $(( $(date +%s) - START )); }
left() { echo $(( DEADLINE - $(el) )); }
log() { echo "[$(el)s] $*" | tee -a "$W/driver.log"; }

machine() {
  {
    echo "date: $(date -u)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv 2>&1
    nvidia-smi 2>&1 | sed -n 3p
    echo "kernel $(uname -r); $(nproc) CPUs; ulimit -n $(ulimit -n) (hard $(ulimit -Hn)); ulimit -f $(ulimit -f)"
    $P --version; g++ --version 2>&1 | head -1; nvcc --version 2>/dev/null | tail -2
    $P -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" 2>&1
    PYTHONPATH=$SITE $P -c "import importlib.metadata as m
for d in ('fla-core', 'flash-linear-attention', 'transformers', 'einops', 'nvidia-nvjitlink', 'causal-conv1d', 'tilelang'):
    try: print(d, m.version(d))
    except Exception: print(d, 'not installed')" 2>&1
    $P -c "import importlib.metadata as m; print('cu12 torch libs:', [d.metadata['Name'] for d in m.distributions() if d.metadata['Name'] and d.metadata['Name'].endswith('-cu12')])" 2>&1
    echo "wheels carried: $(cd .whl 2>/dev/null && ls | tr '\n' ' ')"
    # the sent checkout's git HEAD is not what was sent (the device tool's copy does not update it: session 37):
    # the staging record says which commits A, B and these scripts are
    echo "=== stage.sh's record"; cat "${STAGE_TXT:-/dev/null}" 2>/dev/null
    echo "A's src: $(grep -c start_first src/stackpeel/runner/scheduler.py 2>/dev/null) start_first in its scheduler," \
         "B's: $(grep -c start_first "${NEWSRC:-src}/stackpeel/runner/scheduler.py" 2>/dev/null)"
  } > "$W/machine-$1.txt" 2>&1
}

# nvidia-nvjitlink 13.0.39's library travels xz-compressed (x86 filter, 26.1 MB) in NVJ_PARTS; re-packed here as the
# wheel the fault suite reads (suite.py OLDER_NVJITLINK: nvidia/cu13/lib/libnvJitLink.so.13), if its sha256 matches
NVJ_SHA=8b56de439f60292ca674bfcf2eed447d3bb72bc7103a7fb4e841b679451141b4
nvj() {
  [ -n "${NVJ_PARTS:-}" ] && [ -d "$NVJ_PARTS" ] || return 0
  ls .whl/nvidia_nvjitlink-13.0.39-*.whl >/dev/null 2>&1 && return 0
  mkdir -p .whl
  $P - "$NVJ_PARTS" "$NVJ_SHA" <<'PY' >> "$W/driver.log" 2>&1
import glob, hashlib, lzma, sys, zipfile
parts = sorted(glob.glob(sys.argv[1] + "/p*"))
try:
    data = lzma.decompress(b"".join(open(p, "rb").read() for p in parts))
except Exception as e:
    print("nvJitLink pieces", parts, "do not decompress:", e); sys.exit()
digest = hashlib.sha256(data).hexdigest()
print("nvJitLink 13.0.39 from", len(parts), "pieces:", len(data), "bytes, sha256", digest,
      "MATCHES the PyPI wheel's" if digest == sys.argv[2] else "DIFFERS from the PyPI wheel's: not used")
if digest == sys.argv[2]:
    with zipfile.ZipFile(".whl/nvidia_nvjitlink-13.0.39-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", "w") as z:
        z.writestr("nvidia/cu13/lib/libnvJitLink.so.13", data)
PY
}

site() {  # the Python packages only (an nvidia-* wheel installed would be preloaded by torch everywhere)
  WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/nvidia_')
  [ -d "$SITE/fla" ] || { [ -z "$WHEELS" ] || $P -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target "$SITE" $WHEELS >> "$W/driver.log" 2>&1 || log "FLA wheels did not install"; }
  export PYTHONPATH="$REPO/src:$SITE"
}
usesrc() { if [ "$1" = A ]; then export PYTHONPATH="$REPO/src:$SITE"; else export PYTHONPATH="$REPO/$NEWSRC:$SITE"; fi; }

bench() {  # $1: tag
  log "bench $1 (2 rounds, alone)"
  timeout 150 $P bench/check_bench.py --python "$T" --rounds 2 --deep-rounds 0 --alone-rounds 3 \
    --label "lent GPU machine ($1)" > "$W/bench-$1.txt" 2> "$W/bench-$1.stderr"
  log "bench $1 rc=$?"
}

summ() {  # report.json ... -> one paragraph each
  $P - "$@" <<'PY'
import json, os, sys
for p in sys.argv[1:]:
    try:
        d = json.load(open(p))
    except Exception as e:
        print(os.path.basename(p), "UNREADABLE", os.path.getsize(p) if os.path.exists(p) else "absent", e); continue
    g = d["diagnosis"]; by = {r["id"]: r for r in d["results"]}
    err = [r for r in d["results"] if r["status"] == "error"]
    print(os.path.basename(p), os.path.getsize(p), "bytes; nofile", d["target"].get("nofile"), "exit", g.get("exit_code"))
    print("  errors", g["errors"])
    print("  blocking", [(b["check"], b["codes"], [s["check"] for s in b["symptoms"]]) for b in g["blocking"]])
    print("  degraded", [b["check"] for b in g["degraded"]])
    print("  died", len(err), "with no finding", [r["id"] for r in err if not r["findings"]])
    for cid in ("torch.cuda", "triton.kernel_launch", "config.known_combinations", "toolchain.libcuda_discovery"):
        r = by.get(cid)
        if r:
            print("  %-28s %-7s %s %s" % (cid, r["status"], [f["code"] for f in r["findings"]],
                                        (r["summary"] or "")[:140].replace("\n", " ")))
PY
}

CHECK() { $P -m stackpeel check --fresh --no-plugins --python "$T" "$@"; }

defaultcheck() {  # the default check, text and JSON, and their exit codes
  log "default check"
  CHECK > "$W/check-default.txt" 2> "$W/check-default.err"; echo "exit $?" >> "$W/check-default.txt"
  CHECK --format json > "$W/check-default.json" 2> "$W/check-json.err"; echo "exit $?" > "$W/check-json.rc"
}

zyprof() {  # $1: tag; where the probes' time goes in a whole check (session 34's zyprof.py), ZROUNDS runs
  log "zyprof $1"
  timeout 120 $P "${ZYPROF:-docs/validation/2026-12-07-h200-session34/zyprof.py}" "$T" "$W/zyprof-$1.json" "${ZROUNDS:-3}" > "$W/zyprof-$1.txt" 2>&1
  log "zyprof $1 rc=$?"
}

# the launch's stages (stage_s) in a whole check against a check of triton.kernel_launch alone (--only: its
# requires run too): how much of its 'driver' stage is the other forks' CUDA initialisation beside it
launchfew() {  # $1: tag
  log "launchfew $1"
  for i in $(seq 1 ${LFROUNDS:-2}); do
    timeout 120 $P -m stackpeel check --fresh --no-plugins --python "$T" --format json --only triton.kernel_launch > "$W/lf-$1-only$i.json" 2>/dev/null
    timeout 120 $P -m stackpeel check --fresh --no-plugins --python "$T" --format json > "$W/lf-$1-all$i.json" 2>/dev/null
  done
  $P - "$W"/lf-$1-only*.json "$W"/lf-$1-all*.json > "$W/launchfew-$1.txt" 2>&1 <<'PY'
import json, os, sys
for p in sys.argv[1:]:
    try:
        d = json.load(open(p))
    except Exception as e:
        print(os.path.basename(p), "unreadable", e); continue
    by = {r["id"]: r for r in d["results"]}
    r = by.get("triton.kernel_launch") or {}
    fresh = (r.get("facts") or {}).get("fresh") or {}
    print("%-14s run %.3f s, %d checks; launch %s %.3f s; stage_s %s; others: %s" % (
        os.path.basename(p), d.get("duration_s") or 0, len(d["results"]), r.get("status"), r.get("duration_s") or 0,
        fresh.get("stage_s"), {k: by[k]["duration_s"] for k in ("torch.cuda", "kernels.fla", "runtime_libs.loaded") if k in by}))
PY
  log "launchfew $1 done"
}

# the whole fault suite: its scenarios (suite.py --list, so a new scenario needs no edit here) in SPLIT contiguous
# groups side by side, then the GPU memory holder alone (it takes the GPU's memory from everything else)
# SUITESRC=B runs B's copy of the suite: suite.py puts the src beside it first on PYTHONPATH (sessions 36 and 37 ran
# the checkout's copy, so their "suite on B" tested A's src)
HOLDER=gpu-memory-held-by-another-process
suite() {
  SUITE=scenarios/gpu/suite.py
  [ "${SUITESRC:-B}" = B ] && [ -n "${BROOT:-}" ] && SUITE=$BROOT/scenarios/gpu/suite.py
  log "suite: $SUITE"
  $P $SUITE --list 2>/dev/null | awk '{print $1}' | grep . > "$W/listed.txt"
  grep -qx "$HOLDER" "$W/listed.txt" || log "the suite lists no $HOLDER"
  mapfile -t NAMES < <(grep -vx "$HOLDER" "$W/listed.txt")
  n=${#NAMES[@]}; k=${SPLIT:-4}; [ "$k" -ge 1 ] || k=1; per=$(( (n + k - 1) / k ))
  log "fault suite: $n scenarios in $k instances of up to $per, then $HOLDER alone"
  for i in $(seq 1 "$k"); do
    group=("${NAMES[@]:$(( (i - 1) * per )):$per}")
    [ ${#group[@]} -gt 0 ] || continue
    ONLY=$(for s in "${group[@]}"; do printf -- '--only %s ' "$s"; done)
    ( timeout $(( $(left) - 60 )) $P $SUITE --python "$T" --out "$W/faults$i" --timeout 200 $ONLY \
        > "$W/faults$i.txt" 2>&1; echo "rc=$?" >> "$W/faults$i.txt" ) &
  done
  wait
  log "fault suite instances done"
  if [ "$(left)" -gt 50 ]; then
    timeout $(( $(left) - 15 )) $P $SUITE --python "$T" --out "$W/faults9" --timeout 120 \
      --only "$HOLDER" > "$W/faults9.txt" 2>&1; echo "rc=$?" >> "$W/faults9.txt"
    log "memory holder done"
  else
    log "$HOLDER NOT run (no time)"
  fi
}

# whole default checks alternating A and B: each one's wall (outside), its report's duration, the launch's time and stages
abloop() {
  log "abloop"
  for i in $(seq 1 ${ABROUNDS:-4}); do
    t0=$(date +%s%N); $T -m torch.utils.collect_env > "$W/collect_env$i.txt" 2>&1; rc=$?; t1=$(date +%s%N)
    echo "C$i rc=$rc wall $(( (t1 - t0) / 1000000 ))" >> "$W/abloop-walls.txt"
    for ab in A B; do
      usesrc $ab
      t0=$(date +%s%N)
      CHECK --format json > "$W/ab-$ab$i.json" 2> /dev/null; rc=$?
      t1=$(date +%s%N)
      echo "$ab$i rc=$rc wall $(( (t1 - t0) / 1000000 ))" >> "$W/abloop-walls.txt"
    done
  done
  usesrc A
  $P - "$W/abloop-walls.txt" "$W" > "$W/abloop.txt" 2>&1 <<'PY'
import json, os, statistics, sys
walls = {}
for line in open(sys.argv[1]):
    tag, rc, _, w = line.split()
    walls[tag] = (rc, float(w) / 1000)
rows = {"A": [], "B": []}
envs = [w for tag, (rc, w) in walls.items() if tag[0] == "C"]
for tag, (rc, w) in walls.items():
    if tag[0] == "C":
        print(tag, rc, "python -m torch.utils.collect_env wall %.3f" % w); continue
    try:
        d = json.load(open(os.path.join(sys.argv[2], "ab-%s.json" % tag)))
    except Exception as e:
        print(tag, rc, "unreadable", e); continue
    by = {r["id"]: r for r in d["results"]}
    L = by.get("triton.kernel_launch") or {}
    st = ((L.get("facts") or {}).get("fresh") or {}).get("stage_s") or {}
    g = d["diagnosis"]
    dur = lambda k: (by.get(k) or {}).get("duration_s") or 0
    rows[tag[0]].append((w, d.get("duration_s") or 0, L.get("duration_s") or 0, st.get("driver"), st.get("launch")))
    print("%s %s wall %.3f report %.3f | launch %s %.3f driver %s launch %s | torch.cuda %.3f kernels.fla %.3f runtime_libs.loaded %.3f"
          " | roots %s errors %s" % (tag, rc, w, d.get("duration_s") or 0, L.get("status"), L.get("duration_s") or 0,
          st.get("driver"), st.get("launch"), dur("torch.cuda"), dur("kernels.fla"), dur("runtime_libs.loaded"),
          [b["check"] for b in g["blocking"]], g["errors"]))
for ab, r in rows.items():
    if r:
        med = lambda k: statistics.median([x[k] for x in r if x[k] is not None] or [float("nan")])
        print("%s median of %d: wall %.3f report %.3f launch %.3f driver %.3f launch-stage %.3f; check / collect_env %.3f"
              " (collect_env median %.3f of %d)" % (ab, len(r), med(0), med(1), med(2), med(3), med(4),
              med(0) / statistics.median(envs) if envs else float("nan"), statistics.median(envs) if envs else 0, len(envs)))
PY
  log "abloop done"
}

# what comes back (eight files at most; go.sh adds <PART>-ab.tgz): paths written as <repo> and $OUT
pack() {  # $1: the part
  { cat "$W/machine-$1.txt"; } > "$OUT/$1-machine.txt" 2>&1
  { [ -f "$W/bench-$1.txt" ] && cat "$W/bench-$1.txt"
    echo "=== default check (A): $(tail -1 "$W/check-default.txt" 2>/dev/null) (text), $(cat "$W/check-json.rc" 2>/dev/null) (json)"
    summ "$W/check-default.json"
    echo "=== the text report, whole"; cat "$W/check-default.txt" 2>/dev/null
    [ -f "$W/zyprof-$1.txt" ] && { echo "=== zyprof.py (${ZROUNDS:-3} runs)"; cat "$W/zyprof-$1.txt"; }
  } 2>&1 | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/$1-bench-check.txt"
  { [ -f "$W/abloop.txt" ] && { echo "=== A/B: whole default checks (--fresh, JSON), alternating A B, ${ABROUNDS:-4} each"; cat "$W/abloop.txt"; }
    for f in "$W"/launchfew-*.txt; do [ -f "$f" ] && { echo "=== launchfew ($(basename "$f" .txt)): triton.kernel_launch alone (--only) and in whole checks"; cat "$f"; }; done
  } 2>&1 | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/$1-bench-ab.txt"
  cat "$W"/faults[0-9].txt 2>/dev/null | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/$1-faults.txt"
  cp "$W/driver.log" "$OUT/$1-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -maxdepth 1 -type f \( -name 'check-*' -o -name 'zyprof-*' -o -name 'bench-*' -o -name 'lf-*' \) -size -5M \
     | tar czf "$OUT/$1-reports.tgz" -T -)
  (cd "$(dirname "$W")" && find "$(basename "$W")" -path '*/faults*' -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \) -size -5M \
     | tar czf "$OUT/$1-faults.tgz" -T -)
}

partV() {
  machine V
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  bench V
  zyprof V
  defaultcheck
  launchfew V
  suite
  pack V
}

partVT() {
  machine VT
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  abloop
  usesrc A
  defaultcheck
  usesrc B
  launchfew VT
  usesrc ${SUITESRC:-B}
  log "suite with src ${SUITESRC:-B}"
  suite
  usesrc A
  pack VT
}

partAB() {
  machine AB
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  abloop
  cp "$W/machine-AB.txt" "$OUT/AB-machine.txt"; cp "$W/driver.log" "$OUT/AB-driver.log"
  { echo "=== A/B: whole default checks (--fresh, JSON), alternating A B, ${ABROUNDS:-4} each"; cat "$W/abloop.txt"; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/AB-bench-ab.txt"
}

: "${OUT:?OUT must name the folder whose files come back}"
nvj
site
case $PART in
  V) partV;;
  VT) partVT;;
  AB) partAB;;
  *) log "unknown PART=$PART (V, VT or AB)"; exit 2;;
esac
log "done"
