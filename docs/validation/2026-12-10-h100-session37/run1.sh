#!/usr/bin/env bash
# gpu37: session 36's file; PART=VT also runs launchfew on B (LFROUNDS, default 2) after the default check.
# gpu36, the device calls of session 36 (from the checkout's root). Session 35's run1.sh, its PARTs kept, with
#   PART=V  (call 1) the machine; the bench against collect_env (2 rounds, alone 3); zyprof.py (3 whole checks: each
#           probe's time); `stackpeel check` default (text and --format json: the known-bad FLA/Triton/Hopper
#           combination); the whole fault suite with the nvJitLink 13.0.39 library and explain on each failing output.
#   PART=VT (one call, after four refused starts had spent device time): V's validation on main's src (the default
#           check, the fault suite, explain) and the A/B of check's speed: ABROUNDS rounds of collect_env, a whole
#           default check on A (main's src), one on B (NEWSRC, the branch's): each one's wall, its report's duration,
#           triton.kernel_launch's time and stages; then the default check (A, text and JSON) and the fault suite on
#           SUITESRC (default B: main plus the branch's runner change) in four instances (SPLIT4=1).
#   PART=AB the A/B (abloop) alone, with the machine's record.
#   PART=T  (call 2) check's speed, A/B on one machine: A = the checkout's src (main), B = NEWSRC (the branch's src,
#           carried); the bench for each, alternating A B A B (2 rounds each, alone 0), then one default check of each.
# gpu35, the device call of session 35 (from the checkout's root). Session 34's run1.sh (its PARTs A-H, P kept as
# they were) with PART=S (one call: the whole run, on whatever card comes) and PART=R (the same on an H200 only;
# on an H100 it records the machine and exits), and PART=Q (below). Session 34's zyprof.py is read from its folder (ZYPROF).
#   PART=S  the machine; the bench against collect_env (2 rounds, alone 3); zyprof.py (3 whole checks: each probe's
#           time, cuda.driver_api's steps, then cuda.driver_api alone 3 times); `stackpeel check` default (text and
#           --format json); the open-files finding's words: a whole check (text and JSON) under `ulimit -n` 46, 49
#           and 56 (the text one with -v: every finding, whole); the whole fault suite with the nvJitLink 13.0.39 library (NVJ_PARTS), explain on each failing
#           program's output (the suite's own ranking, first and top-3 against the scenario's expected code).
# CPU dry run: OUT=/tmp/x T=<stack venv python> PART=S bash run1.sh (the GPU steps then report failures or skips).
#
# Session 34's header:
# gpu34, the device calls of session 34 (from the checkout's root). Started from session 33's run1.sh
# (PART=A-D as session 33 ran them); session 34 adds PART=E (one call: the whole run) and PART=F (the
# driver_api profile and the bench only, for a fix measured beside its baseline).
# Two parts, one device call each, on the same warm machine (PART=A first, PART=B last; PART=all both):
# PART=A  (carry .whl: the FLA 0.6.0 wheels) the machine; the bench against collect_env (2 rounds,
# alone); `stackpeel check` default (text) and --format json, exit codes; the open-files
# thresholds session 32 measured only on an H100: a whole check under every `ulimit -n` from 44
# to 56 (side by side), scripts/expect-open-files on each, a bare first tensor and a bare first
# Triton kernel (empty cache) at each, and the open-files finding's words where the limit breaks
# the stack.
# PART=B  the nvJitLink 13.0.39 library re-packed from NVJ_PARTS; the bench again; the whole fault suite
# (scenarios 1-20 and 21-42 in two instances side by side, the GPU memory holder last, alone);
# explain on the failing programs' output is the suite's own (summary lines in the suite's text).
# Every part packs its files into $OUT before DEADLINE seconds.
# CPU dry run: OUT=/tmp/x T=<stack venv python> PART=A bash run1.sh (the GPU steps then report failures).
set -u
START=$(date +%s)
PART=${PART:-all}
DEADLINE=${DEADLINE:-560}
REPO=$PWD
T=${T:-/opt/torch/.venv/bin/python3}; P=$T
W=${W:-/tmp/g36}; SITE=${SITE:-/var/g36site}; mkdir -p "$W" "$SITE"
EXPECT=${EXPECT:-scripts/expect-open-files}
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
    echo "checkout: $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-100)"
  } > "$W/machine-$1.txt" 2>&1
}

