"""``stackpeel fix``: turn a diagnosis into commands, run them with consent, verify by re-checking.

The order of work:

1. a report: a fresh ``check`` of the target interpreter, or a saved one (``--from``) that this
   machine wrote (its ``host.machine_id`` and ``hostname`` must match this machine's);
2. the plan (:func:`plan`, pure): each blocking root-cause finding either becomes *steps* (argv
   lists for this host's package manager, conda or the target's pip) when the knowledge base
   says ``remedy = {automatic = true}``, or an *instruction* for a person (the host's driver, the
   container runtime, a variable in the user's shell: ``automatic = false``, with ``why``);
3. consent: a ``[y/N]`` prompt on a terminal, ``--yes`` otherwise; no terminal and no
   ``--yes``: refused, exit 2; ``--dry-run`` shows the plan and runs nothing;
4. the steps, in order, each an argv list (never a shell string; ``sudo`` in front only when
   not root and sudo exists), output shown as it comes, the first failure stops the rest;
5. a re-check of the checks that reported the findings and those the remedies name in
   ``verify`` (with their requirements), and per finding: fixed / still failing (with the new
   evidence) / not attempted (and why).

Only commands that stackpeel builds itself from the knowledge base's ``packages`` tables ever
run; a remedy's shell lines (``export``, ``unset``, diagnostics) are printed, never executed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from . import knowledge as _knowledge
from .model import ExitCode, Finding, Report, Severity, Status

__all__ = ["Item", "Plan", "Step", "Outcome", "plan", "add_parser", "machine_matches"]

#: how long one step may run before it is stopped (an apt mirror can be slow, never endless)
STEP_TIMEOUT = 1800.0

#: argv of each package manager's install and (where it has one) index refresh
_INSTALL: Dict[str, Tuple[str, ...]] = {
    "apt": ("apt-get", "install", "-y", "--no-install-recommends"),
    "dnf": ("dnf", "install", "-y"),
    "yum": ("yum", "install", "-y"),
    "apk": ("apk", "add", "--no-cache"),
    "zypper": ("zypper", "--non-interactive", "install"),
    "pacman": ("pacman", "-S", "--noconfirm", "--needed"),
}
_UPDATE: Dict[str, Tuple[str, ...]] = {"apt": ("apt-get", "update"), "pacman": ("pacman", "-Sy")}
#: environment the system package manager runs with (no debconf questions without a terminal)
_PM_ENV: Dict[str, Tuple[str, ...]] = {"apt": ("DEBIAN_FRONTEND=noninteractive",)}


#: what a package word may look like: a name with a version or extras, never an option
#: (a report is data: "-oAPT::Update::Pre-Invoke::=..." as a package name must not reach apt)
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+:~=<>!*,\[\]-]*$")
#: the options the knowledge base's pip/conda package lists use; anything else is refused
_OPTIONS = {"pip": {"--force-reinstall", "--no-deps", "--no-build-isolation", "--no-cache-dir", "--upgrade", "-U"},
            "conda": {"-c"}}


def _unsafe(manager: str, words: Sequence[str]) -> List[str]:
    """The words of a package list that are neither a package name nor an allowed option."""
    allowed = _OPTIONS.get(manager, set())
    bad, prev = [], ""
    for w in words:
        if not (w in allowed or _PACKAGE.match(w) or (prev == "-c" and re.match(r"^[A-Za-z0-9][\w.-]*$", w))):
            bad.append(w)
        prev = w
    return bad


@dataclass(frozen=True)
class Step:
    """One command to run: ``argv`` exactly as executed; ``fixes`` the codes it serves."""

    argv: Tuple[str, ...]
    purpose: str
    fixes: Tuple[str, ...] = ()

    def shown(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True)
class Item:
    """One blocking finding and what fix will do about it.

    ``action`` is ``run`` (steps serve it), ``person`` (printed as instructions: the
    knowledge base says a person must act, or this host cannot run the commands).
    """

    code: str
    check_id: str
    title: str
    message: str
    action: str
    why: str = ""
    text: str = ""
    instructions: Tuple[str, ...] = ()
    verify: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    items: Tuple[Item, ...]
    steps: Tuple[Step, ...]
    python: str
    host: Mapping[str, Any] = field(default_factory=dict)

    @property
    def runnable(self) -> Tuple[Item, ...]:
        return tuple(i for i in self.items if i.action == "run")

    def to_dict(self) -> Dict[str, Any]:
        return {"python": self.python,
                "steps": [{"argv": list(s.argv), "purpose": s.purpose, "fixes": list(s.fixes)} for s in self.steps],
                "items": [i.__dict__ for i in self.items]}


@dataclass(frozen=True)
class Outcome:
    """What became of one item after the steps ran and the checks re-ran."""

    code: str
    check_id: str
    state: str  # fixed | still-failing | not-attempted | not-verified
    detail: str = ""


# ----------------------------------------------------------------------------- the plan (pure)

def _sudo(host: Mapping[str, Any]) -> Optional[Tuple[str, ...]]:
    """The prefix system package managers need here: () as root, ("sudo",) when sudo exists,
    None when neither (the steps cannot run)."""
    if host.get("is_root"):
        return ()
    return ("sudo",) if host.get("sudo_path") else None


def _findings(report: Report, only: Sequence[str]) -> List[Tuple[str, Finding]]:
    """(check id, finding) for each blocking root-cause finding, or for each finding of the
    codes in ``only`` wherever it appears."""
    out: List[Tuple[str, Finding]] = []
    seen = set()
    if only:
        for r in report.results:
            for f in r.findings:
                if f.code in only and (r.id, f.code) not in seen:
                    seen.add((r.id, f.code))
                    out.append((r.id, f))
        return out
    for root in report.diagnosis.blocking:
        res = report.result(root.check_id)
        for f in (res.findings if res else ()):
            if f.severity is Severity.BLOCKING and (res.id, f.code) not in seen:
                seen.add((res.id, f.code))
                out.append((res.id, f))
    return out


def plan(report: Report, host: Mapping[str, Any], only: Sequence[str] = ()) -> Plan:
    """What ``fix`` would do about ``report`` on ``host`` (this machine's :func:`host.detect`
    plus ``sudo_path``). Pure: runs nothing."""
    python = str(report.target.get("python") or "")
    pm = host.get("pkg_manager")
    sudo = _sudo(host)
    items: List[Item] = []
    system_pkgs: List[str] = []
    system_codes: List[str] = []
    env_steps: List[Step] = []
    for check_id, f in _findings(report, only):
        try:
            spec = _knowledge.get(f.code)
            contract = dict(spec.remedy)
        except KeyError:
            contract = {}
        remedy = f.remedy
        text = remedy.text if remedy else ""
        shell_lines = tuple(c.command for c in (remedy.commands if remedy else ()) if c.kind != "install")
        installs = [c for c in (remedy.commands if remedy else ()) if c.kind == "install" and c.packages]
        verify = tuple(dict.fromkeys([check_id, *contract.get("verify", ())]))
        base = dict(code=f.code, check_id=check_id, title=f.title, message=f.message, text=text, verify=verify)
        all_lines = tuple(c.command for c in (remedy.commands if remedy else ()))
        if contract.get("automatic") is not True:
            why = str(contract.get("why") or "the knowledge base does not say this remedy may run unattended")
            items.append(Item(action="person", why=why, instructions=all_lines, **base))
            continue
        system = [c for c in installs if c.manager == pm and pm in _INSTALL]
        # the system's packages, else conda's (alternatives for the same need: never both); pip's always
        envs = [c for c in installs if c.manager == "pip"
                or (c.manager == "conda" and not system and host.get("conda_prefix"))]
        bad = [w for c in system + envs for w in _unsafe(c.manager, c.packages)]
        if bad:
            items.append(Item(action="person", why="refused: the report names packages that are not package names "
                              f"({', '.join(map(repr, bad[:3]))}); check the report and install by hand",
                              instructions=all_lines, **base))
            continue
        if system and sudo is None:
            items.append(Item(action="person", why=f"installing {pm} packages needs root, and this user is not root "
                              "and has no sudo: run the commands as root", instructions=all_lines, **base))
            continue
        if not system and not envs:
            items.append(Item(action="person", why=f"no package for this host ({pm or 'no known package manager'}) "
                              "in the knowledge base, or a value it needs was not observed", instructions=all_lines,
                              **base))
            continue
        for c in system:
            system_pkgs.extend(p for p in c.packages if p not in system_pkgs)
            system_codes.append(f.code)
        for c in envs:
            if c.manager == "pip":
                argv = (python, "-m", "pip", "install", *c.packages)
            else:
                argv = ("conda", "install", "-y", "-p", str(host.get("conda_prefix") or ""), *c.packages)
            env_steps.append(Step(argv, f"install into the diagnosed environment with {c.manager}", (f.code,)))
        items.append(Item(action="run", instructions=shell_lines, **base))
    steps: List[Step] = []
    if system_pkgs and sudo is not None and pm in _INSTALL:
        env = (("env",) + _PM_ENV[pm]) if pm in _PM_ENV else ()
        codes = tuple(dict.fromkeys(system_codes))
        if pm in _UPDATE:
            steps.append(Step(sudo + env + _UPDATE[pm], f"refresh {pm}'s package index", codes))
        steps.append(Step(sudo + env + _INSTALL[pm] + tuple(system_pkgs), f"install with {pm}", codes))
    seen = set()
    for s in env_steps:
        if s.argv not in seen:
            seen.add(s.argv)
            steps.append(s)
    return Plan(items=tuple(items), steps=tuple(steps), python=python, host=dict(host))


def machine_matches(report_host: Mapping[str, Any], here: Mapping[str, Any]) -> Tuple[bool, str]:
    """Whether a saved report was written on this machine: machine id and host name must both match."""
    theirs = (report_host.get("machine_id"), report_host.get("hostname"))
    ours = (here.get("machine_id"), here.get("hostname"))
    if not all(theirs):
        return False, ("the report does not say which machine wrote it (no machine_id/hostname: an older "
                       "stackpeel, or --redact)")
    if theirs != ours:
        return False, (f"the report was written on another machine (hostname {theirs[1]!r}, machine id "
                       f"{str(theirs[0])[:8]}...; this is {ours[1]!r}, {str(ours[0])[:8]}...)")
    return True, ""


# ----------------------------------------------------------------------------- rendering

def render_plan(p: Plan, out: TextIO) -> None:
    w = out.write
    run, person = p.runnable, [i for i in p.items if i.action == "person"]
    if not p.items:
        w("stackpeel fix: no blocking finding: nothing to fix.\n")
        return
    who = "root" if p.host.get("is_root") else "this user" + (" (with sudo)" if p.host.get("sudo_path") else "")
    w(f"stackpeel fix: {len(p.items)} blocking finding(s) for {p.python}\n")
    if p.steps:
        w(f"\nPlan: {len(p.steps)} command(s), run as {who}, in this order:\n")
        for n, s in enumerate(p.steps, 1):
            w(f"  {n}. {s.shown()}\n")
            w(f"       {s.purpose}; for {', '.join(s.fixes)}\n")
        w("\nThey fix:\n")
        for i in run:
            w(f"  {i.code} ({i.check_id}): {i.title}\n")
            if i.instructions:
                w("    also worth knowing (printed, not run):\n")
                for line in i.instructions:
                    w(f"      $ {line}\n")
    if person:
        w("\nNeeds a person (stackpeel fix never runs these):\n")
        for i in person:
            w(f"  {i.code} ({i.check_id}): {i.title}\n")
            w(f"    why not automatic: {i.why}\n")
            if i.text:
                w(f"    what to do: {i.text}\n")
            for line in i.instructions:
                w(f"      $ {line}\n")


# ----------------------------------------------------------------------------- running

@dataclass(frozen=True)
class StepResult:
    step: Step
    returncode: Optional[int]
    tail: str
    timed_out: bool = False


def run_step(step: Step, out: TextIO, timeout: float = STEP_TIMEOUT) -> StepResult:
    """Run one argv (no shell), its output shown line by line as it comes; stopped with its
    whole process group after ``timeout`` seconds or on Ctrl-C."""
    try:
        proc = subprocess.Popen(list(step.argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        out.write(f"    cannot start {step.argv[0]}: {exc}\n")
        return StepResult(step, None, str(exc))
    tail: List[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            # progress meters rewrite their line with CR: keep what a terminal would end up showing
            line = raw.decode("utf-8", "replace").rstrip("\r\n").split("\r")[-1]
            tail.append(line)
            del tail[:-40]
            out.write(f"    | {line}\n")
            out.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
    except BaseException:
        _kill(proc)
        raise
    finally:
        reader.join(timeout=5)
    return StepResult(step, proc.returncode, "\n".join(tail), timed_out)


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


def outcomes(p: Plan, after: Optional[Report], attempted: Sequence[str], stopped: str = "") -> List[Outcome]:
    """Each item's fate: ``attempted`` are the codes whose steps all ran and succeeded."""
    res: List[Outcome] = []
    for i in p.items:
        if i.action != "run":
            res.append(Outcome(i.code, i.check_id, "not-attempted", f"needs a person: {i.why}"))
            continue
        if i.code not in attempted:
            res.append(Outcome(i.code, i.check_id, "not-attempted", stopped or "its command did not run"))
            continue
        r = after.result(i.check_id) if after else None
        if r is None:
            res.append(Outcome(i.code, i.check_id, "not-verified", "the check did not run again"))
        elif any(f.code == i.code for f in r.findings):
            f = next(f for f in r.findings if f.code == i.code)
            ev = f" Evidence: {f.evidence.strip()[-600:]}" if f.evidence.strip() else ""
            res.append(Outcome(i.code, i.check_id, "still-failing", f"{r.status.value}: {f.message}{ev}"))
        elif r.status in (Status.BLOCKED, Status.ERROR):
            res.append(Outcome(i.code, i.check_id, "not-verified", f"{r.status.value}: {r.summary}"))
        else:
            res.append(Outcome(i.code, i.check_id, "fixed", f"{r.status.value}: {r.summary}"))
    return res


