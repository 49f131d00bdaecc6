#!/usr/bin/env bash
# gpu32, the device calls of session 32 (from the checkout's root). Started from session 30's run1.sh/run2.sh.
# Two parts, one device call each, on the same warm machine (PART=A first, PART=B last; PART=all both):
#   PART=A  (carry .whl: the FLA 0.6.0 wheels) the machine; the bench against collect_env (2 rounds,
#           alone); `stackpeel check` default (text) and --format json, exit codes; issue 8's known-bad
#           combination (FLA 0.6.0 + Triton 3.6.0 + Hopper: check's text and JSON, the fix and source,
#           scenarios/gpu/known_combinations.py's real backward, explain on its output); fix30's OwnLimit on
#           the GPU: a whole check under `ulimit -n` 44-48 and 52-56 (session 30 measured 40/44/48/52/56/64
#           on the H200, 44-48/53-56 on an H100), scripts/expect-open-files on each, a bare first tensor
#           and a bare Triton launch (empty cache) at each; soft limit below the hard one (-Sn 44 -Hn 4096:
#           stackpeel raises its own, the probes keep 44); a hard limit under stackpeel's own wish
#           (-n 40: it cannot raise; -n 16: under OWN_DESCRIPTORS, it must say so); `ulimit -f 0` and
#           `ulimit -Sf 64` (the report written whole).
#   PART=B  the nvJitLink 13.0.39 library re-packed from NVJ_PARTS; the bench again; the whole fault suite
#           (scenarios 1-20 and 21-42 in two instances side by side, the GPU memory holder last, alone);
#           explain on the failing programs' output is the suite's own (summary lines in the suite's text).
# Every part packs its files into $OUT before DEADLINE seconds.
# CPU dry run: OUT=/tmp/x T=<stack venv python> PART=A bash run1.sh (the GPU steps then report failures).
set -u
START=$(date +%s)
PART=${PART:-all}
DEADLINE=${DEADLINE:-560}
REPO=$PWD
T=${T:-/opt/torch/.venv/bin/python3}; P=$T
W=${W:-/tmp/g32}; SITE=${SITE:-/var/g32site}; mkdir -p "$W" "$SITE"
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
  # 1. the default check, text and JSON, and their exit codes
  log "default check"
  CHECK > "$W/check-default.txt" 2> "$W/check-default.err"; echo "exit $?" >> "$W/check-default.txt"
  CHECK --format json > "$W/check-default.json" 2> "$W/check-json.err"; echo "exit $?" > "$W/check-json.rc"
  # 2. issue 8's known-bad combination: check alone on it (text + JSON), FLA's real backward, explain on it
  log "known-bad combination"
  {
    echo "=== stackpeel check --only config.known_combinations (text)"
    CHECK --only config.known_combinations 2>&1; echo "exit $?"
    echo "=== the same, JSON: the finding"
    CHECK --only config.known_combinations --format json 2>/dev/null | $P -c "
import json, sys
d = json.load(sys.stdin); r = [x for x in d['results'] if x['id'] == 'config.known_combinations'][0]
print('status', r['status'], 'blocking roots', [(b['check'], b['codes']) for b in d['diagnosis']['blocking']], 'exit', d['diagnosis'].get('exit_code'))
for f in r['findings']: print(json.dumps(f, indent=1)[:3000])"
    echo "=== scenarios/gpu/known_combinations.py (FLA's real forward and backward on the GPU)"
    timeout 300 $P scenarios/gpu/known_combinations.py --python "$T"; echo "rc=$?"
  } > "$W/combination.txt" 2>&1
  # explain on the real backward's traceback
  timeout 200 $P - > "$W/fla-bwd.log" 2>&1 <<'PY'
