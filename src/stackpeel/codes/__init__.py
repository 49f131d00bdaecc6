"""The catalogue of finding codes: the one place where each code's wording lives.

A finding code is public API: ``stackpeel check`` emits it, ``stackpeel explain`` maps
log lines to it, ``stackpeel codes`` and ``docs/codes.md`` document it. Never rename one.

Each layer keeps its codes in a module of this package (``codes/toolchain.py`` ...);
:func:`all_codes` gathers them and checks that no code is declared twice.

A :class:`Code` holds the default severity, a short title, the meaning (fact and
consequence, for the docs) and the fix: prose plus, per package manager, the packages
that cure it, plus shell commands. Templates may name ``{params}`` that the check fills
in with observed values (for example ``{python_version}``); a command whose params are
missing is left out rather than printed half-filled.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Dict, Iterable, Mapping, Optional, Tuple

from ..model import Severity

#: Modules of this package that declare codes, in documentation order.
LAYER_MODULES = (
    "system",
    "gpu",
    "cuda",
    "torch_layer",
    "toolchain",
    "triton_layer",
    "kernels",
    "multi_gpu",
    "runner",
)


@dataclass(frozen=True)
class Code:
    code: str
    layer: str
    severity: Severity
    title: str
    meaning: str
    fix: str
    #: package manager -> space-separated packages (templated), e.g. {"apt": "gcc", "apk": "gcc musl-dev"}
    packages: Mapping[str, str] = field(default_factory=dict)
    #: extra commands: (manager, template). manager "shell" means any POSIX shell.
    commands: Tuple[Tuple[str, str], ...] = ()
    #: upstream references where the cause was established
    links: Tuple[str, ...] = ()


_CATALOGUE: Optional[Dict[str, Code]] = None


def _load() -> Dict[str, Code]:
    catalogue: Dict[str, Code] = {}
    for name in LAYER_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a layer without codes yet
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        for code in getattr(module, "CODES", ()):
            if code.code in catalogue:
                raise ValueError(f"finding code {code.code!r} declared twice")
            catalogue[code.code] = code
    return catalogue


def all_codes() -> Dict[str, Code]:
    """Every finding code, keyed by code, in documentation order."""
    global _CATALOGUE
    if _CATALOGUE is None:
        _CATALOGUE = _load()
    return _CATALOGUE


def get(code: str) -> Code:
    try:
        return all_codes()[code]
    except KeyError:
        raise KeyError(f"unknown finding code {code!r}; declare it in stackpeel/codes/") from None


def codes_for_layer(layer: str) -> Iterable[Code]:
    return [c for c in all_codes().values() if c.layer == layer]
