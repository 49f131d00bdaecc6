"""Collects check classes from the built-in modules and from plugins, and validates them.

Built-in checks live in ``stackpeel/checks/<layer>.py`` and are registered like third-party
ones, through the entry-point group ``stackpeel.checks`` whose value is a module: every
:class:`Check` subclass defined there with an ``id`` is registered (stackpeel/plugins.py
finds them; :data:`BUILTIN_MODULES` is stackpeel's own list, used when it runs from a source
tree without package metadata).
"""

from __future__ import annotations

import difflib

import functools
import importlib
import inspect
import os
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Type

from . import knowledge as _knowledge
from .checks.base import Check
from .plugins import ENTRY_POINT_GROUP  # noqa: F401  (re-exported)

#: layers from the bottom of the stack to the top; also the order of ``stackpeel list``
LAYERS = ("system", "config", "gpu", "cuda", "runtime_libs", "torch", "toolchain", "triton", "kernels", "multi_gpu")

BUILTIN_MODULES = (
    "stackpeel.checks.system",
    "stackpeel.checks.config",
    "stackpeel.checks.gpu",
    "stackpeel.checks.cuda",
    "stackpeel.checks.runtime_libs",
    "stackpeel.checks.torch_layer",
    "stackpeel.checks.toolchain",
    "stackpeel.checks.triton_layer",
    "stackpeel.checks.kernels",
    "stackpeel.checks.multi_gpu",
)

class RegistryError(ValueError):
    """A check declaration is invalid (duplicate id, unknown requirement, cycle...)."""


def _checks_in(module) -> List[Type[Check]]:
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Check) and obj is not Check and obj.__module__ == module.__name__ and "id" in vars(obj):
            found.append(obj)
    return found


def validate(classes: Sequence[Type[Check]]) -> List[Type[Check]]:
    """Check declarations and return them in dependency order (stable by layer)."""
    kb = _knowledge.load()
    by_id: Dict[str, Type[Check]] = {}
    for cls in classes:
        for attr in ("id", "title", "layer"):
            if not getattr(cls, attr, None):
                raise RegistryError(f"{cls.__qualname__} lacks {attr}")
        if cls.id in by_id:
            raise RegistryError(f"check id {cls.id!r} declared twice")
        if cls.layer not in LAYERS:
            raise RegistryError(f"{cls.id}: unknown layer {cls.layer!r}; one of {LAYERS}")
        if not set(cls.gate) <= set(cls.requires):
            raise RegistryError(f"{cls.id}: gate must be a subset of requires")
        if cls.probe_needs is not None and not set(cls.probe_needs) <= set(cls.requires):
            raise RegistryError(f"{cls.id}: probe_needs must be a subset of requires")
        if isinstance(cls.codes, str) or not isinstance(cls.codes, tuple):
            raise RegistryError(f"{cls.id}: codes must be a tuple of finding codes")
        if cls.probe:
            problem = _probe_problem(cls)
            if problem:
                raise RegistryError(f"{cls.id}: probe {cls.probe!r} {problem}")
        if cls.prework:
            module = str(cls.probe or "").rpartition(".")[0]
            problem = _probe_problem(cls, f"{module}.{cls.prework}") if module else "needs a probe"
            if problem:
                raise RegistryError(f"{cls.id}: prework {cls.prework!r} {problem}")
        unknown_codes = [c for c in cls.codes if c not in kb]
        if unknown_codes:
            raise RegistryError(f"{cls.id}: declares finding code(s) {', '.join(unknown_codes)} that the knowledge "
                                "base (stackpeel/knowledge/*.toml) does not define")
        by_id[cls.id] = cls
    for cls in classes:
        for req in cls.requires:
            if req not in by_id:
                raise RegistryError(f"{cls.id} requires unknown check {req!r}")
    # topological order, ties broken by layer then declaration order
    order = {cls.id: i for i, cls in enumerate(classes)}
    rank = lambda c: (LAYERS.index(c.layer), order[c.id])  # noqa: E731
    done: Dict[str, bool] = {}
    out: List[Type[Check]] = []

    def visit(cls: Type[Check], stack: tuple) -> None:
        if cls.id in stack:
            raise RegistryError("dependency cycle: " + " -> ".join(stack + (cls.id,)))
        if done.get(cls.id):
            return
        for req in sorted((by_id[r] for r in cls.requires), key=rank):
            visit(req, stack + (cls.id,))
        done[cls.id] = True
        out.append(cls)

    for cls in sorted(classes, key=rank):
        visit(cls, ())
    return out