# nvidia-nvjitlink 13.0.39's library travelled xz-compressed (x86 filter, 26.1 MB) in pieces into NVJ_PARTS;
# re-packed here as the wheel the fault suite reads (suite.py OLDER_NVJITLINK: nvidia/cu13/lib/libnvJitLink.so.13)
NVJ_SHA=8b56de439f60292ca674bfcf2eed447d3bb72bc7103a7fb4e841b679451141b4
nvj() {
  [ -n "${NVJ_PARTS:-}" ] || return 0
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
    notes = lambda code: sum(f["code"] == code for r in d["results"] for f in r["findings"])
    print(os.path.basename(p), os.path.getsize(p), "bytes; nofile", d["target"].get("nofile"), "fsize", d["target"].get("fsize"),
          "exit", g.get("exit_code"))
    print("  errors", g["errors"])
    print("  blocking", [(b["check"], b["codes"], [s["check"] for s in b["symptoms"]]) for b in g["blocking"]])
    print("  degraded", [b["check"] for b in g["degraded"]])
    print("  died", len(err), "with no finding", [r["id"] for r in err if not r["findings"]])
    print("  open-files-limit-low findings", notes("open-files-limit-low"), "file-size-limit findings", notes("file-size-limit"))
    for cid in ("torch.cuda", "triton.kernel_launch", "multi_gpu.open_files", "system.file_size_limit"):
        r = by.get(cid)
        if r:
            facts = {k: r["facts"].get(k) for k in ("soft", "hard") if k in (r["facts"] or {})}
            print("  %-22s %-7s %s %s %s" % (cid, r["status"], facts or "", [f["code"] for f in r["findings"]],
                                            (r["summary"] or "")[:140].replace("\n", " ")))
PY
}

CHECK() { $P -m stackpeel check --fresh --no-plugins --python "$T" "$@"; }

partA() {
  machine A
  bench A
  defaultcheck
  sweep
  packA A
}

defaultcheck() {
  # 1. the default check, text and JSON, and their exit codes
  log "default check"
  CHECK > "$W/check-default.txt" 2> "$W/check-default.err"; echo "exit $?" >> "$W/check-default.txt"
  CHECK --format json > "$W/check-default.json" 2> "$W/check-json.err"; echo "exit $?" > "$W/check-json.rc"
}

