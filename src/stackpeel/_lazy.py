"""Names of a package imported from their modules on first use (PEP 562).

``stackpeel check`` starts the interpreter that imports torch (the critical path of a full
check) before stackpeel imports its registry, scheduler and renderers; the packages whose
``__init__`` used to import those eagerly hand out their public names through this instead."""

from importlib import import_module
from typing import Any, Callable, Dict, MutableMapping


def exports(package: str, homes: Dict[str, str], namespace: MutableMapping[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps a name to the submodule that
    defines it; the value is imported on first use and kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{homes[name]}", package), name)
        namespace[name] = value
        return value

    return __getattr__
