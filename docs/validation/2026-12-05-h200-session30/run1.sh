#!/usr/bin/env bash
# gpu30, the device calls of session 30 (from the checkout's root; carry .whl: the FLA 0.6.0 wheels and
# nvidia-nvjitlink 13.0.39, the older nvJitLink the fault suite's older-nvjitlink-* scenarios unpack).
# Started from session 29's run3.sh and session 28's run1.sh/run2.sh. Two parts, one device call each,
# on the same warm machine (PART=1, then PART=2; PART=all runs both in one call):
#   PART=1  the machine; the bench against collect_env (2 rounds, alone); the whole fault suite:
#           scenarios 1-20 and 21-42 in two instances side by side, the GPU memory holder last and alone;
#   PART=2  the bench again (2 rounds, alone); the open-files threshold of torch's first tensor
#           (`ulimit -n` 40..64, a whole check at each, scripts/expect-open-files on each); `ulimit -f 0`
#           and `ulimit -Sf 64` (chk29: the report written whole, the limit the blocking root); Triton's
#           cache on a full / inode-less / read-only folder (chk29: a real kernel, explain on its output,
#           the check in the same fault; tests/test_cache_write_refused.py against the device's torch);
#           tests/test_file_size_limit.py and test_expect_open_files.py against the device's torch.
# Every part packs its files into $OUT (at most 8 files) before DEADLINE seconds.
# CPU dry run: OUT=/tmp/x T=<stack venv python> PART=2 bash run1.sh (the GPU steps then report failures).
set -u
START=$(date +%s)
PART=${PART:-all}
DEADLINE=${DEADLINE:-560}
REPO=$PWD
T=${T:-/opt/torch/.venv/bin/python3}; P=$T; PYTEST=${PYTEST:-$P}
W=/tmp/g30; SITE=/var/g30site; mkdir -p "$W" "$SITE"
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
for d in ('fla-core', 'flash-linear-attention', 'transformers', 'einops', 'nvidia-nvjitlink', 'causal-conv1d'):
    try: print(d, m.version(d))
    except Exception: print(d, 'not installed')" 2>&1
    echo "wheels carried: $(cd .whl 2>/dev/null && ls)"
    echo "checkout: $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-100)"
  } > "$W/machine-$1.txt" 2>&1
}

# nvidia-nvjitlink 13.0.39's wheel (41 MB) and the checkout (55 MiB) do not fit one call's 64 MiB: its one
# library travelled xz-compressed (28 MB) in four pieces over four calls into NVJ_PARTS (prep: xz -9e, split;
# see README.md) and is re-packed here as the wheel the fault suite looks for (suite.py OLDER_NVJITLINK: it
# reads only nvidia/cu13/lib/libnvJitLink.so.13 from it); its sha256 must be the PyPI wheel's library's
NVJ_SHA=8b56de439f60292ca674bfcf2eed447d3bb72bc7103a7fb4e841b679451141b4
if [ -n "${NVJ_PARTS:-}" ] && ! ls .whl/nvidia_nvjitlink-13.0.39-*.whl >/dev/null 2>&1; then
  mkdir -p .whl
  $P - "$NVJ_PARTS" "$NVJ_SHA" <<'PY' >> "$W/driver.log" 2>&1
import glob, hashlib, lzma, sys, zipfile
parts = sorted(glob.glob(sys.argv[1] + "/p*"))
data = lzma.decompress(b"".join(open(p, "rb").read() for p in parts))
digest = hashlib.sha256(data).hexdigest()
print("nvJitLink 13.0.39 from", len(parts), "pieces:", len(data), "bytes, sha256", digest,
      "MATCHES the PyPI wheel's" if digest == sys.argv[2] else "DIFFERS from the PyPI wheel's: not used")
if digest == sys.argv[2]:
    with zipfile.ZipFile(".whl/nvidia_nvjitlink-13.0.39-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", "w") as z:
        z.writestr("nvidia/cu13/lib/libnvJitLink.so.13", data)
PY
fi

