"""Renderers: pure functions from a Report to text. A renderer never probes."""

from __future__ import annotations

from typing import Any

from ..model import Report

FORMATS = ("text", "json", "markdown", "html")


def render(report: Report, fmt: str = "text", **options: Any) -> str:
    if fmt == "text":
        from .text import render_text
        return render_text(report, **options)
    if fmt == "json":
        from .json import render_json
        return render_json(report)
    if fmt == "markdown":
        from .markdown import render_markdown
        return render_markdown(report, **{k: v for k, v in options.items() if k in ("verbose",)})
    if fmt == "html":
        from .html import render_html
        return render_html(report)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "render"]