@functools.lru_cache(maxsize=None)
def _defined_functions(path: str) -> FrozenSet[str]:
    """Top-level functions a probe module defines, read from its source once per path
    (several checks share one probe module). stackpeel's own probe modules (which the test
    suite parses and runs) are scanned for ``def`` lines at column 0: parsing all eleven
    took 60 ms at every command's start; the scan may also find a function defined in a
    string (a kernel's source), never miss one. Any other module (a plugin's) is parsed, so
    that a syntax error is reported when the registry loads."""
    import re

    with open(path, encoding="utf-8") as f:
        source = f.read()
    from .runner.child import PROBES_DIR

    if os.path.dirname(os.path.abspath(path)) == str(PROBES_DIR):
        return frozenset(re.findall(r"^(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", source, re.MULTILINE))
    import ast

    tree = ast.parse(source)
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _probe_problem(cls: Type[Check], probe: Optional[str] = None) -> Optional[str]:
    """Why ``cls.probe`` (or ``probe``: "module.function") cannot run, or None. Reads the
    probe's source (never imports it: probes belong to the target interpreter)."""
    from pathlib import Path

    from .runner.child import PROBES_DIR

    module, _, function = str(probe or cls.probe).rpartition(".")
    if not module or not function:
        return "is not 'module.function'"
    path = Path(cls.probes_dir or PROBES_DIR) / (module.replace(".", "/") + ".py")
    try:
        defined = _defined_functions(str(path))
    except OSError:
        return f"names {path}, which does not exist"
    except SyntaxError as exc:
        return f"is in {path}, which does not parse: {exc}"
    if function not in defined:
        return f"names a function {function!r} that {path.name} does not define"
    return None


def uncovered_codes(classes: Sequence[Type[Check]]) -> List[str]:
    """Codes of the knowledge base that no check in ``classes`` declares and that are not
    explain-only: each is wording nobody can emit (the test suite keeps this empty)."""
    from .fleet.collective import CODES as cross_node  # emitted by `fleet --collective`, across nodes

    kb = _knowledge.load()
    declared = {c for cls in classes for c in cls.codes} | set(cross_node)
    explain_only = set(kb.explain_only())
    return [c for c in kb.codes if c not in declared and c not in explain_only]


def checks_for_codes(classes: Sequence[Type[Check]]) -> Dict[str, str]:
    """finding code -> id of the first check (in dependency order) that declares it:
    the check that can confirm the code live."""
    out: Dict[str, str] = {}
    for cls in classes:
        for code in cls.codes:
            out.setdefault(code, cls.id)
    return out


def load(modules: Optional[Iterable[str]] = None, plugins: bool = True) -> List[Type[Check]]:
    """Import check modules and return their validated check classes.

    By default the modules are the ``stackpeel.checks`` entry points (stackpeel/plugins.py):
    the built-ins, then each installed plugin unless ``plugins`` is false or plugins are
    disabled. Built-ins must be valid (:class:`RegistryError`); a plugin that cannot be
    imported or whose checks do not validate is replaced by one stand-in check
    ``plugin.<name>`` whose result is ``error`` with the reason, so it never breaks the run.
    ``modules`` names the modules to import instead (no plugins).
    """
    if modules is not None:
        classes: List[Type[Check]] = []
        for name in modules:
            classes.extend(_checks_in(importlib.import_module(name)))
        return validate(classes)
    from . import plugins as _plugins

    found = _plugins.discover(third_party=plugins and _plugins.enabled())
    accepted: List[Type[Check]] = [c for p in found if p.builtin for c in p.classes]
    validate(accepted)
    broken = [_plugins.broken_check(p, p.error) for p in found if not p.builtin and p.error]
    pending = [(p, "") for p in found if not p.builtin and not p.error]
    while pending:  # a plugin may require another plugin's checks: accept until nothing changes
        left = []
        for plugin, _ in pending:
            try:
                validate(accepted + list(plugin.classes))
            except RegistryError as exc:
                left.append((plugin, str(exc)))
            else:
                accepted.extend(plugin.classes)
        if len(left) == len(pending):
            broken += [_plugins.broken_check(p, f"its checks are invalid: {why}") for p, why in left]
            break
        pending = left
    return validate(accepted + broken)


def select(classes: Sequence[Type[Check]], only: Sequence[str] = (), skip: Sequence[str] = ()) -> List[Type[Check]]:
    """Filter by id or layer. ``only`` pulls in the requirements of what it names, so a
    selected check always sees its prerequisites' facts."""

    def matches(cls: Type[Check], keys: Sequence[str]) -> bool:
        return any(k == cls.id or k == cls.layer or cls.id.startswith(k + ".") for k in keys)

    by_id = {c.id: c for c in classes}
    unknown = [k for k in list(only) + list(skip) if not any(matches(c, [k]) for c in classes)]
    if unknown:
        names = sorted({c.id for c in classes} | {c.layer for c in classes})
        hints = [f"{k!r} (did you mean {', '.join(map(repr, close))}?)" if close else repr(k)
                 for k in unknown for close in [difflib.get_close_matches(k, names, n=3, cutoff=0.5)]]
        raise RegistryError(f"no check or layer named {', '.join(hints)}; see `stackpeel list`")
    chosen = [c for c in classes if not only or matches(c, only)]
    wanted = {c.id for c in chosen}
    stack = list(wanted)
    while stack:
        for req in by_id[stack.pop()].requires:
            if req not in wanted:
                wanted.add(req)
                stack.append(req)
    skipped = {c.id for c in classes if skip and matches(c, skip)}
    return [c for c in classes if c.id in wanted and c.id not in skipped]
