"""Where checks come from: the ``stackpeel.checks`` entry points, built-in and third-party alike.

Every check module is named by an entry point of the group ``stackpeel.checks``: stackpeel's own
``pyproject.toml`` declares its layer modules there, and a plugin distribution declares its own::

    [project.entry-points."stackpeel.checks"]
    example = "stackpeel_plugin_example.checks"

The entry point's *name* is the plugin's namespace: its check ids start with
``plugin.<name>.`` and its finding codes with ``<name>-``, so a plugin can neither shadow nor
redefine anything of stackpeel's or of another plugin. Its knowledge entries are the
``knowledge/*.toml`` files beside the module (the built-ins' format, docs/dev/KNOWLEDGE.md);
its probes are modules in the check's ``probes_dir``, run in the target interpreter exactly
like the built-in probes.

A plugin that cannot be used (its module raises at import, a declaration or a TOML file is
invalid) is not dropped silently: :func:`broken_check` stands in for it, one check
``plugin.<name>`` whose result is ``error`` with the reason, so the run, the other plugins
and the exit code's meaning stay intact. Plugins are off with ``--no-plugins`` or
``STACKPEEL_NO_PLUGINS=1``.

Discovery reads each distribution's metadata with :mod:`importlib.metadata` (standard library)
instead of pluggy: a check is declared data that the registry reads and validates, not a hook
to call, so a hook framework would add a dependency and a second way to register for nothing.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Type

ENTRY_POINT_GROUP = "stackpeel.checks"
#: set to 1 to ignore every third-party plugin (``--no-plugins`` does the same)
DISABLE_ENV = "STACKPEEL_NO_PLUGINS"
#: the distribution whose entry points are the built-in checks
OWN_DISTRIBUTION = "stackpeel"
#: a plugin's name: it becomes part of check ids (``plugin.<name>.``, lower-case words and
#: underscores, as the report schema's ids are) and, with '-' for '_', the codes' prefix
_NAME_RE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
_disabled = False


def disable() -> None:
    """Ignore third-party plugins in this process (``--no-plugins``)."""
    global _disabled
    _disabled = True


def enabled() -> bool:
    return not _disabled and os.environ.get(DISABLE_ENV, "") in ("", "0")


@dataclass(frozen=True)
class Plugin:
    """One entry point of the group: a module of checks and the knowledge beside it."""

    #: the entry point's name: the namespace of the plugin's ids and codes
    name: str
    module: str
    distribution: str
    version: str
    builtin: bool = False
    #: the module's check classes (empty when it could not be imported)
    classes: Tuple[type, ...] = ()
    #: the plugin's knowledge-base files, parsed TOML: ((file name, data), ...)
    knowledge: Tuple[Tuple[str, Mapping[str, Any]], ...] = ()
    #: why the plugin cannot be used ("" when it can)
    error: str = ""

    @property
    def origin(self) -> str:
        """'builtin', or the distribution and its version ('stackpeel-plugin-example 0.1.0')."""
        return "builtin" if self.builtin else f"{self.distribution} {self.version}"

    @property
    def code_prefix(self) -> str:
        return self.name.replace("_", "-") + "-"

    @property
    def id_prefix(self) -> str:
        return f"plugin.{self.name}."


class PluginLoadError(RuntimeError):
    """A plugin could not be used; the message says why (an import traceback, a bad declaration)."""


def _normalise(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def _entry_points() -> List[Tuple[Any, str, str]]:
    """(entry point, distribution name, version) of the group, each distribution once."""
    from importlib import metadata

    seen, out = set(), []
    for dist in metadata.distributions():
        try:
            eps = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
            name = (dist.metadata["Name"] or "") if eps else ""  # METADATA is parsed only for those
        except Exception:  # a broken dist-info directory of some unrelated package
            continue
        if not eps or _normalise(name) in seen:
            continue
        seen.add(_normalise(name))
        out.extend((ep, name, dist.version) for ep in eps)
    return out


def _knowledge_files(module: Any) -> List[Path]:
    folder = Path(getattr(module, "__file__", "") or ".").resolve().parent / "knowledge"
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def _load_one(name: str, module_name: str, dist: str, version: str, builtin: bool) -> Plugin:
    from . import knowledge as _knowledge
    from .registry import _checks_in

    plugin = Plugin(name, module_name, dist, version, builtin)
    if not builtin and not _NAME_RE.match(name):
        return _with(plugin, error=f"entry point name {name!r} is not a namespace: lower-case words joined by '_'")
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and friends from a plugin's import are its own failure
        if builtin:
            raise
        return _with(plugin, error=f"importing {module_name} failed: {type(exc).__name__}: {exc}\n"
                                   f"{traceback.format_exc(limit=8)[-4000:]}")
    classes = tuple(_checks_in(module))
    if builtin:
        return _with(plugin, classes=classes)
    for cls in classes:
        if not str(cls.id).startswith(plugin.id_prefix):
            return _with(plugin, error=f"check {cls.id!r} is outside the plugin's namespace: a plugin's check ids "
                                       f"start with {plugin.id_prefix!r}")
    docs: List[Tuple[str, Mapping[str, Any]]] = []
    try:
        for path in _knowledge_files(module):
            docs.extend((f"{name}:{file}", data) for file, data in _knowledge.read_files([path]))
    except (OSError, _knowledge.KnowledgeError) as exc:
        return _with(plugin, error=f"its knowledge base is invalid: {exc}")
    for file, data in docs:
        for code in data:
            if not code.startswith(plugin.code_prefix):
                return _with(plugin, error=f"{file} [{code}]: a plugin's finding codes start with "
                                           f"{plugin.code_prefix!r} (its entry point's name)")
    for cls in classes:
        cls.origin = plugin.origin
        cls.plugin = name
    return _with(plugin, classes=classes, knowledge=tuple(docs))


def _with(plugin: Plugin, **changes: Any) -> Plugin:
    from dataclasses import replace

    return replace(plugin, **changes)


@functools.lru_cache(maxsize=None)
def _found() -> Tuple[Tuple[Any, str, str], ...]:
    return tuple(_entry_points())


@functools.lru_cache(maxsize=None)
def _builtins() -> Tuple[Plugin, ...]:
    from .registry import BUILTIN_MODULES

    own = [ep.value for ep, d, _ in _found() if _normalise(d) == OWN_DISTRIBUTION]
    # the built-ins, in layer order; stackpeel run from a source tree without metadata uses the list
    modules = sorted(own, key=lambda m: (BUILTIN_MODULES.index(m) if m in BUILTIN_MODULES else len(BUILTIN_MODULES),
                                         m)) or list(BUILTIN_MODULES)
    return tuple(_load_one(m.rsplit(".", 1)[-1], m, OWN_DISTRIBUTION, "", True) for m in modules)


@functools.lru_cache(maxsize=None)
def _third_party() -> Tuple[Plugin, ...]:
    others = sorted(((ep, d, v) for ep, d, v in _found() if _normalise(d) != OWN_DISTRIBUTION),
                    key=lambda t: t[0].name)
    plugins, names = [], set()
    for ep, dist, version in others:
        plugin = _load_one(ep.name, ep.value, dist, version, False)
        if ep.name in names:
            plugin = _with(plugin, classes=(), knowledge=(),
                           error=f"another installed distribution also names its plugin {ep.name!r}")
        names.add(ep.name)
        plugins.append(plugin)
    return tuple(_accept_knowledge(plugins))


def _accept_knowledge(plugins: Sequence[Plugin]) -> List[Plugin]:
    """Each plugin's knowledge must parse together with the built-in files and the plugins
    accepted before it (its caused_by may name built-in codes); one that does not is broken."""
    from . import knowledge as _knowledge

    if not any(p.knowledge and not p.error for p in plugins):
        return list(plugins)
    base = _knowledge.read_files(_knowledge.default_files())
    accepted: List[Tuple[str, Mapping[str, Any]]] = []
    out = []
    for plugin in plugins:
        if plugin.knowledge and not plugin.error:
            try:
                _knowledge.parse(base + accepted + list(plugin.knowledge))
            except _knowledge.KnowledgeError as exc:
                plugin = _with(plugin, knowledge=(), error=f"its knowledge base is invalid: {exc}")
            else:
                accepted.extend(plugin.knowledge)
        out.append(plugin)
    return out


def discover(third_party: Optional[bool] = None) -> Tuple[Plugin, ...]:
    """The built-in check modules, then (unless disabled) every installed plugin, each once."""
    return _builtins() + (_third_party() if (enabled() if third_party is None else third_party) else ())


def knowledge_documents() -> List[Tuple[str, Mapping[str, Any]]]:
    """The parsed knowledge files of the usable plugins (none when plugins are off); imports
    no built-in check module (explain and codes need none)."""
    if not enabled():
        return []
    return [doc for p in _third_party() if not p.error for doc in p.knowledge]


def broken_check(plugin: Plugin, reason: str) -> Type[Any]:
    """A stand-in check for a plugin that cannot be used: its result is ``error`` with ``reason``."""
    from .checks.base import Check

    def evaluate(self: Any, facts: Mapping[str, Any], ctx: Any) -> Any:
        raise PluginLoadError(reason)

    return type(f"BrokenPlugin_{plugin.name}", (Check,), {
        "id": f"plugin.{plugin.name}", "layer": "system", "codes": (), "origin": plugin.origin,
        "plugin": plugin.name, "title": f"plugin {plugin.name} ({plugin.origin})", "evaluate": evaluate,
        "__doc__": f"Stands in for the plugin {plugin.name} ({plugin.module}), which cannot be used.",
        "__module__": __name__,
    })
