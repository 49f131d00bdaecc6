"""pytest plugin (entry point ``pytest11``): check the stack once per test session.

::

    pytest --stackpeel                      # the checks the needs_stack marks name (all checks if none)
    pytest --stackpeel=toolchain,triton     # these checks as well
    pytest --stackpeel --stackpeel-python ~/venv/bin/python --stackpeel-strict

    @pytest.mark.needs_stack("triton.kernel_launch", "kernels.fla")
    def test_chunked_attention(): ...

With ``--stackpeel`` the checks run once, after collection, against the interpreter running
pytest (or ``--stackpeel-python``); a test marked ``needs_stack(...)`` whose check did not
pass is skipped with the root cause's code and title as the reason (``--stackpeel-strict``:
an error at setup instead, pytest's split of "the environment is broken" from "the test
failed"; a check that is not applicable, its library not installed, always skips),
and the report is printed in the terminal summary. Without ``--stackpeel`` the plugin only
registers the mark: it never runs anything nor imports more of stackpeel.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

MARK = "needs_stack"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("stackpeel", "stackpeel: check the GPU stack once per session")
    group.addoption("--stackpeel", nargs="?", const="", default=None, metavar="CHECKS",
                    help="run stackpeel's checks once (the ones needs_stack marks name, plus CHECKS: ids or layers, "
                         "comma-separated; all checks when neither names any); give CHECKS with '=': "
                         "--stackpeel=toolchain")
    group.addoption("--stackpeel-python", default=None, metavar="PATH",
                    help="interpreter to diagnose (default: the one running pytest)")
    group.addoption("--stackpeel-strict", action="store_true",
                    help="report the needs_stack tests whose checks fail as errors (at setup) instead of skipping them")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", f"{MARK}(*checks): the test needs these stackpeel checks (ids or layers) to "
                                       "pass; with --stackpeel it is skipped with the root cause when one does not")
    value = config.getoption("stackpeel", None)
    if value is None:
        return
    if value and ("/" in value or value.endswith(".py") or os.path.exists(value)):
        raise pytest.UsageError(f"--stackpeel took {value!r} as the checks to run: give checks with '=' "
                                "(--stackpeel=toolchain) or put --stackpeel after the test paths")
    config.pluginmanager.register(StackSession(config, value), "stackpeel-session")


def _split(values: Sequence[str]) -> List[str]:
    return [v.strip() for item in values for v in str(item).split(",") if v.strip()]


class StackSession:
    """The session's one check and what the needs_stack tests make of it."""

    def __init__(self, config: Any, checks: str):
        self.config = config
        self.asked = _split([checks])
        self.python = config.getoption("stackpeel_python") or sys.executable
        self.strict = config.getoption("stackpeel_strict")
        self.report: Any = None
        self.verdicts: Dict[str, Tuple[str, bool]] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: Any, config: Any, items: List[Any]) -> None:
        from . import registry
        from .engine import TargetError, check

        needed = [c for item in items for mark in item.iter_markers(MARK) for c in _split(mark.args)]
        only = list(dict.fromkeys(self.asked + needed))
        try:
            self.report = check(python=self.python, only=only, reuse=True)
        except (registry.RegistryError, TargetError) as exc:
            raise pytest.UsageError(f"stackpeel: {exc}") from None
        except OSError as exc:  # no usable temporary directory, and the like
            raise pytest.UsageError(f"stackpeel could not check the stack: {exc}") from None
        for item in items:  # a skip mark, so pytest reports the test's own location
            for key in (c for mark in item.iter_markers(MARK) for c in _split(mark.args)):
                unmet = self.unmet(key)
                if unmet is not None and not (unmet[1] and self.strict):
                    item.add_marker(pytest.mark.skip(reason=unmet[0]))
                    break

    def unmet(self, key: str) -> Optional[Tuple[str, bool]]:
        """(why, is a failure) when ``key``'s checks did not pass; None when they did."""
        if key not in self.verdicts:
            self.verdicts[key] = self._unmet(key)
        return self.verdicts[key]

    def _unmet(self, key: str) -> Optional[Tuple[str, bool]]:
        from .knowledge import get
        from .model import Status

        results = [r for r in self.report.results if key in (r.id, r.layer) or r.id.startswith(key + ".")]
        for r in results:
            if r.status in (Status.PASS, Status.WARN):
                continue
            if r.status is Status.SKIP:
                return f"stackpeel: {r.id} not applicable: {r.summary}", False
            roots = [root for root in self.report.diagnosis.blocking + self.report.diagnosis.degraded
                     if root.check_id == r.id or any(s.check_id == r.id for s in root.symptoms)]
            causes = "; ".join(f"{code}: {get(code).title}" for root in roots for code in root.codes)
            if causes:
                how = "fails" if r.status is Status.FAIL else r.status.value
                return f"stackpeel: {r.id} {how}, root cause {causes}", True
            return f"stackpeel: {r.id} {r.status.value}: {r.summary}", True
        return None

    def pytest_runtest_setup(self, item: Any) -> None:
        for mark in item.iter_markers(MARK):
            for key in _split(mark.args):
                unmet = self.unmet(key)
                if unmet is None:
                    continue
                why, failure = unmet
                if failure and self.strict:
                    pytest.fail(why, pytrace=False)

    def pytest_report_header(self, config: Any) -> str:
        return f"stackpeel: checking {self.python} once, after collection (--stackpeel)"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        from .render import render

        tr = terminalreporter
        width = getattr(tr, "_tw", None) and tr._tw.fullwidth or 80
        tr.write_sep("=", "stackpeel")
        text = render(self.report, "text", color=False, ascii_only=False, verbose=tr.config.option.verbose > 0,
                      width=min(width, 120))
        for line in text.rstrip("\n").splitlines():
            tr.write_line(line)
