"""Probe of the example plugin: runs in a child of the *diagnosed* interpreter.

Standard library only, Python 3.8+. Returns a dict of observed facts (JSON-serialisable);
raising, crashing or hanging is reported by stackpeel as this check's ``error``.
"""

import re
import subprocess


def compiler_version(inp):
    """``inp``: {"deps": {required check id: its facts}, "options": probe_options, "timeout_s", ...}."""
    minimum = inp.get("options", {}).get("minimum")
    compiler = (inp.get("deps", {}).get("toolchain.c_compiler") or {}).get("compiler")
    facts = {"compiler": compiler, "minimum": minimum, "version": None, "major": None, "is_gcc": False,
             "error": None}
    if not compiler:
        return facts
    try:
        out = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=max(1.0, float(inp.get("timeout_s", 20)) / 2))
    except (OSError, subprocess.SubprocessError) as exc:
        facts["error"] = "%s: %s" % (type(exc).__name__, exc)
        return facts
    first = (out.stdout or "").strip().splitlines()[:1]
    facts["version_line"] = first[0] if first else ""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", facts["version_line"])
    if out.returncode != 0 or not m:
        facts["error"] = "exit status %d: %s" % (out.returncode, (out.stdout or "")[-500:])
        return facts
    facts["version"] = m.group(0)
    facts["major"] = int(m.group(1))
    facts["is_gcc"] = "clang" not in facts["version_line"].lower()
    return facts
