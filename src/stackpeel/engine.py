"""The doctor as a library: pick the target, run the checks, diagnose, return a Report."""

from __future__ import annotations

import datetime as _dt
import os
import threading
import time
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Type

from . import __version__
from .host import TargetError, default_python, detect, identify, resolve_python
from .model import Report
from .runner import cache, hygiene
from .runner.child import own_fsize, own_nofile
from .runner.zygote import Zygotes

if TYPE_CHECKING:
    from .checks.base import Check
    from .runner.scheduler import ProgressFn

# check() imports the registry, the scheduler, diagnosis and redaction when it runs: the CLI
# calls start_early() first, so that the interpreter importing torch (the critical path)
# starts before stackpeel pays for its own imports

#: what the built-in checks' probes import anyway (their ``preload``, unioned; a test keeps
#: the two equal): the interpreter that imports it starts before the registry is even loaded
BUILTIN_PRELOAD = ("torch", "triton")

__all__ = ["TargetError", "check"]


def _selection(only: Sequence[str], skip: Sequence[str], classes: Sequence[Type[Check]]) -> dict:
    """What --only/--skip asked for, and which requirements of the checks that ran were left out."""
    if not (only or skip):
        return {}
    ran = {c.id for c in classes}
    missing = sorted({r for c in classes for r in c.requires if r not in ran})
    return {"only": list(only), "skip": list(skip), "not_run": missing}


def _early_zygotes(python: str, env: Optional[Mapping[str, str]], environ: Mapping[str, str], mode: str,
                   builtin_selection: bool, may_reuse: bool) -> Optional[Zygotes]:
    """The interpreters probes fork from, started before anything else, so that ``import
    torch`` (the critical path of a full check) runs while stackpeel loads its registry and
    computes the cache key. Only for a run of the built-in checks without ``--only`` (their
    preload is known: BUILTIN_PRELOAD). When a repeat run may reuse the results (an entry
    stored for this interpreter) only the bare interpreter starts, for the checks that always
    run again (``volatile``): torch would be imported for nothing, and the scheduler starts
    that interpreter when a probe needs it."""
    if not builtin_selection or environ.get("STACKPEEL_NO_PRELOAD") or os.environ.get("STACKPEEL_NO_PRELOAD"):
        return None
    if may_reuse and cache.has_entry(python, mode, env):
        return Zygotes(python, BUILTIN_PRELOAD, env, eager=False)
    return Zygotes(python, BUILTIN_PRELOAD, env)


def start_early(python: Optional[str] = None, only: Sequence[str] = (), env: Optional[Mapping[str, str]] = None,
                deep: bool = False, reuse: bool = False, fresh: bool = False) -> Optional[Zygotes]:
    """Start the forking interpreters of a coming :func:`check` with the same arguments
    (pass the result as its ``zygotes``), before the caller's own slow steps (the CLI loads
    the registry first to validate ``--only``). None when there is nothing to start early."""
    environ = os.environ if env is None else env
    try:
        path = resolve_python(python, environ) if python else default_python(environ)["python"]
    except TargetError:
        return None  # check() says why
    return _early_zygotes(path, env, environ, "deep" if deep else "default", not only, reuse and not fresh)


def check(python: Optional[str] = None, only: Sequence[str] = (), skip: Sequence[str] = (),
          env: Optional[Mapping[str, str]] = None, progress: Optional[ProgressFn] = None,
          workers: Optional[int] = None, timeout_scale: float = 1.0, plugins: bool = True,
          checks: Optional[Sequence[Type[Check]]] = None, deep: bool = False, reuse: bool = False,
          fresh: bool = False, zygotes: Optional[Zygotes] = None) -> Report:
    """Diagnose the stack of ``python`` (default: the active environment's interpreter).

    ``env`` replaces the environment the probes run in (default: this process's).
    ``checks`` replaces the registered checks (validated the same way).
    ``deep`` imports the kernel libraries whole and runs real ops forward and backward
    (``stackpeel check --deep``); the default takes only the imports each verdict needs.
    ``reuse`` lets results of an earlier run stand when nothing they depend on changed
    (runner/cache.py; the CLI's default); ``fresh`` ignores them but stores this run's.
    ``zygotes``: from :func:`start_early` (check owns and closes them).
    Raises :class:`TargetError` if the interpreter cannot run, and
    :class:`registry.RegistryError` for unknown ``only``/``skip`` names.
    """
    from . import registry
    from .diagnosis import diagnose
    from .redact import redact_report_dict
    from .runner.scheduler import run_checks

    environ = os.environ if env is None else env
    mode = "deep" if deep else "default"
    early = zygotes
    try:
        if python:
            target = {"python": resolve_python(python, environ), "source": "--python"}
        else:
            target = default_python(environ)
        if early is None:
            early = _early_zygotes(target["python"], env, environ, mode, checks is None and not only,
                                   reuse and not fresh)
        material: dict = {}
        keyer = None
        if reuse or fresh:  # the target describes itself for the cache key while stackpeel goes on
            keyer = threading.Thread(target=lambda path=target["python"]: material.update(
                target=cache.target_material(path, env)), name="stackpeel-key", daemon=True)
            keyer.start()
        target.update(identify(target["python"], env=env))
        # the open-files limit (soft, hard) every probe starts under: the user's, before stackpeel raised
        # its own; recorded, so that a replay judges a probe that died by this run's limit (chk28)
        target["nofile"] = list(own_nofile())
        # the file-size limit every probe writes under: the user's, before stackpeel raised its own (chk29);
        # recorded, so that a replay judges a probe that could not answer by this run's limit
        target["fsize"] = list(own_fsize())
        hygiene.remove_tempdir(hygiene.make_tempdir())  # NoTempDir now, not once per probe
        pool = registry.validate(list(checks)) if checks is not None else registry.load(plugins=plugins)
        classes = registry.select(pool, only, skip)
        host = detect(target["python"])
        start = time.monotonic()
        key, cached = None, {}
        if reuse or fresh:
            if keyer is not None:
                keyer.join()
            key = cache.compute_key(target["python"], classes, env, mode, timeout_scale,
                                    target=material.get("target"))
            if key and reuse and not fresh:
                cached = cache.load(target["python"], mode, key, env)
        stats: dict = {}
        results = run_checks(classes, target["python"], host, target, env=env, workers=workers, progress=progress,
                             timeout_scale=timeout_scale, mode=mode, cached=cached, stats=stats, zygotes=early)
        target = dict(target, mode=mode)
        if stats.get("preload"):  # the interpreter torch probes forked from: what it imported, in how long
            target["preload"] = stats["preload"]
        if cached:
            reused = sorted(r.id for r in results if cached.get(r.id) is r)
            target["reused"] = {"results": len(reused), "ran": sorted(r.id for r in results if r.id not in reused)}
        report = Report(
            tool_version=__version__,
            created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            target=target,
            host=host,
            results=tuple(results),
            diagnosis=diagnose(results, registry.LAYERS),
            duration_s=time.monotonic() - start,
            selection=_selection(only, skip, classes),
        )
        # secrets never leave this function, whatever the renderer
        report = Report.from_dict(redact_report_dict(report.to_dict(), environ))
        if key:
            cache.store(target["python"], mode, key, report.results, env)
        return report
    finally:
        # run_checks began ending the interpreters when the last probe answered (or never got
        # them): the report is built while they die, and they are gone when check() returns
        if early is not None:
            early.close()
