#!/usr/bin/env python3
"""Build src/stackpeel/knowledge/exemplars.json from the TRAINING part of the explain corpus.

Each training log contributes the words of its error lines (``stackpeel.explain.similar.material``
of the parsed log body, never its header), its first expected code and its thread. Validation
logs are never read: the split (scripts/corpus_split.py) decides, by repository.

    python scripts/build_exemplars.py            # rewrite the file
    python scripts/build_exemplars.py --check    # exit 1 if the file is not current

A log whose header says ``# exemplar: no, <why>`` is left out (its lines show only what many causes
print, and its thread found the cause elsewhere).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus_split  # noqa: E402
from stackpeel.explain import similar  # noqa: E402
from stackpeel.explain.parser import scan_text  # noqa: E402
from stackpeel.knowledge import all_codes, load  # noqa: E402


def content() -> str:
    split = corpus_split.compute_split()
    kb = load()
    alias = dict(getattr(kb, "aliases", {}))
    codes = all_codes()
    rows = []
    for h in split.training:
        expected = [alias.get(c, c) for c in h.expected]
        if not expected or expected[0] not in codes or not h.meta.get("source"):
            continue  # a proposed code (no entry yet) teaches nothing a user can act on
        if h.meta.get("exemplar", "").lower().startswith("no"):
            # `# exemplar: no, <why>`: the log's lines hold only a line that many causes print (a bare
            # EIO) and its thread found the cause elsewhere: resembling it would name that cause for
            # every such line (session 36: pytorch-10577's 'Input/output error' read as disk-full)
            continue
        rows.append((expected[0], h.meta["source"], similar.material(scan_text(corpus_split.read_body(h.path)))))
    data = similar.build(rows)
    rows_text = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in data.pop("exemplars"))
    head = json.dumps(data, ensure_ascii=False, indent=1)[:-2]  # one exemplar a line: small diffs
    return f'{head},\n "exemplars": [\n{rows_text}\n]}}\n'


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file is not current")
    args = ap.parse_args(argv)
    new = content()
    if args.check:
        old = similar.EXEMPLARS_FILE.read_text(encoding="utf-8") if similar.EXEMPLARS_FILE.exists() else ""
        if old != new:
            print(f"{similar.EXEMPLARS_FILE.name} is not current: run scripts/build_exemplars.py", file=sys.stderr)
            return 1
        return 0
    similar.EXEMPLARS_FILE.write_text(new, encoding="utf-8")
    print(f"wrote {similar.EXEMPLARS_FILE.relative_to(ROOT)} ({len(json.loads(new)['exemplars'])} exemplars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