# the Python packages only: an nvidia-* wheel installed would be preloaded by torch in every scenario
# (the fault suite unpacks the older nvJitLink from .whl itself)
WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/nvidia_')
[ -d "$SITE/fla" ] || { [ -z "$WHEELS" ] || $P -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target "$SITE" $WHEELS >> "$W/driver.log" 2>&1 || log "FLA wheels did not install"; }
export PYTHONPATH="$REPO/src:$SITE"

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
    print("  blocking", [(b["check"], b["codes"], len(b["symptoms"])) for b in g["blocking"]])
    print("  degraded", [b["check"] for b in g["degraded"]])
    print("  died", len(err), "with no finding", [r["id"] for r in err if not r["findings"]])
    print("  open-files-limit-low findings", notes("open-files-limit-low"), "file-size-limit findings", notes("file-size-limit"))
    for cid in ("torch.cuda", "triton.kernel_launch", "multi_gpu.open_files", "system.file_size_limit"):
        r = by.get(cid)
        if r:
            facts = {k: r["facts"].get(k) for k in ("soft", "hard") if k in r["facts"]}
            print("  %-22s %-5s %s %s %s" % (cid, r["status"], facts or "", [f["code"] for f in r["findings"]],
                                            (r["summary"] or "")[:150].replace("\n", " ")))
PY
}

part1() {
  machine 1
  bench 1
  FIRST="healthy no-compiler no-compiler-warm-cache no-file-warm-cache no-file python-h-hidden cuda-visible-devices-empty
ptxas-not-executable fla-no-compiler libcuda-stub-first cuda-visible-devices-out-of-range cuda-visible-devices-unknown-uuid
triton-cache-dir-is-a-file stray-triton-package docker-default-shm cc-names-nothing nccl-socket-ifname-names-nothing
alloc-conf-invalid triton-libcuda-path-without-libcuda cuda-visible-devices-duplicate"
  TAIL="triton-cache-noexec triton-cache-read-only nvidia-uvm-node-missing nvidiactl-node-missing gpu-node-missing
only-gpu-node-passed device-nodes-not-openable ld-preload-missing libcuda-not-elf-first older-nvjitlink-on-library-path
older-nvjitlink-preloaded older-nvjitlink-preloaded-cu12 dataloader-docker-shm driver-gone-nodes-left address-space-limit
open-files-limit open-files-limit-cuda home-read-only-default-cache tmp-read-only tmp-full multi-gpu-healthy"
  # every scenario the suite lists is in one of the three groups
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
  cat "$W/machine-1.txt" > "$OUT/p1-machine.txt"
  cp "$W/bench-1.txt" "$OUT/p1-bench.txt"
  cat "$W/faults1.txt" "$W/faults2.txt" "$W/faults3.txt" > "$OUT/p1-faults.txt" 2>/dev/null
  cp "$W/driver.log" "$OUT/p1-driver.log"
  (cd /tmp && find g30 -path 'g30/faults*' -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \) -size -5M \
     | tar czf "$OUT/p1-faults.tgz" -T -)
}

