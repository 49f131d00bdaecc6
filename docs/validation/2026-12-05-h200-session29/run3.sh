#!/usr/bin/env bash
# gpu29, device call 3 (repo root; carry .whl .chk29 .gpu29): the bench again (like-for-like figures),
# chk29's GPU items 1-4 (its branch in .chk29), gpu29's test fixes (its branch in .gpu29) against the
# device's torch, and scripts/expect-open-files (gpu29's) on a full check under ulimit -n 48.
set -u
START=$(date +%s); el() { echo $(( $(date +%s) - START )); }
T=/opt/torch/.venv/bin/python3; P=python3; REPO=$PWD
C=/tmp/c29o; mkdir -p $C; W=/tmp/g29w; mkdir -p $W; SITE=/tmp/site
S3=$OUT/summary3.txt
# the branches as trees: main's files with each branch's changed files laid over them
for b in chk29 gpu29; do mkdir -p /tmp/${b}tree; cp -r src tests scenarios scripts pyproject.toml /tmp/${b}tree/; cp -r .$b/. /tmp/${b}tree/; done
rm -f /tmp/gpu29tree/run3.sh
log() { echo "[$(el)s] $*" >> $S3; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; $T -c "import torch, triton; print(torch.__version__, triton.__version__)"; } >> $S3 2>&1
$T -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $SITE .whl/*.whl >> $W/pip.log 2>&1
log "bench starts (main's src)"
timeout 200 env PYTHONPATH="$REPO/src:$SITE" $T bench/check_bench.py --python $T --rounds 5 --deep-rounds 0 --alone-rounds 3 \
  --label "lent GPU machine" > $OUT/bench3.txt 2> $W/bench.stderr; log "bench rc=$?"
grep -E "^(ratio|speed-up|slowest|critical)" $OUT/bench3.txt >> $S3
# chk29 item 1
S=/tmp/chk29tree/src
PYTHONPATH=$S $P -m stackpeel check --fresh --format json --no-plugins --python $T \
  --only torch.cuda --only config.known_combinations > $C/chk29-arch.json
$P -c "
import json; d=json.load(open('$C/chk29-arch.json'))
t=[r for r in d['results'] if r['id']=='torch.cuda'][0]; k=[r for r in d['results'] if r['id']=='config.known_combinations'][0]
print('torch.cuda', t['status'], t['facts'].get('version'), t['facts'].get('arch_list'), [f['code'] for f in t['findings']])
print('known', k['facts'].get('versions',{}).get('machine'), k['facts'].get('matched'))" > $C/chk29-arch.txt 2>&1
log "chk29 item 1 done"
# chk29 item 2
unshare -m true && echo "unshare ok" >> $S3 || echo "unshare -m FAILS: items 2 and 3 skipped by chk29's rule" >> $S3
M=/tmp/c29/mnt; mkdir -p $M
for fault in full noinodes ro; do
  case $fault in
    full) SET="mount -t tmpfs -o size=1m none $M && mkdir $M/cache && { dd if=/dev/zero of=$M/fill bs=4k count=1000 2>/dev/null; true; }";;
    noinodes) SET="mount -t tmpfs -o size=64m,nr_inodes=4 none $M && mkdir $M/cache && touch $M/a $M/b";;
    ro) SET="mkdir -p $M/cache && mount --bind $M $M && mount -o remount,bind,ro $M";;
  esac
  TRITON_CACHE_DIR=$M/cache unshare -m sh -c "$SET && exec \"\$@\"" sh $T /tmp/chk29tree/scenarios/gpu/user_kernel.py > $C/chk29-kernel-$fault.log 2>&1
  PYTHONPATH=$S $P -m stackpeel explain --format json $C/chk29-kernel-$fault.log > $C/chk29-explain-$fault.json
  TRITON_CACHE_DIR=$M/cache PYTHONPATH=$S unshare -m sh -c "$SET && exec \"\$@\"" sh $P -m stackpeel check --fresh \
    --format json --no-plugins --python $T --only toolchain.triton_cache > $C/chk29-check-$fault.json
  $P -c "
import json,sys; e=json.load(open(sys.argv[1])); c=json.load(open(sys.argv[2]))
r=[x for x in c['results'] if x['id']=='toolchain.triton_cache'][0]
print(sys.argv[3], 'explain', [x['code'] for x in e['candidates'][:3]], 'check', r['status'], [f['code'] for f in r['findings']],
      'roots', [(b['check'], b['codes']) for b in c['diagnosis']['blocking']])" \
    $C/chk29-explain-$fault.json $C/chk29-check-$fault.json $fault >> $C/chk29-cache.txt 2>&1
  tail -3 $C/chk29-kernel-$fault.log >> $C/chk29-cache.txt
done
log "chk29 item 2 done"
# chk29 item 3
bash -c "ulimit -Sf 1024; PYTHONPATH=$S exec $P -m stackpeel check --fresh --format json --no-plugins --python $T --out $C/chk29-fsize1024.json"; echo rc=$? > $C/chk29-fsize.txt
bash -c "ulimit -Sf 64; PYTHONPATH=$S exec $P -m stackpeel check --fresh --format json --no-plugins --python $T --out $C/chk29-fsize64.json" 2>> $C/chk29-fsize.txt; echo rc=$? >> $C/chk29-fsize.txt
for f in 1024 64; do $P -c "
import json,os,sys; p=sys.argv[1]; d=json.load(open(p))
fs=[r for r in d['results'] if r['id']=='system.file_size_limit'][0]
print(os.path.basename(p), os.path.getsize(p), 'bytes; target.fsize', d['target']['fsize'], 'measured', fs['facts'].get('soft'),
      'errors', [r['id'] for r in d['results'] if r['status']=='error'], 'roots', [b['check'] for b in d['diagnosis']['blocking']])" \
  $C/chk29-fsize$f.json >> $C/chk29-fsize.txt 2>&1; done
log "chk29 item 3 done"
# gpu29: expect-open-files under ulimit -n 48 (main's src, gpu29's script)
bash -c "ulimit -n 48; timeout 200 env PYTHONPATH=$REPO/src:$SITE $P -m stackpeel check --fresh --format json --python $T" > $W/ofl-n48.json 2> $W/ofl-n48.err
echo "== expect-open-files 48 (gpu29's script, main's check)" >> $S3
$P /tmp/gpu29tree/scripts/expect-open-files 48 $W/ofl-n48.json >> $S3 2>&1; echo "rc=$?" >> $S3
$P -c "
import json; d=json.load(open('$W/ofl-n48.json')); t=[r for r in d['results'] if r['id']=='torch.cuda'][0]; print('torch.cuda at 48:', t['status'], t['summary'][:120])" >> $S3 2>&1
# item 4 and gpu29's tests, side by side
( cd /tmp/chk29tree && STACKPEEL_STACK_PYTHON=$T PYTHONPATH=src timeout 240 $P -m pytest -q -p no:cacheprovider \
  tests/test_combinations.py tests/test_cache_write_refused.py tests/test_file_size_limit.py \
  tests/test_runner_nofile.py tests/test_toolchain.py > $C/chk29-tests.txt 2>&1; echo "rc=$?" >> $C/chk29-tests.txt ) &
( cd /tmp/gpu29tree && STACKPEEL_STACK_PYTHON=$T PYTHONPATH=src timeout 240 $P -m pytest -q -p no:cacheprovider -rs \
  tests/test_cxx_compiler.py tests/test_combinations.py tests/test_expect_open_files.py > $OUT/tests3-gpu29.txt 2>&1; echo "rc=$?" >> $OUT/tests3-gpu29.txt ) &
wait
log "tests done"
for f in chk29-arch.txt chk29-cache.txt chk29-fsize.txt; do echo "== $f" >> $S3; cat $C/$f >> $S3; done
echo "== chk29-tests (tail)" >> $S3; tail -15 $C/chk29-tests.txt >> $S3
echo "== gpu29 tests (tail)" >> $S3; tail -8 $OUT/tests3-gpu29.txt >> $S3
cp $C/chk29-tests.txt $OUT/
cp $W/ofl-n48.json $C/; (cd /tmp && tar czf $OUT/chk29-all.tgz c29o)
log "done"
