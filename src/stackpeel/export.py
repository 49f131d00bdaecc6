"""``stackpeel export``: write down what this stack needs from the system, as provisioning.

From a report (a fresh ``check``, or ``--from`` a saved one: works offline), the libraries
installed in the diagnosed environment (recorded facts: torch and its CUDA, Triton, FLA,
causal-conv1d) are matched against the knowledge base's ``needed_by`` lists: a code whose
packages provide a prerequisite names the libraries that need it and why (``no-c-compiler``:
Triton JIT-builds C helpers). Each need becomes the lines of the asked format, with a comment
saying which library needs it and why, whether or not it is missing today. Settings outside
packages (``/dev/shm`` size, memlock, GPU device nodes) come from the code's ``provision`` table.

Pure: :func:`needs` and :func:`render` read a report and the knowledge base; nothing runs.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import knowledge as _knowledge
from .model import ExitCode, Report
from .knowledge import render_prose
from .remedies import _fill

__all__ = ["FORMATS", "Need", "needs", "params_of", "render", "add_parser"]

FORMATS = ("dockerfile", "apt", "dnf", "apk", "conda", "requirements", "lxc", "cloud-init")

#: the system package manager each format's lines are written for (dockerfile/cloud-init: the report's)
_FORMAT_PM = {"apt": "apt", "dnf": "dnf", "apk": "apk"}
_INSTALL_LINE = {
    "apt": "apt-get install -y --no-install-recommends {packages}",
    "dnf": "dnf install -y {packages}",
    "yum": "yum install -y {packages}",
    "apk": "apk add --no-cache {packages}",
    "zypper": "zypper --non-interactive install {packages}",
    "pacman": "pacman -S --noconfirm --needed {packages}",
}
_REFRESH = {"apt": "apt-get update", "pacman": "pacman -Sy"}
#: the Python distributions a stack is made of, as recorded by the checks: (check id, name)
_LIBRARIES = (("torch.cuda", "torch"), ("triton.import", "triton"), ("kernels.fla", "flash-linear-attention"),
              ("kernels.causal_conv1d", "causal-conv1d"), ("kernels.transformers_fast_path", "transformers"))


@dataclass(frozen=True)
class Need:
    """One prerequisite: the code that names it, and the installed libraries that need it."""

    code: str
    title: str
    users: Tuple[Tuple[str, str, str], ...]  # (package, version, why)
    packages: Mapping[str, str]  # manager -> filled package list ("" when a value is unknown)
    provision: Mapping[str, Tuple[str, ...]]

    def comments(self) -> List[str]:
        return [f"{pkg}{' ' + ver if ver else ''}: {why}" for pkg, ver, why in self.users]


def installed(report: Report) -> Dict[str, str]:
    """Installed libraries of the diagnosed environment -> version ("" when unknown)."""
    out: Dict[str, str] = {}
    for cid, name in _LIBRARIES:
        r = report.result(cid)
        facts = r.facts if r else {}
        if cid == "kernels.transformers_fast_path":
            facts = facts.get("transformers") if isinstance(facts.get("transformers"), dict) else facts
            if not facts.get("installed") and not facts.get("transformers_version"):
                continue
            out[name] = str(facts.get("transformers_version") or facts.get("version") or "")
            continue
        if facts.get("installed"):
            out[name] = str(facts.get("version") or "")
    return out


def params_of(report: Report) -> Dict[str, Any]:
    """Values the knowledge base's package templates name, from the recorded facts."""
    from .checks.toolchain import header_params

    p: Dict[str, Any] = {"python": report.target.get("python")}
    h = report.result("toolchain.python_headers")
    if h and h.facts:
        p.update({k: v for k, v in header_params(h.facts).items() if v})
    if not p.get("py_mm"):
        v = str(report.target.get("version") or "").split(".")
        if len(v) >= 2:
            p["py_mm"], p["py_nodot"] = f"{v[0]}.{v[1]}", f"{v[0]}{v[1]}"
    t = report.result("torch.cuda")
    cuda = (t.facts.get("cuda") if t else None) or None
    if cuda:
        mm = ".".join(str(cuda).split(".")[:2])
        p.update(torch_cuda_mm=mm, torch_cuda_pkg=mm.replace(".", "-"), torch_cuda_major=mm.split(".")[0])
    return p


