# gpu37 (from gpu36b): one device call, from the checkout's root (stage.sh staged .whl-g37): the wheels and the branch's src, then run1.sh
set -u
S=.whl-g37
mkdir -p .whl && cp $S/*.whl .whl/
rm -rf $S/B && mkdir -p $S/B && tar xzf $S/srcB.tgz -C $S/B
export NVJ_PARTS=$S/nvj NEWSRC=$S/B/src PART=${PART:-VT} ABROUNDS=${ABROUNDS:-4} SPLIT4=${SPLIT4-1}
export DEADLINE=${DEADLINE:-540} SUITESRC=${SUITESRC:-B} PYTHONUNBUFFERED=1
W=${W:-/tmp/g37}; export W
echo "go: PART=$PART ABROUNDS=$ABROUNDS SPLIT4=$SPLIT4 DEADLINE=$DEADLINE NEWSRC=$NEWSRC; B's scheduler: $(grep -c start_first $NEWSRC/stackpeel/runner/scheduler.py) start_first, A's: $(grep -c start_first src/stackpeel/runner/scheduler.py)"
bash $S/run1.sh
(cd "$W" && tar czf "$OUT/$PART-ab.tgz" ab-*.json abloop* collect_env1.txt 2>/dev/null)
ls -la "$OUT"
