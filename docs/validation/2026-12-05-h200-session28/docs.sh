#!/usr/bin/env bash
# gpu28: the commands sessions 25-27 listed for a GPU run (tmp25, fd25, tmp26, combo26, chk27), one after
# another except the open-files runs (independent processes, run together). Needs REPO, P, T, SITE2, D, START.
set -u
cd "$REPO"
SPENV="PYTHONPATH=$REPO/src:$SITE2"
SHOW="$P $SELF/show.py"
sec() { echo; echo "=== [$(( $(date +%s) - START ))s] $*"; }

sec "chk27.1 toolchain.cxx_compiler (healthy run)"
g++ --version | head -1; c++ --version | head -1
timeout 90 env $SPENV $P -m stackpeel check --fresh --format json --python "$T" --only toolchain.cxx_compiler \
  > "$D/cxx.json" 2> "$D/cxx.err"; echo "rc=$?"
$SHOW "$D/cxx.json" toolchain.cxx_compiler config.compiler_environment

sec "chk27.1 pytest tests/test_cxx_compiler.py (STACKPEEL_STACK_PYTHON = the image's torch venv)"
STACKPEEL_STACK_PYTHON="$T" PYTHONPATH="$REPO/src" timeout 150 $P -m pytest -q -p no:cacheprovider -rs \
  tests/test_cxx_compiler.py 2>&1 | tail -25

sec "chk27.2 ulimit -Sn 5, --only multi_gpu.open_files"
bash -c "ulimit -Sn 5; timeout 90 env $SPENV $P -m stackpeel check --fresh --format json --python $T --only multi_gpu.open_files" \
  > "$D/ofl5.json" 2> "$D/ofl5.err"; echo "rc=$?"
$SHOW "$D/ofl5.json" multi_gpu.open_files --facts=soft --facts=hard
tail -5 "$D/ofl5.err"

sec "fd25 / tmp26.3: full check under ulimit -n 20, 36, 48 and -Sn 20 (run together)"
for n in 20 36 48; do
  ( bash -c "ulimit -n $n; timeout 200 env $SPENV $P -m stackpeel check --fresh --format json --python $T" \
      > "$D/ofl-n$n.json" 2> "$D/ofl-n$n.err"; echo "rc=$?" > "$D/ofl-n$n.rc" ) &
done
( bash -c "ulimit -Sn 20; timeout 200 env $SPENV $P -m stackpeel check --fresh --format json --python $T" \
    > "$D/ofl-s20.json" 2> "$D/ofl-s20.err"; echo "rc=$?" > "$D/ofl-s20.rc" ) &
wait
for n in 20 36 48; do
  echo "--- n=$n $(cat "$D/ofl-n$n.rc")"
  $P scripts/expect-open-files $n "$D/ofl-n$n.json"
  $SHOW "$D/ofl-n$n.json" toolchain.extension_build triton.build multi_gpu.open_files torch.cuda \
    --facts=start --facts=soft --facts=hard | grep -v '^  report'
done
echo "--- soft 20 $(cat "$D/ofl-s20.rc")"
$P scripts/expect-open-files 20 "$D/ofl-s20.json" --soft-only
nvidia-smi --query-gpu=index,compute_mode --format=csv

sec "tmp26.2: a healthy run in a private, empty /tmp leaves no compiler file and no stackpeel folder"
V=/var/g28tmp26; mkdir -p $V   # $D lies under /tmp, which the private tmpfs hides
unshare -m bash -c "mount -t tmpfs -o size=2g tmpfs /tmp && echo cc-before=\$(ls -A /tmp | grep -c '^cc'); \
  timeout 150 env $SPENV $P -m stackpeel check --fresh --format json --python $T > $V/tmp26-ok.json 2> $V/tmp26-ok.err; \
  echo rc=\$?; echo cc-after=\$(ls -A /tmp | grep -c '^cc'); echo stackpeel-folders=\$(ls -d /tmp/stackpeel-* 2>/dev/null | wc -l); \
  echo left in /tmp: \$(ls -A /tmp)"
cp $V/tmp26-ok.json $V/tmp26-ok.err "$D/"
$SHOW "$D/tmp26-ok.json" triton.kernel_launch toolchain.extension_build triton.build --facts=fresh.temp --facts=compiler_tmpdir

sec "tmp25 (optional): stackpeel's scratch peak, default check, TMPDIR a fresh 4 GiB tmpfs"
unshare -m sh -c "mount -t tmpfs -o size=4g tmpfs /mnt && env $SPENV timeout 150 $P scripts/tmp_peak.py /mnt -- \
  $P -m stackpeel check --python $T --fresh --format json -o /dev/null" 2>&1 | tail -15

sec "combo26.2: --only config.known_combinations,triton.import"
timeout 90 env $SPENV $P -m stackpeel check --fresh --python "$T" --only config.known_combinations,triton.import \
  --format json > "$D/combo-2.json" 2> "$D/combo-2.err"; echo "rc=$?"
$SHOW "$D/combo-2.json" config.known_combinations triton.import --facts=table_version

sec "combo26.3: a torch 2.14.0 dist-info (triton~=3.8.0) first on PYTHONPATH, --only triton.import"
d=$(mktemp -d); mkdir "$d/torch-2.14.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.14.0\nRequires-Dist: triton~=3.8.0; platform_system == "Linux"\n' \
  > "$d/torch-2.14.0.dist-info/METADATA"
timeout 90 env PYTHONPATH="$d:$REPO/src:$SITE2" $P -m stackpeel check --fresh --python "$T" --only triton.import \
  --format json > "$D/combo-3.json" 2> "$D/combo-3.err"; echo "rc=$?"
$SHOW "$D/combo-3.json" triton.import
rm -rf "$d"

sec "combo26.4: an sgl-kernel 0.3.21 dist-info first on PYTHONPATH, --only config.known_combinations"
d=$(mktemp -d); mkdir "$d/sgl_kernel-0.3.21.dist-info"
printf 'Metadata-Version: 2.1\nName: sgl-kernel\nVersion: 0.3.21\n' > "$d/sgl_kernel-0.3.21.dist-info/METADATA"
timeout 90 env PYTHONPATH="$d:$REPO/src:$SITE2" $P -m stackpeel check --fresh --python "$T" \
  --only config.known_combinations --format json > "$D/combo-4.json" 2> "$D/combo-4.err"; echo "rc=$?"
$SHOW "$D/combo-4.json" config.known_combinations
rm -rf "$d"

sec "combo26.1: scenarios/gpu/known_combinations.py (FLA's backward on the H200)"
timeout 240 env PYTHONPATH="$REPO/src:$SITE2" $P scenarios/gpu/known_combinations.py --python "$T" 2>&1 | tail -20
echo "rc=${PIPESTATUS[0]}"
sec "docs done"