sweep() {
  # 2. open files: a whole check under ulimit -n N (soft and hard), side by side
  log "open-files sweep"
  NS=${NS:-"44 45 46 47 48 49 50 51 52 53 54 55 56"}
  for n in $NS; do
    ( bash -c "ulimit -n $n; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json" \
        > "$W/ofl-n$n.json" 2> "$W/ofl-n$n.err"; echo "rc=$?" > "$W/ofl-n$n.rc" ) &
  done
  wait
  log "open-files checks done"
  # the first tensor and a Triton launch (empty cache) alone, without stackpeel, at each limit
  for n in $NS; do
    ( bash -c "ulimit -n $n; exec timeout 60 $T -c 'import torch; x = torch.ones(4, device=\"cuda\"); print(\"first tensor ok\", float(x.sum()))'" \
        > "$W/tensor-n$n.txt" 2>&1; echo "rc=$?" >> "$W/tensor-n$n.txt" ) &
    ( mkdir -p "$W/tc$n"; TRITON_CACHE_DIR=$W/tc$n bash -c "ulimit -n $n; exec timeout 90 $T scenarios/gpu/user_kernel.py" \
        > "$W/launch-n$n.txt" 2>&1; echo "rc=$?" >> "$W/launch-n$n.txt" ) &
    wait
  done
  log "bare tensors and launches done"
  {
    for n in $NS; do
      echo "=== ulimit -n $n: check $(cat "$W/ofl-n$n.rc"); bare first tensor: $(grep -E '^(first tensor|torch\.|RuntimeError)' "$W/tensor-n$n.txt" | head -1 | cut -c1-110) $(tail -n 1 "$W/tensor-n$n.txt"); bare Triton launch: $(tail -n 2 "$W/launch-n$n.txt" | tr '\n' ' ' | sed "s#$T#\$T#g; s#$W#\$OUT#g" | cut -c1-200)"
      $P "$EXPECT" "$n" "$W/ofl-n$n.json"; echo "expect-open-files rc=$?"
      summ "$W/ofl-n$n.json"
    done
    echo "=== what the check says about the limit (every open-files-limit-low finding) at the lowest, 52 and the highest limit"
    for n in $(echo $NS | awk '{print $1, ($0 ~ / 52 /) ? 52 : "", $NF}'); do
      $P - "$W/ofl-n$n.json" <<'PY2'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    for f in r["findings"]:
        if f["code"] == "open-files-limit-low":
            print("-", d["target"].get("nofile"), r["id"], f["severity"], "|", f["message"][:900].replace("\n", " "))
PY2
    done
  } > "$W/open-files.txt" 2>&1
  log "summaries done"
}

packA() {  # $1: the call's letter
  cp "$W/machine-$1.txt" "$OUT/$1-machine.txt"
  { cat "$W/bench-$1.txt"; echo "=== default check: $(tail -1 "$W/check-default.txt") (text), $(cat "$W/check-json.rc") (json)"; summ "$W/check-default.json"; echo "=== the text report's last 25 lines"; tail -25 "$W/check-default.txt"; } > "$OUT/$1-bench-check.txt" 2>&1
  [ -f "$W/open-files.txt" ] && cp "$W/open-files.txt" "$OUT/$1-open-files.txt"
  cp "$W/driver.log" "$OUT/$1-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -maxdepth 1 -type f \( -name 'ofl-*' -o -name 'tensor-*' -o -name 'launch-*' \
     -o -name 'check-*' -o -name 'zyprof-*' \) -size -5M | tar czf "$OUT/$1-reports.tgz" -T -)
}

partB() {
  machine B
  bench B
  suite
  packB B
}

suite() {
  FIRST="healthy no-compiler no-compiler-warm-cache no-file-warm-cache no-file python-h-hidden cuda-visible-devices-empty
ptxas-not-executable fla-no-compiler libcuda-stub-first cuda-visible-devices-out-of-range cuda-visible-devices-unknown-uuid
triton-cache-dir-is-a-file stray-triton-package docker-default-shm cc-names-nothing nccl-socket-ifname-names-nothing
alloc-conf-invalid triton-libcuda-path-without-libcuda cuda-visible-devices-duplicate"
  TAIL="triton-cache-noexec triton-cache-read-only nvidia-uvm-node-missing nvidiactl-node-missing gpu-node-missing
only-gpu-node-passed device-nodes-not-openable ld-preload-missing libcuda-not-elf-first older-nvjitlink-on-library-path
older-nvjitlink-preloaded older-nvjitlink-preloaded-cu12 dataloader-docker-shm driver-gone-nodes-left address-space-limit
open-files-limit open-files-limit-cuda home-read-only-default-cache tmp-read-only tmp-full multi-gpu-healthy"
  $P scenarios/gpu/suite.py --list 2>/dev/null | awk '{print $1}' | sort > "$W/listed.txt"
  echo $FIRST $TAIL gpu-memory-held-by-another-process | tr ' ' '\n' | grep . | sort > "$W/grouped.txt"
  diff "$W/listed.txt" "$W/grouped.txt" > "$W/groups.diff" && log "groups cover the suite" || log "GROUPS DIFFER: $(cat $W/groups.diff | tr '\n' ' ')"
  if [ -n "${SPLIT4:-}" ]; then
    F1=$(echo $FIRST | cut -d' ' -f1-10); F2=$(echo $FIRST | cut -d' ' -f11-); T1=$(echo $TAIL | cut -d' ' -f1-11); T2=$(echo $TAIL | cut -d' ' -f12-)
    GROUPS4=("$F1" "$F2" "$T1" "$T2")
  else
    GROUPS4=("$FIRST" "$TAIL")
  fi
  log "fault suite: ${#GROUPS4[@]} instances"
  i=0
  for group in "${GROUPS4[@]}"; do
    i=$((i + 1))
    ONLY=$(for s in $group; do printf -- '--only %s ' "$s"; done)
    ( timeout $(( $(left) - 60 )) $P scenarios/gpu/suite.py --python "$T" --out "$W/faults$i" --timeout 200 $ONLY \
        > "$W/faults$i.txt" 2>&1; echo "rc=$?" >> "$W/faults$i.txt" ) &
  done
  wait
  log "fault suite instances done"
  if [ "$(left)" -gt 50 ]; then
    timeout $(( $(left) - 15 )) $P scenarios/gpu/suite.py --python "$T" --out "$W/faults9" --timeout 120 \
      --only gpu-memory-held-by-another-process > "$W/faults9.txt" 2>&1; echo "rc=$?" >> "$W/faults9.txt"
    log "memory holder done"
  else
    log "gpu-memory-held-by-another-process NOT run (no time)"
  fi
}