# ----------------------------------------------------------------------------- command line

def add_parser(sub) -> None:
    p = sub.add_parser("fix", help="run the fixes check found, with consent, then re-check",
                       description="Turn blocking findings into package-manager commands for this host, run them "
                                   "after you agree, and re-run the affected checks. Remedies that need a person "
                                   "(host driver, BIOS, container runtime) are printed, never run.",
                       epilog="exit status: 0 every blocking finding fixed (or none), 1 something still needs doing, "
                              "2 refused (no consent possible, a report from another machine) or usage error. "
                              "See docs/fix.md.")
    p.add_argument("--python", metavar="PATH", help="interpreter to diagnose and fix (default: as for check)")
    p.add_argument("--from", dest="from_report", metavar="REPORT.json",
                   help="plan from a saved JSON report of this machine instead of a fresh check")
    p.add_argument("--only", action="append", default=[], metavar="CODE",
                   help="fix only findings of this code (repeatable, comma-separated)")
    p.add_argument("--yes", "-y", action="store_true", help="run without asking (needed without a terminal)")
    p.add_argument("--dry-run", action="store_true", help="show the plan; run and change nothing")
    p.add_argument("--timeout-scale", type=float, default=1.0, metavar="X", help="as for check")
    p.set_defaults(handler=cmd_fix)


