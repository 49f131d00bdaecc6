"""The catalogue of finding codes: a thin view of :mod:`stackpeel.knowledge`.

The wording of every code lives in ``stackpeel/knowledge/<layer>.toml``; this module
keeps the names existing imports use (``Code``, ``all_codes``, ``get``).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..knowledge import CodeEntry as Code
from ..knowledge import load

__all__ = ["Code", "all_codes", "codes_for_layer", "get"]


def all_codes() -> Mapping[str, Code]:
    """Every finding code, keyed by code, lower layers first."""
    return load().codes


def get(code: str) -> Code:
    return load().get(code)


def codes_for_layer(layer: str) -> Iterable[Code]:
    return [c for c in all_codes().values() if c.layer == layer]