packB() {  # $1: the call's letter
  [ "$1" = B ] && cp "$W/machine-B.txt" "$OUT/B-machine.txt" && cp "$W/bench-B.txt" "$OUT/B-bench.txt"
  cat "$W/faults1.txt" "$W/faults2.txt" "$W/faults3.txt" > "$OUT/$1-faults.txt" 2>/dev/null
  cp "$W/driver.log" "$OUT/$1-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -path '*/faults*' -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \) -size -5M \
     | tar czf "$OUT/$1-faults.tgz" -T -)
}

# PART=C: one call for what a machine taken back mid-way left (session 33): on an H200 the open-files sweep
# first, then the bench, the default check and the fault suite; on an H100 the sweep last, where time is left
partC() {
  machine C
  H200=0; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && H200=1
  log "H200=$H200"
  [ $H200 = 1 ] && sweep
  bench C
  defaultcheck
  suite
  [ $H200 = 0 ] && [ "$(left)" -gt 130 ] && sweep
  packA C
  packB C
}

# PART=D: the fix of session 33 (the changed files copied over the checkout first) under the sweep; on an H200
# the bench too
partD() {
  machine D
  H200=0; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && H200=1
  log "H200=$H200"
  sweep
  [ $H200 = 1 ] && bench D
  defaultcheck
  packA D
}

# where the probes' time goes in a whole check (issue 9: cuda.driver_api), ZYPROF rounds (zyprof.py beside this file)
zyprof() {  # $1: tag
  log "zyprof $1"
  timeout 120 $P "${ZYPROF:-docs/validation/2026-12-07-h200-session34/zyprof.py}" "$T" "$W/zyprof-$1.json" "${ZROUNDS:-3}" > "$W/zyprof-$1.txt" 2>&1
  log "zyprof $1 rc=$?"
}

# PART=E: session 34's one call: the machine; on an H200 the open-files sweep first (the measurement no session
# could make since 30); the bench; the driver_api profile; the default check; the whole fault suite with the
# nvJitLink library (NVJ_PARTS); the sweep last on an H100 where time is left
partE() {
  machine E
  H200=0; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && H200=1
  log "H200=$H200"
  [ $H200 = 1 ] && sweep
  bench E
  zyprof E
  defaultcheck
  suite
  [ $H200 = 0 ] && [ "$(left)" -gt 130 ] && sweep
  packA E
  packB E
  { echo "=== zyprof.py: where each probe's time goes in a whole check (3 runs)"; cat "$W/zyprof-E.txt"; } >> "$OUT/E-bench-check.txt"
}