def _err(msg: str) -> None:
    print(f"stackpeel fix: {msg}", file=sys.stderr)


def _here(python: str) -> Dict[str, Any]:
    from .host import detect
    host = detect(python)
    host["sudo_path"] = shutil.which("sudo")
    return host


def _ask(question: str, stdin: TextIO, out: TextIO) -> bool:
    out.write(question)
    out.flush()
    answer = stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def cmd_fix(args: argparse.Namespace, stdin: Optional[TextIO] = None, out: Optional[TextIO] = None) -> int:
    from .engine import check
    from .host import TargetError

    stdin = stdin or sys.stdin
    out = out or sys.stdout
    only = [c.strip() for item in args.only for c in item.split(",") if c.strip()]
    kb = _knowledge.load()
    unknown = [c for c in only if c not in kb.codes]
    if unknown:
        _err(f"unknown finding code(s) {', '.join(unknown)}; 'stackpeel codes' lists them")
        return ExitCode.USAGE
    if args.from_report:
        try:
            with open(args.from_report, encoding="utf-8") as f:
                report = Report.from_dict(json.load(f))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _err(f"cannot read {args.from_report}: {exc}")
            return ExitCode.USAGE
        from .host import machine_identity
        ok, why = machine_matches(report.host, machine_identity())
        if not ok:
            _err(f"refusing to act on {args.from_report}: {why}. Run 'stackpeel fix' here (it checks afresh).")
            return ExitCode.USAGE
        try:  # today's verdicts and remedies from the recorded facts (same machine, newer stackpeel)
            from .replay import rediagnose
            report = rediagnose(report)
        except Exception as exc:  # noqa: BLE001 - an old report is still usable as recorded
            out.write(f"(the report's verdicts are used as recorded: re-reading them failed: {exc})\n")
    else:
        try:
            report = check(python=args.python, timeout_scale=args.timeout_scale)
        except TargetError as exc:
            _err(f"cannot diagnose: {exc}")
            return ExitCode.USAGE
    python = str(report.target.get("python") or "")
    the_plan = plan(report, _here(python), only)
    render_plan(the_plan, out)
    if not the_plan.items:
        return ExitCode.OK
    if not the_plan.steps:
        out.write("\nNothing here can be run by stackpeel fix.\n")
        return ExitCode.PROBLEMS
    if args.dry_run:
        out.write("\n--dry-run: nothing was run.\n")
        return ExitCode.PROBLEMS
    if not args.yes:
        if not (hasattr(stdin, "isatty") and stdin.isatty()):
            _err("refusing to change the system without consent: no terminal to ask on; pass --yes to agree, "
                 "or --dry-run to see the plan")
            return ExitCode.USAGE
        if not _ask(f"\nRun these {len(the_plan.steps)} command(s)? [y/N] ", stdin, out):
            out.write("Nothing was run.\n")
            return ExitCode.PROBLEMS
    done: List[str] = []
    failed_codes: set = set()
    stopped = ""
    for n, step in enumerate(the_plan.steps, 1):
        out.write(f"\n[{n}/{len(the_plan.steps)}] $ {step.shown()}\n")
        out.flush()
        r = run_step(step, out)
        if r.returncode != 0:
            how = "timed out" if r.timed_out else f"exit {r.returncode}"
            out.write(f"    failed ({how}); the remaining command(s) are not run\n")
            stopped = f"stopped: '{step.shown()}' failed ({how})"
            failed_codes.update(step.fixes)
            for later in the_plan.steps[n:]:
                failed_codes.update(later.fixes)
            break
        done.append(step.shown())
    attempted = [i.code for i in the_plan.runnable if i.code not in failed_codes]
    verify = sorted({c for i in the_plan.runnable for c in i.verify})
    after: Optional[Report] = None
    if verify:
        out.write(f"\nRe-checking {', '.join(verify)} (and what they require)...\n")
        out.flush()
        try:
            after = check(python=python, only=verify, timeout_scale=args.timeout_scale)
        except Exception as exc:  # noqa: BLE001 - report what happened, never a traceback
            out.write(f"  the re-check could not run: {exc}\n")
    results = outcomes(the_plan, after, attempted, stopped)
    out.write("\nResult:\n")
    width = max(len(o.code) for o in results)
    for o in results:
        out.write(f"  {o.state:<14} {o.code:<{width}}  {o.check_id}: {o.detail}\n")
    if after is not None:
        for cid in verify:
            r = after.result(cid)
            if r is not None:
                out.write(f"  re-checked {cid}: {r.status.value}: {r.summary}\n")
    return ExitCode.OK if all(o.state == "fixed" for o in results) else ExitCode.PROBLEMS
