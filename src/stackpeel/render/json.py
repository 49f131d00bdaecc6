"""JSON: the report's ``to_dict`` form, versioned by ``schema_version`` and described by
``docs/report.schema.json``."""

from __future__ import annotations

import json

from ..model import Report


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"