import torch
from fla.ops.gated_delta_rule import chunk_gated_delta_rule
B, T, H, K, V = 1, 128, 2, 64, 64
q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.nn.functional.normalize(torch.randn(B, T, H, K, device="cuda"), dim=-1).to(torch.bfloat16).requires_grad_(True)
v = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16, requires_grad=True)
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, device="cuda")).requires_grad_(True)
beta = torch.rand(B, T, H, device="cuda", dtype=torch.bfloat16).sigmoid().requires_grad_(True)
o, _ = chunk_gated_delta_rule(q, k, v, g, beta)
print("forward ok", tuple(o.shape))
o.float().sum().backward()
print("backward ok")
PY
  {
    echo "=== the backward's output (last 6 lines)"; tail -6 "$W/fla-bwd.log"
    echo "=== explain --no-live on it: first three"
    $P -m stackpeel explain --no-live --format json "$W/fla-bwd.log" | $P -c "import json,sys; print([c['code'] for c in json.load(sys.stdin)['candidates'][:3]])"
    echo "=== explain (live) on it: first three"
    $P -m stackpeel explain --format json "$W/fla-bwd.log" | $P -c "import json,sys; print([c['code'] for c in json.load(sys.stdin)['candidates'][:3]])"
  } >> "$W/combination.txt" 2>&1
  # 3. open files: a whole check under ulimit -n N (soft and hard), side by side
  log "open-files sweep"
  NS="44 45 46 47 48 52 53 54 55 56"
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
  # soft under hard (stackpeel raises its own, probes keep the user's); hard under stackpeel's wish
  bash -c "ulimit -Sn 44; ulimit -Hn 4096; ulimit -Sn 44; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json" \
    > "$W/ofl-s44h4096.json" 2> "$W/ofl-s44h4096.err"; echo "rc=$?" > "$W/ofl-s44h4096.rc"
  bash -c "ulimit -Sn 40; ulimit -Hn 40; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T" \
    > "$W/ofl-h40.txt" 2> "$W/ofl-h40.err"; echo "rc=$?" >> "$W/ofl-h40.txt"
  bash -c "ulimit -Sn 40; ulimit -Hn 40; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json" \
    > "$W/ofl-h40.json" 2> "$W/ofl-h40j.err"; echo "rc=$?" > "$W/ofl-h40.rc"
  bash -c "ulimit -n 16; exec timeout 120 $P -m stackpeel check --fresh --no-plugins --python $T" \
    > "$W/ofl-h16.txt" 2> "$W/ofl-h16.err"; echo "rc=$?" >> "$W/ofl-h16.txt"
  {
    for n in $NS; do
      echo "=== ulimit -n $n: check $(cat "$W/ofl-n$n.rc"); bare first tensor: $(grep -E '^(first tensor|torch\.|RuntimeError)' "$W/tensor-n$n.txt" | head -1 | cut -c1-110) $(tail -n 1 "$W/tensor-n$n.txt"); bare Triton launch: $(tail -n 2 "$W/launch-n$n.txt" | tr '\n' ' ' | cut -c1-160)"
      $P "$EXPECT" "$n" "$W/ofl-n$n.json"; echo "expect-open-files rc=$?"
      summ "$W/ofl-n$n.json"
    done
    echo "=== ulimit -Sn 44 -Hn 4096 (stackpeel raises its own to 4096; the probes get 44): check $(cat "$W/ofl-s44h4096.rc")"
    $P "$EXPECT" 44 "$W/ofl-s44h4096.json" --soft-only; echo "expect-open-files --soft-only rc=$?"
    summ "$W/ofl-s44h4096.json"
    echo "=== ulimit -n 40 (hard 40: under stackpeel's own wish, it cannot raise): check $(cat "$W/ofl-h40.rc")"
    $P "$EXPECT" 40 "$W/ofl-h40.json"; echo "expect-open-files rc=$?"
    summ "$W/ofl-h40.json"
    echo "--- its terminal report (last 30 lines), stderr: $(tail -3 "$W/ofl-h40.err" | tr '\n' ' ')"
    tail -30 "$W/ofl-h40.txt"
    echo "=== ulimit -n 16 (under OWN_DESCRIPTORS = 17): the terminal report (last 20 lines) and stderr"
    tail -20 "$W/ofl-h16.txt"; echo "--- stderr:"; tail -8 "$W/ofl-h16.err"
  } > "$W/open-files.txt" 2>&1
  # 4. file-size limits: under -f 0 the report goes through a pipe; under -Sf 64 to a file
  log "file-size limits"
  bash -c "ulimit -f 0; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json" 2> "$W/fsize0.err" | cat > "$W/fsize0.json"
  bash -c "ulimit -Sf 64; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --format json --out $W/fsize64.json" > "$W/fsize64.out" 2> "$W/fsize64.err"; echo "rc=$?" > "$W/fsize64.rc"
  bash -c "ulimit -Sf 64; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T --out $W/fsize64t.txt" > "$W/fsize64t.out" 2> "$W/fsize64t.err"; echo "rc=$?" > "$W/fsize64t.rc"
  bash -c "ulimit -f 0; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T" 2>&1 | cat > "$W/fsize0-text.txt"
  {
    echo "=== ulimit -f 0 (JSON report through a pipe)"; summ "$W/fsize0.json"
    echo "=== ulimit -Sf 64 (JSON report to a file) $(cat "$W/fsize64.rc"); stderr: $(tail -2 "$W/fsize64.err")"; summ "$W/fsize64.json"
    echo "=== ulimit -Sf 64 (text report to a file) $(cat "$W/fsize64t.rc"): $(wc -c < "$W/fsize64t.txt" 2>/dev/null) bytes, last line: $(tail -1 "$W/fsize64t.txt" 2>/dev/null | cut -c1-120); stderr: $(tail -2 "$W/fsize64t.err")"
    echo "=== ulimit -f 0, the terminal report (last 25 lines)"; tail -25 "$W/fsize0-text.txt"
  } > "$W/fsize.txt" 2>&1
  log "file-size limits done"
  cp "$W/machine-A.txt" "$OUT/A-machine.txt"
  { cat "$W/bench-A.txt"; echo "=== default check: $(tail -1 "$W/check-default.txt") (text), $(cat "$W/check-json.rc") (json)"; summ "$W/check-default.json"; } > "$OUT/A-bench-check.txt" 2>&1
  cp "$W/combination.txt" "$OUT/A-combination.txt"
  cp "$W/open-files.txt" "$OUT/A-open-files.txt"
  cp "$W/fsize.txt" "$OUT/A-fsize.txt"
  cp "$W/driver.log" "$OUT/A-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -maxdepth 1 -type f \( -name 'ofl-*' -o -name 'tensor-*' -o -name 'launch-*' \
     -o -name 'fsize*' -o -name 'check-*' -o -name 'fla-bwd.log' \) -size -5M | tar czf "$OUT/A-reports.tgz" -T -)
}

