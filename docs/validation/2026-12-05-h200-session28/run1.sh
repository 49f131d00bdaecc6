#!/usr/bin/env bash
# gpu28, device call 1 (from the checkout's root, carry .whl (FLA 0.6.0 wheels)):
#   1. the speed suite (scenarios/gpu/speed_suite.sh as landed, except that its fault suite runs
#      scenarios 1-20 only: the rest run in a second instance beside it, see 3);
#   2. after its bench (which runs alone), the doc commands of tmp25/fd25/tmp26/combo26/chk27 (docs.sh);
#   3. at the same time the fault suite's scenarios 21-41 except the GPU memory holder, which runs
#      last and alone (it leaves 4 GiB of the GPU to everything else);
#   everything packed into $OUT by DEADLINE seconds.
set -u
START=$(date +%s); export START
DEADLINE=${DEADLINE:-548}
REPO=$PWD; SELF=$(cd "$(dirname "$0")" && pwd); export REPO SELF
P=$(command -v python3); T=$P; export P T
W=/tmp/g28; D=$W/docs; SITE2=/var/g28site; export D SITE2
mkdir -p "$W" "$D" "$SITE2"
el() { echo $(( $(date +%s) - START )); }
log() { echo "[$(el)s] $*" | tee -a "$W/driver.log"; }

{
  echo "date: $(date -u)"; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv
  uname -r; nproc; $P --version; g++ --version | head -1; nvcc --version 2>/dev/null | tail -2
  $P -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
  echo "checkout: $(git log -1 --format="%H %s" 2>/dev/null)"
} > "$W/machine.txt" 2>&1
$P -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE2" .whl/*.whl \
  >> "$W/driver.log" 2>&1 || log "FLA wheels did not install into $SITE2"

# 1. the speed suite, its fault suite limited to scenarios 1-20
FIRST="healthy no-compiler no-compiler-warm-cache no-file-warm-cache no-file python-h-hidden cuda-visible-devices-empty
ptxas-not-executable fla-no-compiler libcuda-stub-first cuda-visible-devices-out-of-range cuda-visible-devices-unknown-uuid
triton-cache-dir-is-a-file stray-triton-package docker-default-shm cc-names-nothing nccl-socket-ifname-names-nothing
alloc-conf-invalid triton-libcuda-path-without-libcuda cuda-visible-devices-duplicate"
ONLY=$(for s in $FIRST; do printf -- '--only %s ' "$s"; done)
sed -e "s|^cd \"\$(dirname \"\$0\")/../..\"|cd \"$REPO\"|" \
    -e "s|scenarios/gpu/suite.py --python \"\$PY\" --out \"\$OUT/faults\"|scenarios/gpu/suite.py --python \"\$PY\" --out \"\$OUT/faults\" $ONLY|" \
    scenarios/gpu/speed_suite.sh > "$W/speed_suite_first20.sh"
diff scenarios/gpu/speed_suite.sh "$W/speed_suite_first20.sh" >> "$W/driver.log"
log "speed suite starts"
( OUT=$W/speed bash "$W/speed_suite_first20.sh" > "$W/speed.log" 2>&1; echo "rc=$?" >> "$W/speed.log" ) &
PS=$!

# wait for the bench (it must run alone)
while ! grep -q "deep runs and fault suite" "$W/speed/summary.txt" 2>/dev/null; do
  kill -0 $PS 2>/dev/null || break
  [ "$(el)" -gt 260 ] && break
  sleep 2
done
log "bench done; docs and tail faults start"

# 2. docs
( bash "$SELF/docs.sh" > "$W/docs.txt" 2>&1 ) &
PD=$!
# 3. the tail of the fault suite
TAIL="triton-cache-noexec triton-cache-read-only nvidia-uvm-node-missing nvidiactl-node-missing gpu-node-missing
only-gpu-node-passed device-nodes-not-openable ld-preload-missing libcuda-not-elf-first older-nvjitlink-on-library-path
older-nvjitlink-preloaded older-nvjitlink-preloaded-cu12 dataloader-docker-shm driver-gone-nodes-left address-space-limit
open-files-limit open-files-limit-cuda home-read-only-default-cache tmp-read-only tmp-full"
TONLY=$(for s in $TAIL; do printf -- '--only %s ' "$s"; done)
( timeout $(( DEADLINE - 40 - $(el) )) env PYTHONPATH="$REPO/src:$SITE2" $P scenarios/gpu/suite.py --python "$T" \
    --out "$W/faults-tail" --timeout 200 $TONLY > "$W/faults-tail.txt" 2>&1; echo "rc=$?" >> "$W/faults-tail.txt" ) &
PT=$!

alive() { for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while alive $PS $PD $PT && [ "$(el)" -lt "$DEADLINE" ]; do sleep 2; done
log "speed/docs/tail done or deadline"

# the GPU memory holder, alone, if there is time
if ! alive $PS $PD $PT && [ "$(el)" -lt $(( DEADLINE - 60 )) ]; then
  log "gpu-memory-held-by-another-process starts"
  timeout $(( DEADLINE - 10 - $(el) )) env PYTHONPATH="$REPO/src:$SITE2" $P scenarios/gpu/suite.py --python "$T" \
    --out "$W/faults-mem" --timeout 120 --only gpu-memory-held-by-another-process > "$W/faults-mem.txt" 2>&1
  echo "rc=$?" >> "$W/faults-mem.txt"
else
  log "gpu-memory-held-by-another-process NOT run (no time, or something still running)"
fi

# tmp-full / tmp-read-only: what tmp25, tmp26 and chk27 ask of their reports
{
  for s in tmp-read-only tmp-full; do
    echo "=== $s"
    $P "$SELF/show.py" "$W/faults-tail/$s/report.json" triton.kernel_launch triton.build \
      toolchain.extension_build toolchain.temp_dir --facts=fresh.temp --facts=compiler_tmpdir
  done
  echo "=== stackpeel-cc-* left in /tmp: $(ls -d /tmp/stackpeel-cc-* 2>/dev/null | wc -l); stackpeel-* in /tmp: $(ls -d /tmp/stackpeel-* 2>/dev/null | wc -l)"
} > "$W/tmp-scenarios.txt" 2>&1

log "packing"
cp "$W/speed/summary.txt" "$OUT/summary.txt" 2>/dev/null
cat "$W/speed/faults.txt" "$W/faults-tail.txt" "$W/faults-mem.txt" > "$OUT/faults.txt" 2>/dev/null
cat "$W/docs.txt" "$W/tmp-scenarios.txt" > "$OUT/docs.txt" 2>/dev/null
cat "$W/machine.txt" "$W/speed/env.txt" "$W/driver.log" > "$OUT/machine.txt" 2>/dev/null
cp "$W/speed/bench.txt" "$OUT/bench.txt" 2>/dev/null
(cd /tmp && find g28 -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' -o -name '*.err' -o -name '*.rc' \
   -o -name '*.stderr' -o -name '*.sh' \) -size -20M | tar czf "$OUT/all.tgz" -T -)
log "done"
cp "$W/driver.log" "$OUT/driver.log"
