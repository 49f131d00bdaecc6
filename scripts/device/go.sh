#!/usr/bin/env bash
# One device call, from the sent checkout's root (stage.sh staged the folder this file lies in):
#   [PART=VT] [DEADLINE=540] [ABROUNDS=4] [LFROUNDS=2] [SPLIT=4] [SUITESRC=B] bash <STAGE>/go.sh 2>&1
# unpacks B's src, turns the nvJitLink piece into the wheel the fault suite reads, then runs run.sh (PART) and
# packs the A/B's raw reports under $OUT (at most eight files come back: run.sh's parts stay within seven).
set -u
S=$(dirname "$0")
mkdir -p .whl && cp "$S"/*.whl .whl/
rm -rf "$S/B" && mkdir -p "$S/B"
if [ -f "$S/srcB.deleted" ]; then  # B = A's paths with B's changed files laid over them
  cp -a --parents src scenarios bench/explain_accuracy.py scripts/corpus_split.py "$S/B/"
  find "$S/B" -name __pycache__ -prune -exec rm -rf {} +
  while read -r f; do [ -n "$f" ] && rm -f "$S/B/$f"; done < "$S/srcB.deleted"
fi
tar xzf "$S/srcB.tgz" -C "$S/B" && ln -sfn "$PWD/.whl" "$S/B/.whl"
export STAGE_TXT=$S/stage.txt NVJ_PARTS=$S/nvj NEWSRC=$S/B/src BROOT=$S/B PART=${PART:-VT} ABROUNDS=${ABROUNDS:-4}
export SPLIT=${SPLIT:-4} DEADLINE=${DEADLINE:-540} SUITESRC=${SUITESRC:-B} PYTHONUNBUFFERED=1
W=${W:-/tmp/stackpeel-device}; export W
echo "go: PART=$PART ABROUNDS=$ABROUNDS SPLIT=$SPLIT DEADLINE=$DEADLINE SUITESRC=$SUITESRC NEWSRC=$NEWSRC"
cat "$S/stage.txt" 2>/dev/null
bash "$S/run.sh"
case $PART in VT|AB) (cd "$W" && tar czf "$OUT/$PART-ab.tgz" ab-*.json abloop* collect_env1.txt 2>/dev/null);; esac
ls -la "$OUT"