def needs(report: Report, kb: Optional[_knowledge.KnowledgeBase] = None) -> List[Need]:
    """Every knowledge-base prerequisite an installed library of ``report`` needs, in the
    knowledge base's order."""
    kb = kb or _knowledge.load()
    have = installed(report)
    params = params_of(report)
    cuda = bool(params.get("torch_cuda_mm"))
    out: List[Need] = []
    for code, spec in kb.codes.items():
        users = tuple((n["package"], have[n["package"]], render_prose(n["why"], params)) for n in spec.needed_by
                      if n["package"] in have and (n.get("when") != "cuda" or cuda))
        if not users:
            continue
        pkgs = {m: (_fill(t, params) or "") for m, t in spec.packages.items()}
        out.append(Need(code, spec.title, users, pkgs, dict(spec.provision)))
    return out


# ----------------------------------------------------------------------------- formats

def _header(report: Report, fmt: str, comment: str = "#") -> List[str]:
    have = installed(report)
    stack = ", ".join(f"{k} {v}".strip() for k, v in have.items()) or "no known GPU libraries"
    host = report.host or {}
    return [f"{comment} stackpeel export --format {fmt}: what this stack needs from the system",
            f"{comment} stack: {stack}",
            f"{comment} diagnosed: Python {report.target.get('version', '?')} on {host.get('distro_name') or '?'}"]


def _pkg_needs(ns: List[Need]) -> List[Need]:
    """The needs met by packages (the rest are settings: /dev/shm, memlock, device nodes)."""
    return [n for n in ns if n.packages]


def _system(need: Need, pm: str) -> Optional[str]:
    pkgs = need.packages.get(pm, "")
    return pkgs or None


def _missing_note(need: Need, pm: str) -> str:
    if pm not in need.packages:
        return f"{need.code}: {need.title}: no {pm} package provides it; see 'stackpeel codes {need.code}'"
    return (f"{need.code}: {need.title}: the {pm} package depends on a value not recorded; "
            f"see 'stackpeel codes {need.code}'")


def _script(report: Report, ns: List[Need], pm: str, fmt: str) -> str:
    lines = ["#!/bin/sh", *_header(report, fmt), "set -e"]
    if pm in _REFRESH:
        lines.append(_REFRESH[pm])
    for n in _pkg_needs(ns):
        pkgs = _system(n, pm)
        lines += [f"# {c}" for c in n.comments()]
        lines.append(_INSTALL_LINE[pm].format(packages=pkgs) if pkgs else f"# {_missing_note(n, pm)}")
    lines += _settings_comments(ns)
    return "\n".join(lines) + "\n"


def _settings_comments(ns: List[Need], key: str = "docker_run") -> List[str]:
    out = []
    for n in ns:
        for line in n.provision.get(key, ()):
            out += [f"# {c}" for c in n.comments()]
            out.append(f"#   container: {line}")
    return out


def _dockerfile(report: Report, ns: List[Need], pm: str) -> str:
    lines = _header(report, "dockerfile")
    lines.append("# RUN lines for an image of the same distribution; settings a Dockerfile cannot hold are at the end")
    if pm in _REFRESH:
        lines.append(f"RUN {_REFRESH[pm]}")
    for n in _pkg_needs(ns):
        pkgs = _system(n, pm)
        lines += [f"# {c}" for c in n.comments()]
        lines.append(f"RUN {_INSTALL_LINE[pm].format(packages=pkgs)}" if pkgs else f"# {_missing_note(n, pm)}")
    flags = [f for n in ns for f in n.provision.get("docker_run", ())]
    if flags:
        lines.append("# start containers of this image with (docker run options; Kubernetes: the same in the pod "
                     "spec):")
        for n in ns:
            for f in n.provision.get("docker_run", ()):
                lines.append(f"#   {f:<28} {'; '.join(n.comments())}")
        lines.append(f"#   docker run {' '.join(flags)} IMAGE")
    return "\n".join(lines) + "\n"


def _conda(report: Report, ns: List[Need]) -> str:
    channels: List[str] = []
    deps: List[str] = []
    for n in _pkg_needs(ns):
        spec = n.packages.get("conda", "")
        words = shlex.split(spec) if spec else []
        names = []
        i = 0
        while i < len(words):
            if words[i] in ("-c", "--channel") and i + 1 < len(words):
                if words[i + 1] not in channels:
                    channels.append(words[i + 1])
                i += 2
                continue
            names.append(words[i])
            i += 1
        deps += [f"  # {c}" for c in n.comments()]
        deps += [f"  - {x}" for x in names] if names else [f"  # {_missing_note(n, 'conda')}"]
    lines = _header(report, "conda") + ["# conda env update -f THIS_FILE", "channels:"]
    lines += [f"  - {c}" for c in channels or ["conda-forge"]] + ["dependencies:"] + deps
    lines += _settings_comments(ns)
    return "\n".join(lines) + "\n"


