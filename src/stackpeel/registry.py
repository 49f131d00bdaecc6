"""Collects check classes from the built-in modules and from plugins, and validates them.

Built-in checks live in ``stackpeel/checks/<layer>.py`` and are listed in
:data:`BUILTIN_MODULES`. Third-party packages add checks the same way, through the
entry-point group ``stackpeel.checks`` whose value is a module: every :class:`Check`
subclass defined there with an ``id`` is registered.
"""

from __future__ import annotations

import difflib

import functools
import importlib
import inspect
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Type

from . import knowledge as _knowledge
from .checks.base import Check

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

ENTRY_POINT_GROUP = "stackpeel.checks"


class RegistryError(ValueError):
    """A check declaration is invalid (duplicate id, unknown requirement, cycle...)."""


def _checks_in(module) -> List[Type[Check]]:
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Check) and obj is not Check and obj.__module__ == module.__name__ and "id" in vars(obj):
            found.append(obj)
    return found


def _plugin_modules() -> List[str]:
    try:
        from importlib.metadata import entry_points
    except ImportError:  # pragma: no cover
        return []
    eps = entry_points()
    group = eps.select(group=ENTRY_POINT_GROUP) if hasattr(eps, "select") else eps.get(ENTRY_POINT_GROUP, [])
    return [ep.value for ep in group]


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
    (several checks share one probe module)."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _probe_problem(cls: Type[Check]) -> Optional[str]:
    """Why ``cls.probe`` ("module.function") cannot run, or None. Reads the probe's source
    (never imports it: probes belong to the target interpreter)."""
    from pathlib import Path

    from .runner.child import PROBES_DIR

    module, _, function = str(cls.probe).rpartition(".")
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
    kb = _knowledge.load()
    declared = {c for cls in classes for c in cls.codes}
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
    """Import check modules and return their validated check classes."""
    names = list(BUILTIN_MODULES if modules is None else modules)
    if plugins and modules is None:
        names += _plugin_modules()
    classes: List[Type[Check]] = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name and name in BUILTIN_MODULES:
                continue  # a layer with no checks yet
            raise
        classes.extend(_checks_in(module))
    return validate(classes)


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