part2() {
  machine 2
  bench 2
  CHECK="$P -m stackpeel check --fresh --format json --no-plugins --python $T"
  # 1. open-files: a whole check under ulimit -n N (soft and hard), side by side
  log "open-files sweep"
  NS="40 44 48 52 56 64"
  for n in $NS; do
    ( bash -c "ulimit -n $n; exec timeout 200 $CHECK" > "$W/ofl-n$n.json" 2> "$W/ofl-n$n.err"; echo "rc=$?" > "$W/ofl-n$n.rc" ) &
  done
  # the first tensor alone, without stackpeel, at each limit (what torch itself says)
  for n in $NS; do
    bash -c "ulimit -n $n; exec timeout 60 $T -c 'import torch; x = torch.ones(4, device=\"cuda\"); print(\"first tensor ok\", float(x.sum()))'" \
      > "$W/tensor-n$n.txt" 2>&1; echo "rc=$?" >> "$W/tensor-n$n.txt"
  done
  wait
  log "open-files sweep done"
  {
    for n in $NS; do
      echo "=== ulimit -n $n: check $(cat "$W/ofl-n$n.rc"); the first tensor alone: $(tail -2 "$W/tensor-n$n.txt" | tr '\n' ' ' | cut -c1-220)"
      $P scripts/expect-open-files "$n" "$W/ofl-n$n.json"; echo "expect-open-files rc=$?"
      summ "$W/ofl-n$n.json"
    done
  } > "$W/open-files.txt" 2>&1
  # 2. file-size limits (chk28 / chk29): under -f 0 the report goes through a pipe; under -Sf 64 to a file
  log "file-size limits"
  bash -c "ulimit -f 0; exec timeout 200 $CHECK" 2> "$W/fsize0.err" | cat > "$W/fsize0.json"
  bash -c "ulimit -Sf 64; exec timeout 200 $CHECK --out $W/fsize64.json" > "$W/fsize64.out" 2> "$W/fsize64.err"; echo "rc=$?" > "$W/fsize64.rc"
  bash -c "ulimit -f 0; exec timeout 200 $P -m stackpeel check --fresh --no-plugins --python $T" 2>&1 | cat > "$W/fsize0-text.txt"
  {
    echo "=== ulimit -f 0 (report through a pipe)"; summ "$W/fsize0.json"
    echo "=== ulimit -Sf 64 (report to a file) $(cat "$W/fsize64.rc"); stderr: $(tail -2 "$W/fsize64.err")"; summ "$W/fsize64.json"
    echo "=== ulimit -f 0, the terminal report (last 25 lines)"; tail -25 "$W/fsize0-text.txt"
  } > "$W/fsize.txt" 2>&1
  log "file-size limits done"
  # 3. Triton's cache refused (chk29 item 2), the real kernel on the GPU, and the tests
  log "triton cache refusals"
  ( cd "$REPO" && STACKPEEL_STACK_PYTHON=$T PYTHONPATH=src timeout $(( $(left) - 120 )) $PYTEST -m pytest -q -p no:cacheprovider -rs \
      tests/test_cache_write_refused.py tests/test_file_size_limit.py tests/test_expect_open_files.py \
      > "$W/tests.txt" 2>&1; echo "rc=$?" >> "$W/tests.txt" ) &
  PT=$!
  if unshare -m true; then
    M=/tmp/g30mnt; mkdir -p $M
    for fault in full noinodes ro; do
      case $fault in
        full) SET="mount -t tmpfs -o size=1m none $M && mkdir $M/cache && { dd if=/dev/zero of=$M/fill bs=4k count=1000 2>/dev/null; true; }";;
        noinodes) SET="mount -t tmpfs -o size=64m,nr_inodes=4 none $M && mkdir $M/cache && touch $M/a $M/b";;
        ro) SET="mkdir -p $M/cache && mount --bind $M $M && mount -o remount,bind,ro $M";;
      esac
      TRITON_CACHE_DIR=$M/cache unshare -m sh -c "$SET && exec \"\$@\"" sh timeout 120 $T scenarios/gpu/user_kernel.py \
        > "$W/cache-kernel-$fault.log" 2>&1
      $P -m stackpeel explain --format json "$W/cache-kernel-$fault.log" > "$W/cache-explain-$fault.json"
      TRITON_CACHE_DIR=$M/cache unshare -m sh -c "$SET && exec \"\$@\"" sh timeout 120 $CHECK --only toolchain.triton_cache \
        > "$W/cache-check-$fault.json"
      $P - "$W/cache-explain-$fault.json" "$W/cache-check-$fault.json" $fault <<'PY' >> "$W/cache.txt" 2>&1
import json, sys
e = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
r = [x for x in c["results"] if x["id"] == "toolchain.triton_cache"][0]
print(sys.argv[3], "explain", [x["code"] for x in e["candidates"][:3]], "check", r["status"], [f["code"] for f in r["findings"]],
      "roots", [(b["check"], b["codes"]) for b in c["diagnosis"]["blocking"]])
PY
      tail -3 "$W/cache-kernel-$fault.log" >> "$W/cache.txt"
    done
  else
    echo "unshare -m FAILS: the cache refusals not run" > "$W/cache.txt"
  fi
  log "cache kernels done; waiting for the tests"
  wait $PT
  log "tests done"
  cat "$W/machine-2.txt" > "$OUT/p2-machine.txt"
  cp "$W/bench-2.txt" "$OUT/p2-bench.txt"
  cat "$W/open-files.txt" > "$OUT/p2-open-files.txt"
  cat "$W/fsize.txt" > "$OUT/p2-fsize.txt"
  { echo "=== Triton cache refusals: a real kernel, explain on its output, the check in the same fault"; cat "$W/cache.txt"
    echo; echo "=== tests (device's torch)"; tail -40 "$W/tests.txt"; } > "$OUT/p2-cache-tests.txt" 2>&1
  cp "$W/driver.log" "$OUT/p2-driver.log"
  (cd /tmp && find g30 -maxdepth 1 -type f \( -name 'ofl-*' -o -name 'tensor-*' -o -name 'fsize*' -o -name 'cache-*' \
     -o -name 'tests.txt' \) -size -5M | tar czf "$OUT/p2-reports.tgz" -T -)
}

case $PART in
  1) part1;;
  2) part2;;
  all) part1; part2;;
esac
log "done"