# PART=F: the driver_api profile again, with timestamps inside each fork (zyprof.py, 5 runs); on an H200 first
# the open-files sweep and the bench
partF() {
  machine F
  H200=0; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && H200=1
  log "H200=$H200"
  if [ $H200 = 1 ]; then sweep; bench F; cp "$W/open-files.txt" "$OUT/F-open-files.txt"; fi
  ZROUNDS=5 zyprof F
  cp "$W/machine-F.txt" "$OUT/F-machine.txt"; cp "$W/driver.log" "$OUT/F-driver.log"
  { cat "$W/bench-F.txt" 2>/dev/null; echo "=== zyprof.py (5 runs)"; cat "$W/zyprof-F.txt"; } > "$OUT/F-bench.txt"
  (cd "$W" && tar czf "$OUT/F-zyprof.tgz" zyprof-*.json)
}

# PART=H: on an H200 only (exit at once on anything else): the open-files sweep, the bench, the default check
partH() {
  machine H
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 || {
    log "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
    cp "$W/machine-H.txt" "$OUT/H-machine.txt"; cp "$W/driver.log" "$OUT/H-driver.log"; return; }
  sweep
  bench H
  defaultcheck
  packA H
}

# PART=P: on an H200 first the sweep, the bench and the default check; on any card then contend.py (cuda.driver_api's
# probe alone under one neighbour at a time, 5 runs each)
partP() {
  machine P
  if nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200; then
    log "H200"; sweep; bench P; defaultcheck; packA P
  else
    log "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  fi
  log "contend"
  timeout 150 $P "$(dirname "$0")/contend.py" "$T" 5 > "$OUT/P-contend.txt" 2>&1
  log "contend rc=$?"
  cp "$W/machine-P.txt" "$OUT/P-machine.txt"; cp "$W/driver.log" "$OUT/P-driver.log"
}

# session 35: the open-files finding's words as a whole check gives them, text and JSON, under ulimit -n WORDS_NS
words() {
  WN=${WORDS_NS:-"46 49 56"}
  log "words at $WN"
  for n in $WN; do
    ( bash -c "ulimit -n $n; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json" \
        > "$W/words-n$n.json" 2> "$W/words-n$n.err"; echo "rc=$?" > "$W/words-n$n.rc" ) &
    ( bash -c "ulimit -n $n; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T -v --no-color" \
        > "$W/words-n$n.txt" 2> "$W/words-n$n.terr"; echo "rc=$?" >> "$W/words-n$n.txt" ) &
  done
  wait
  {
    for n in $WN; do
      echo "=== ulimit -n $n: JSON check $(cat "$W/words-n$n.rc")"
      $P "$EXPECT" "$n" "$W/words-n$n.json"; echo "expect-open-files rc=$?"
      summ "$W/words-n$n.json"
      echo "--- every open-files-limit-low finding, whole"
      $P - "$W/words-n$n.json" <<'PY3'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    for f in r["findings"]:
        if f["code"] == "open-files-limit-low":
            print("-", d["target"].get("nofile"), r["id"], f["severity"], "|", f["message"])
            if f.get("fix"):
                print("  fix:", f["fix"])
PY3
      echo "--- the text report (-v --no-color), whole (stderr: $(wc -c < "$W/words-n$n.terr") bytes)"
      cat "$W/words-n$n.txt"
    done
  } 2>&1 | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$W/words.txt"
  log "words done"
}

