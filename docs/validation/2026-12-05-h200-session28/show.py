"""Print what the GPU-run docs ask about one stackpeel JSON report (gpu28).

    python3 show.py REPORT.json [CHECK_ID ...] [--facts KEY.PATH ...]
"""
import json
import sys


def dig(d, path):
    for k in path.split("."):
        if not isinstance(d, dict):
            return "<not a dict>"
        d = d.get(k, "<absent>")
    return d


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    path, rest = argv[0], argv[1:]
    ids = [a for a in rest if not a.startswith("--") and "=" not in a]
    facts = [a.split("=", 1)[1] for a in rest if a.startswith("--facts=")]
    try:
        r = json.load(open(path))
    except Exception as exc:  # noqa: BLE001
        print(f"  {path}: no report ({type(exc).__name__}: {exc})")
        return 1
    d = r["diagnosis"]
    print(f"  report {path.rsplit('/', 1)[-1]}: exit_code {d['exit_code']}, {r.get('duration_s')} s")
    for x in d["blocking"]:
        print(f"    BLOCKING {x['check']} {x['codes']} symptoms={[s['check'] for s in x['symptoms']]}")
    for x in d["degraded"]:
        print(f"    degraded {x['check']} {x['codes']}")
    print(f"    errors {d['errors']}")
    by_id = {x["id"]: x for x in r["results"]}
    for cid in ids:
        x = by_id.get(cid)
        if x is None:
            print(f"    {cid}: absent")
            continue
        print(f"    {cid}: {x['status']} ({x['duration_s']} s) {x['summary'][:400]}")
        for f in x["findings"]:
            print(f"      {f['code']} [{f['severity']}] {f['message'][:500]}")
            if f.get("evidence"):
                print(f"        evidence: {f['evidence'][:500]!r}")
            if f.get("remedy"):
                print(f"        remedy: {json.dumps(f['remedy'])[:400]}")
        if x.get("failure"):
            print(f"      failure: {json.dumps(x['failure'])[:600]}")
        for key in facts:
            print(f"      facts.{key} = {json.dumps(dig(x.get('facts') or {}, key))[:600]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
