#!/usr/bin/env bash
# "Nothing outlives stackpeel" when stackpeel itself is killed outright, on a GPU machine.
# A `stackpeel check --deep` (real Triton compiles and launches, torch preloaded in the zygote)
# is killed with SIGKILL part-way through, at several moments. SIGKILL gives it no moment to
# clean up: this prints what it left (processes, folders in its private TMPDIR), then runs one
# more `stackpeel check --only system.platform` with the same TMPDIR and prints what is left
# after it: the folders of the killed run must be gone, and no probe process may remain.
# Usage (repository root): PY=/path/to/python3 bash scenarios/gpu/sigkill_sweep.sh
set -u
cd "$(dirname "$0")/../.."
PY=${PY:-$(command -v python3)}
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
fail=0
for delay in 1 2 4 7; do
  T=$(mktemp -d /tmp/sweep-XXXXXX)
  MARK=sweep-$delay-$$
  STACKPEEL_TEST_MARK=$MARK TMPDIR=$T setsid "$PY" -m stackpeel check --python "$PY" --deep --fresh \
    >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -KILL -- -"$pid" 2>/dev/null || kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  # the probes' parent-death signal and the zygotes' parent check take effect within 2 s
  # (the bound of tests/test_hygiene.py); a zombie waiting for its new parent is no process
  live() {
    for f in $(grep -l "STACKPEEL_TEST_MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null); do
      st=$(sed 's/.*) //' "${f%/environ}/stat" 2>/dev/null | cut -d' ' -f1)
      [ -n "$st" ] && [ "$st" != Z ] && echo "${f%/environ}"
    done
  }
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(live)" ] && break; sleep 0.2; done
  left_procs=0
  for d in $(live); do
    left_procs=$((left_procs + 1))
    echo "  left running: $(tr '\0' ' ' < "$d/cmdline" | cut -c1-160) (state $(sed 's/.*) //' "$d/stat" | cut -d' ' -f1))"
  done
  left_dirs=$(ls -A "$T" | tr '\n' ' ')
  TMPDIR=$T "$PY" -m stackpeel check --python "$PY" --only system.platform >/dev/null 2>&1
  after=$(ls -A "$T" | tr '\n' ' ')
  verdict=PASS
  if [ -n "$after" ] || [ "$left_procs" != 0 ]; then verdict=FAIL; fail=1; fi
  echo "$verdict killed after ${delay}s: probes left running: $left_procs; folders left: [${left_dirs}]; after the next run: [${after}]"
  rm -rf "$T"
done
# `stackpeel run` keeps the monitor's bootstrap and records in a folder while a real CUDA program
# runs: SIGKILL stackpeel (the program goes on in its own group, then is ended here), and the
# next stackpeel must remove that folder
T=$(mktemp -d /tmp/sweep-XXXXXX)
TMPDIR=$T setsid "$PY" -m stackpeel run -- "$PY" -c \
  "import time, torch; torch.zeros(1, device='cuda').sum().item(); time.sleep(300)" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do pgrep -f "time.sleep\(300\)" | grep -vx "$pid" >/dev/null && break; sleep 0.2; done
sleep 3
kill -KILL "$pid"; wait "$pid" 2>/dev/null
left_dirs=$(ls -A "$T" | tr '\n' ' ')
pkill -KILL -f "time.sleep\(300\)"
sleep 0.5
TMPDIR=$T "$PY" -m stackpeel check --python "$PY" --only system.platform >/dev/null 2>&1
after=$(ls -A "$T" | tr '\n' ' ')
verdict=PASS
case "$left_dirs" in *stackpeel-run-*) ;; *) verdict=FAIL;; esac
[ -n "$after" ] && verdict=FAIL
[ "$verdict" = FAIL ] && fail=1
echo "$verdict stackpeel run killed while a CUDA program ran: folders left: [${left_dirs}]; after the next run: [${after}]"
rm -rf "$T"
exit $fail