partB() {
  machine B
  bench B
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
  log "fault suite: two instances"
  i=0
  for group in "$FIRST" "$TAIL"; do
    i=$((i + 1))
    ONLY=$(for s in $group; do printf -- '--only %s ' "$s"; done)
    ( timeout $(( $(left) - 60 )) $P scenarios/gpu/suite.py --python "$T" --out "$W/faults$i" --timeout 200 $ONLY \
        > "$W/faults$i.txt" 2>&1; echo "rc=$?" >> "$W/faults$i.txt" ) &
  done
  wait
  log "fault suite instances done"
  if [ "$(left)" -gt 50 ]; then
    timeout $(( $(left) - 15 )) $P scenarios/gpu/suite.py --python "$T" --out "$W/faults3" --timeout 120 \
      --only gpu-memory-held-by-another-process > "$W/faults3.txt" 2>&1; echo "rc=$?" >> "$W/faults3.txt"
    log "memory holder done"
  else
    log "gpu-memory-held-by-another-process NOT run (no time)"
  fi
  cp "$W/machine-B.txt" "$OUT/B-machine.txt"
  cp "$W/bench-B.txt" "$OUT/B-bench.txt"
  cat "$W/faults1.txt" "$W/faults2.txt" "$W/faults3.txt" > "$OUT/B-faults.txt" 2>/dev/null
  cp "$W/driver.log" "$OUT/B-driver.log"
  (cd "$(dirname "$W")" && find "$(basename "$W")" -path '*/faults*' -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \) -size -5M \
     | tar czf "$OUT/B-faults.tgz" -T -)
}

nvj
site
case $PART in
  A) partA;;
  B) partB;;
  all) partA; partB;;
esac
log "done"
