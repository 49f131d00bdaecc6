"""Turn a finding code's fix into commands for *this* host.

Pure functions: ``host`` is the dict that :func:`stackpeel.host.detect` returns
(package manager, root or not, conda prefix of the target interpreter).
"""

from __future__ import annotations

import shlex
import string
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from . import knowledge as _knowledge
from .model import Command, Remedy

#: how each system package manager installs packages, as a template
INSTALL = {
    "apt": "{sudo}apt-get update && {sudo}apt-get install -y {packages}",
    "dnf": "{sudo}dnf install -y {packages}",
    "yum": "{sudo}yum install -y {packages}",
    "apk": "{sudo}apk add {packages}",
    "zypper": "{sudo}zypper install -y {packages}",
    "pacman": "{sudo}pacman -S --noconfirm {packages}",
}
#: the same, split: a refresh of the package index (where the manager needs one) and the install,
#: so a report can run the refresh once and install every finding's packages in one command
UPDATE = {"apt": "{sudo}apt-get update"}
INSTALL_ONLY = {
    "apt": "{sudo}apt-get install -y {packages}",
    "dnf": INSTALL["dnf"],
    "yum": INSTALL["yum"],
    "apk": INSTALL["apk"],
    "zypper": INSTALL["zypper"],
    "pacman": INSTALL["pacman"],
}
#: managers that belong to the target environment rather than the OS
ENV_MANAGERS = {
    "conda": "conda install -y -p {conda_prefix} {packages}",
    "pip": "{python} -m pip install {packages}",
}


def _fill(template: str, params: Mapping[str, Any]) -> Optional[str]:
    """Format ``template`` with ``params``; None when a named param is missing or empty."""
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    if any(params.get(n) in (None, "") and n != "sudo" for n in names):
        return None
    return template.format(**{n: params.get(n, "") for n in names})


def build(code: str, host: Mapping[str, Any], params: Optional[Mapping[str, Any]] = None) -> Remedy:
    """The remedy for ``code`` on ``host``, with observed values from ``params`` filled in."""
    spec = _knowledge.get(code)
    p: Dict[str, Any] = dict(host)
    p.setdefault("sudo", "" if host.get("is_root") else "sudo ")
    p.update(params or {})
    commands: List[Command] = []

    pm = host.get("pkg_manager")
    if pm in spec.packages and pm in INSTALL:
        pkgs = _fill(spec.packages[pm], p)
        if pkgs:
            commands.append(Command(pm, INSTALL[pm].format(sudo=p["sudo"], packages=pkgs),
                                    packages=tuple(pkgs.split()), kind="install", sudo=p["sudo"]))
    if host.get("conda_prefix") and "conda" in spec.packages:
        pkgs = _fill(spec.packages["conda"], p)
        if pkgs:
            commands.append(Command("conda",
                                    ENV_MANAGERS["conda"].format(conda_prefix=host["conda_prefix"], packages=pkgs),
                                    packages=tuple(shlex.split(pkgs)), kind="install"))
    if "pip" in spec.packages:
        pkgs = _fill(spec.packages["pip"], p)
        if pkgs and p.get("python"):
            commands.append(Command("pip", ENV_MANAGERS["pip"].format(python=p["python"], packages=pkgs),
                                    packages=tuple(shlex.split(pkgs)), kind="install"))
    for manager, template in spec.commands:
        if manager in INSTALL and manager != pm:
            continue  # another distro's command
        cmd = _fill(template, p)
        if cmd:
            commands.append(Command(manager, cmd))
    text = _knowledge.render_prose(spec.fix, p)
    contract = getattr(spec, "remedy", None) or {}
    automatic = contract.get("automatic")
    return Remedy(text=text, commands=tuple(commands), automatic=automatic if isinstance(automatic, bool) else None,
                  why=str(contract.get("why") or ""))


def merge(commands: Iterable[Command]) -> List[Command]:
    """Every fix command of a report as one ordered list, without repeats.

    The system package manager's installs become one refresh (``apt-get update``, once) and
    one install of every package, in first-seen order; they come first, since compilers and
    headers are what later builds need. Every other command follows in its order, once.
    Merging reads only the commands' structure (``kind``, ``packages``), never their text.
    """
    installs: Dict[Tuple[str, str], List[str]] = {}
    rest: List[Command] = []
    seen = set()
    for c in commands:
        if c.kind == "install" and c.manager in INSTALL_ONLY and c.packages:
            pkgs = installs.setdefault((c.manager, c.sudo), [])
            pkgs.extend(p for p in c.packages if p not in pkgs)
        elif c.kind == "update" and c.manager in UPDATE:
            installs.setdefault((c.manager, c.sudo), [])
        elif c.command not in seen:
            seen.add(c.command)
            rest.append(c)
    out: List[Command] = []
    for (manager, sudo), pkgs in installs.items():
        if manager in UPDATE:
            out.append(Command(manager, UPDATE[manager].format(sudo=sudo), kind="update", sudo=sudo))
        if pkgs:
            out.append(Command(manager, INSTALL_ONLY[manager].format(sudo=sudo, packages=" ".join(pkgs)),
                               packages=tuple(pkgs), kind="install", sudo=sudo))
    return out + [c for c in rest if c.command not in {o.command for o in out}]