def _requirements(report: Report, ns: List[Need]) -> str:
    lines = _header(report, "requirements")
    lines.append("# the Python libraries as installed when diagnosed (pip install -r THIS_FILE)")
    for name, ver in installed(report).items():
        lines.append(f"{name}=={ver}" if ver else name)
    if ns:
        lines.append("# they also need from the system (not pip; stackpeel export --format apt|dnf|apk):")
        for n in _pkg_needs(ns):
            lines += [f"#   {n.code}: {c}" for c in n.comments()]
    return "\n".join(lines) + "\n"


def _lxc(report: Report, ns: List[Need], pm: str) -> str:
    lines = _header(report, "lxc") + ["# lines for the container's config (/var/lib/lxc/NAME/config), on the host"]
    for n in ns:
        if n.provision.get("lxc"):
            lines += [f"# {c}" for c in n.comments()]
            lines += list(n.provision["lxc"])
    pkgs = [p for n in ns for p in (_system(n, pm) or "").split() if p]
    if pkgs:
        lines.append(f"# inside the container: {_INSTALL_LINE[pm].format(packages=' '.join(dict.fromkeys(pkgs)))}")
    return "\n".join(lines) + "\n"


def _cloud_init(report: Report, ns: List[Need], pm: str) -> str:
    lines = ["#cloud-config", *_header(report, "cloud-init"), "package_update: true", "packages:"]
    for n in _pkg_needs(ns):
        pkgs = _system(n, pm)
        lines += [f"  # {c}" for c in n.comments()]
        lines += [f"  - {p}" for p in pkgs.split()] if pkgs else [f"  # {_missing_note(n, pm)}"]
    limits = [(n, line) for n in ns for line in n.provision.get("limits_conf", ())]
    if limits:
        lines += ["write_files:", "  - path: /etc/security/limits.d/90-stackpeel.conf", "    content: |"]
        for n, line in limits:
            lines += [f"      # {c}" for c in n.comments()] + [f"      {line}"]
    return "\n".join(lines) + "\n"


def render(report: Report, fmt: str, kb: Optional[_knowledge.KnowledgeBase] = None) -> str:
    ns = needs(report, kb)
    pm = _FORMAT_PM.get(fmt) or (report.host or {}).get("pkg_manager") or "apt"
    if pm not in _INSTALL_LINE:
        pm = "apt"
    if fmt in _FORMAT_PM:
        return _script(report, ns, pm, fmt)
    if fmt == "dockerfile":
        return _dockerfile(report, ns, pm)
    if fmt == "conda":
        return _conda(report, ns)
    if fmt == "requirements":
        return _requirements(report, ns)
    if fmt == "lxc":
        return _lxc(report, ns, pm)
    if fmt == "cloud-init":
        return _cloud_init(report, ns, pm)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write the system packages and settings this stack needs (Dockerfile, ...)",
                       description="Derive, from the libraries installed in the diagnosed environment, the system "
                                   "packages, settings and device access they need, as provisioning lines with a "
                                   "comment per line saying which library needs it and why. See docs/fix.md.")
    p.add_argument("--format", choices=FORMATS, default="dockerfile")
    p.add_argument("--python", metavar="PATH", help="interpreter to diagnose (default: as for check)")
    p.add_argument("--from", dest="from_report", metavar="REPORT.json",
                   help="read a saved JSON report instead of checking (works offline, on any machine)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("--timeout-scale", type=float, default=1.0, metavar="X", help="as for check")
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    if args.from_report:
        try:
            with open(args.from_report, encoding="utf-8") as f:
                report = Report.from_dict(json.load(f))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"stackpeel export: cannot read {args.from_report}: {exc}", file=sys.stderr)
            return ExitCode.USAGE
    else:
        from .engine import check
        from .host import TargetError
        try:
            report = check(python=args.python, timeout_scale=args.timeout_scale)
        except TargetError as exc:
            print(f"stackpeel export: cannot diagnose: {exc}", file=sys.stderr)
            return ExitCode.USAGE
    text = render(report, args.format)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"stackpeel export: written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return ExitCode.OK