packS() {  # $1: the call's letter
  cp "$W/machine-$1.txt" "$OUT/$1-machine.txt"
  { cat "$W/bench-$1.txt"; echo "=== default check: $(tail -1 "$W/check-default.txt") (text), $(cat "$W/check-json.rc") (json)"; summ "$W/check-default.json";
    echo "=== the text report, whole"; cat "$W/check-default.txt";
    echo "=== zyprof.py: where each probe's time goes in a whole check (3 runs), then cuda.driver_api alone"; cat "$W/zyprof-$1.txt"; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/$1-bench-check.txt"
  [ -f "$W/words.txt" ] && cp "$W/words.txt" "$OUT/$1-words.txt"
  cat "$W/faults1.txt" "$W/faults2.txt" "$W/faults3.txt" "$W/faults4.txt" "$W/faults9.txt" 2>/dev/null | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/$1-faults.txt"
  cp "$W/driver.log" "$OUT/$1-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -maxdepth 1 -type f \( -name 'words-*' -o -name 'check-*' -o -name 'zyprof-*' -o -name 'bench-*' -o -name 'lf-*' \) -size -5M \
     | tar czf "$OUT/$1-reports.tgz" -T -)
  (cd "$(dirname "$W")" && find "$(basename "$W")" -path '*/faults*' -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \) -size -5M \
     | tar czf "$OUT/$1-faults.tgz" -T -)
}

# PART=S: session 35's one call, on whatever card comes
partS() {
  machine "${1:-S}"
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  bench "${1:-S}"
  zyprof "${1:-S}"
  defaultcheck
  words
  suite
  packS "${1:-S}"
}

# PART=R: the same on an H200 only; on anything else the machine's record and exit
partR() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && { partS R; return; }
  machine R
  log "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  cp "$W/machine-R.txt" "$OUT/R-machine.txt"; cp "$W/driver.log" "$OUT/R-driver.log"
}

# PART=Q: on an H200 the whole of PART=S; on anything else the bench twice more and zyprof.py's 5 runs (session 35's
# third call, after the first H100's check / collect_env 1.10)
partQ() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200 && { partS Q; return; }
  machine Q
  log "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  bench Q1; bench Q2
  ZROUNDS=5 zyprof Q
  cp "$W/machine-Q.txt" "$OUT/Q-machine.txt"; cp "$W/driver.log" "$OUT/Q-driver.log"
  { cat "$W/bench-Q1.txt"; echo "=== the bench again"; cat "$W/bench-Q2.txt"; echo "=== zyprof.py (5 runs)"; cat "$W/zyprof-Q.txt"; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/Q-bench.txt"
}

# PART=V: session 36's first call (session 35's PART=S without the open-files words)
partV() {
  machine V
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  bench V
  zyprof V
  defaultcheck
  launchfew V
  suite
  packS V
  cp "$W/launchfew-V.txt" "$OUT/V-launchfew.txt"
}

