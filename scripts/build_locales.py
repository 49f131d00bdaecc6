#!/usr/bin/env python3
"""Build src/stackpeel/knowledge/locales.json: what the C library, bash, gcc, binutils and make
print in other languages, for the messages explain's signatures are written in English for.

A log from a machine whose LANG is zh_CN.UTF-8 (or de_DE, ja_JP, ru_RU, ...) holds
``libcudart.so.11.0: 无法打开共享对象文件: 没有那个文件或目录`` where a signature expects
``cannot open shared object file: No such file or directory``; ``bash: nvcc: 未找到命令`` where
one expects ``command not found``; ``段错误 (核心已转储)`` for ``Segmentation fault (core
dumped)``. The translations are not written by hand: they are read from the message catalogues
(``.mo``) the distribution ships, the same files that produce those lines on users' machines.

Only the messages listed in :data:`MESSAGES` are taken (chosen for what the GPU stack prints:
the C library's error and signal descriptions and the dynamic loader's messages; bash's
"command not found", "core dumped" and exec errors; gcc's diagnostic kinds, "compilation
terminated." and the linker's exit status; ld's "cannot find"; make's "No rule to make target"
and "Error N"), in every language a catalogue has.

    python scripts/build_locales.py                 # download the packages, rewrite the file
    python scripts/build_locales.py --from DIR      # read .mo files under DIR (an unpacked tree)
    python scripts/build_locales.py --check         # exit 1 if the file is not current

Downloading needs ``apt-get download`` (Debian or Ubuntu) and network access to the archive.
"""

from __future__ import annotations

import argparse
import gettext
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "stackpeel" / "knowledge" / "locales.json"

#: Debian packages that ship the catalogues, and the catalogue (text domain) each holds
PACKAGES = {
    "libc-l10n": ("libc",),
    "bash": ("bash",),
    "gcc-12-locales": ("gcc-12",),
    "binutils-common": ("ld",),
    "make": ("make",),
}

_STRERROR = [
    "No such file or directory", "Permission denied", "Cannot allocate memory",
    "No space left on device", "Operation not permitted", "No such device",
    "No such device or address", "Input/output error", "Device or resource busy",
    "Invalid argument", "Too many open files", "Connection refused", "Connection timed out",
    "Connection reset by peer", "Network is unreachable", "No route to host",
    "Address already in use", "Cannot assign requested address",
    "Resource temporarily unavailable", "Read-only file system", "Exec format error",
    "Text file busy", "Bad address", "File exists", "Broken pipe", "Disk quota exceeded",
    "Function not implemented", "Operation not supported", "Name or service not known",
    "Temporary failure in name resolution", "No such process", "Is a directory",
    "Not a directory", "Argument list too long", "Too many levels of symbolic links",
    "File name too long", "Stale file handle", "Remote I/O error", "Protocol error",
]
_SIGNALS = [
    "Killed", "Segmentation fault", "Aborted", "Illegal instruction", "Bus error",
    "Floating point exception", "Terminated", "Hangup", "Trace/breakpoint trap",
]
_LOADER = [
    "error while loading shared libraries", "cannot open shared object file",
    "cannot allocate memory in static TLS block",
    "cannot enable executable stack as shared object requires", "cannot map zero-fill pages",
    "failed to map segment from shared object", "file too short", "invalid ELF header",
    "symbol lookup error", "wrong ELF class: ELFCLASS32", "wrong ELF class: ELFCLASS64",
    "cannot restore segment prot after reloc",
]

#: (text domain, msgid) of every message taken
MESSAGES: List[Tuple[str, str]] = [
    *(("libc", m) for m in _STRERROR + _SIGNALS + _LOADER),
    *(("bash", m) for m in [
        "%s: command not found", " (core dumped)", "Killed", "Segmentation fault", "Aborted",
        "Illegal instruction", "Bus error", "Floating point exception", "Terminated",
        "%s: %s: bad interpreter", "%s: cannot execute binary file",
        "%s: cannot execute binary file: %s", "%s: cannot execute: %s",
        "%s: cannot execute: required file not found",
    ]),
    *(("gcc-12", m) for m in [
        "fatal error: ", "error: ", "warning: ", "compilation terminated.\n",
        "ld returned %d exit status", "%s returned %d exit status", "no input files",
        "cannot execute %qs: %s",
    ]),
    *(("ld", m) for m in ["%P: cannot find %s\n", "%P: cannot find %s (%s): %E\n"]),
    *(("make", m) for m in [
        "%sNo rule to make target '%s'%s", "%sNo rule to make target '%s', needed by '%s'%s",
        "%s[%s: %s] Error %d%s", "*** Waiting for unfinished jobs....",
    ]),
]


def _catalogues(tree: Path) -> Dict[Tuple[str, str], Dict[str, str]]:
    """(domain, language) -> {msgid: msgstr} of every catalogue under ``tree``."""
    out: Dict[Tuple[str, str], Dict[str, str]] = {}
    domains = {d for ds in PACKAGES.values() for d in ds}
    for mo in sorted(tree.rglob("*.mo")):
        if mo.parent.name != "LC_MESSAGES" or mo.stem not in domains:
            continue
        lang = mo.parent.parent.name
        if lang.startswith("en"):  # en@quot, en_GB: English already
            continue
        with mo.open("rb") as fh:
            cat = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]
        out[(mo.stem, lang)] = {k: v for k, v in cat.items() if isinstance(k, str) and k}
    return out


def content(tree: Path, versions: Dict[str, str]) -> str:
    cats = _catalogues(tree)
    messages = []
    for domain, msgid in MESSAGES:
        tr = {}
        for (dom, lang), cat in sorted(cats.items()):
            if dom == domain and cat.get(msgid) and cat[msgid] != msgid:
                tr[lang] = cat[msgid]
        messages.append({"domain": domain, "msgid": msgid, "tr": tr})
    doc = {
        "about": "Translations of messages the C library, bash, gcc, binutils and make print, "
                 "read from the distribution's message catalogues by scripts/build_locales.py; "
                 "explain reads a localized line in English (stackpeel.explain.translate).",
        "packages": versions,
        "messages": messages,
    }
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def download(dest: Path) -> Dict[str, str]:
    """Download and unpack :data:`PACKAGES` into ``dest``; their versions."""
    versions = {}
    debs = dest / "debs"
    debs.mkdir()
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True, capture_output=True)
    tree = dest / "tree"
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
        name, version = deb.name.split("_")[:2]
        versions[name] = version.replace("%3a", ":")
    return versions


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="tree", type=Path, help="an unpacked tree holding the .mo files")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.tree:
            tree, versions = args.tree, json.loads(OUT.read_text(encoding="utf-8"))["packages"]
        else:
            versions = download(Path(tmp))
            tree = Path(tmp) / "tree"
        text = content(tree, versions)
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is not current: run scripts/build_locales.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    n = sum(len(m["tr"]) for m in json.loads(text)["messages"])
    print(f"wrote {OUT.relative_to(ROOT)}: {len(MESSAGES)} messages, {n} translations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