# the launch's stages (stage_s) in a whole check against a check of triton.kernel_launch alone (--only: its
# requires run too), 3 each: how much of its 'driver' stage is the other forks' CUDA initialisation beside it
launchfew() {  # $1: tag
  log "launchfew $1"
  for i in $(seq 1 ${LFROUNDS:-3}); do
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

# PART=T: session 36's second call: check's speed, A (the checkout's src) against B (NEWSRC), alternating
partT() {
  machine T
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  for r in 1 2; do
    for ab in A B; do
      if [ $ab = A ]; then export PYTHONPATH="$REPO/src:$SITE"; else export PYTHONPATH="$REPO/$NEWSRC:$SITE"; fi
      bench "T$ab$r"
    done
  done
  for ab in A B; do
    if [ $ab = A ]; then export PYTHONPATH="$REPO/src:$SITE"; else export PYTHONPATH="$REPO/$NEWSRC:$SITE"; fi
    CHECK --format json > "$W/check-T$ab.json" 2> "$W/check-T$ab.err"; echo "exit $?" > "$W/check-T$ab.rc"
  done
  export PYTHONPATH="$REPO/src:$SITE"
  cp "$W/machine-T.txt" "$OUT/T-machine.txt"; cp "$W/driver.log" "$OUT/T-driver.log"
  { for f in TA1 TB1 TA2 TB2; do echo "=== bench $f (A: main's src, B: the branch's)"; cat "$W/bench-$f.txt"; done
    for ab in A B; do echo "=== default check $ab: $(cat "$W/check-T$ab.rc")"; summ "$W/check-T$ab.json"; done; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/T-bench.txt"
  (cd "$W" && tar czf "$OUT/T-reports.tgz" check-T*.json bench-T*)
}

# PART=VT: V and T in one call (see the header)
benchab() {  # $1: tag, $2: alone rounds
  log "bench $1 (${BROUNDS:-1} rounds, alone $2)"
  timeout 150 $P bench/check_bench.py --python "$T" --rounds ${BROUNDS:-1} --deep-rounds 0 --alone-rounds "$2" \
    --label "lent GPU machine ($1)" > "$W/bench-$1.txt" 2> "$W/bench-$1.stderr"
  log "bench $1 rc=$?"
}
usesrc() { if [ "$1" = A ]; then export PYTHONPATH="$REPO/src:$SITE"; else export PYTHONPATH="$REPO/$NEWSRC:$SITE"; fi; }
partVT() {
  machine VT
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  abloop
  usesrc A
  defaultcheck
  usesrc B
  LFROUNDS=${LFROUNDS:-2} launchfew VT
  usesrc ${SUITESRC:-B}
  log "suite with src ${SUITESRC:-B}"
  suite
  usesrc A
  packS VT
  { echo "=== A/B: whole default checks (--fresh, JSON), alternating A B, ${ABROUNDS:-4} each"; cat "$W/abloop.txt";
    echo "=== launchfew on B: triton.kernel_launch alone (--only) and in whole checks, ${LFROUNDS:-2} each"; cat "$W/launchfew-VT.txt"; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/VT-bench-ab.txt"
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
    rows[tag[0]].append((w, d.get("duration_s") or 0, L.get("duration_s") or 0, st.get("driver"), st.get("launch")))
    print("%s %s wall %.3f report %.3f | launch %s %.3f driver %s launch %s | torch.cuda %.3f kernels.fla %.3f runtime_libs.loaded %.3f"
          " | roots %s errors %s" % (tag, rc, w, d.get("duration_s") or 0, L.get("status"), L.get("duration_s") or 0,
          st.get("driver"), st.get("launch"), by["torch.cuda"]["duration_s"], by["kernels.fla"]["duration_s"],
          by["runtime_libs.loaded"]["duration_s"], [b["check"] for b in g["blocking"]], g["errors"]))
for ab, r in rows.items():
    if r:
        med = lambda k: statistics.median([x[k] for x in r if x[k] is not None] or [float("nan")])
        print("%s median of %d: wall %.3f report %.3f launch %.3f driver %.3f launch-stage %.3f; check / collect_env %.3f"
              " (collect_env median %.3f of %d)" % (ab, len(r), med(0), med(1), med(2), med(3), med(4),
              med(0) / statistics.median(envs) if envs else float("nan"), statistics.median(envs) if envs else 0, len(envs)))
PY
  log "abloop done"
}

# PART=AB: the A/B alone (the last try, with too little device time left for the suite)
partAB() {
  machine AB
  log "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
  abloop
  cp "$W/machine-AB.txt" "$OUT/AB-machine.txt"; cp "$W/driver.log" "$OUT/AB-driver.log"
  { echo "=== A/B: whole default checks (--fresh, JSON), alternating A B, ${ABROUNDS:-4} each"; cat "$W/abloop.txt"; } 2>&1 \
    | sed "s#$REPO#<repo>#g; s#$W#\$OUT#g" > "$OUT/AB-bench-ab.txt"
  (cd "$W" && tar czf "$OUT/AB-reports.tgz" ab-*.json abloop*)
}

nvj
site
case $PART in
  AB) partAB;;
  VT) partVT;;
  V) partV;;
  T) partT;;
  Q) partQ;;
  S) partS;;
  R) partR;;
  P) partP;;
  H) partH;;
  E) partE;;
  F) partF;;
  C) partC;;
  D) partD;;
  A) partA;;
  B) partB;;
  all) partA; partB;;
esac
log "done"
