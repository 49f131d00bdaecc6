"""Table tests describe a probe's answer by the keys that matter to their case.

:func:`answer` makes such a description a whole answer: every key the check's shape
(``Check.facts``, stackpeel/facts.py) requires is there, as ``None`` unless the case gives
it, which is what ``evaluate`` read for an absent key before the shape was enforced. A key
that the shape does not declare is refused, so a table cannot test a key no probe writes
(a typo, a renamed key) and pass.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping

from stackpeel import facts as F


def answer(cls: type, facts: Mapping[str, Any]) -> Dict[str, Any]:
    """``facts`` completed to the required keys of ``cls.facts`` (``None`` where not given)."""
    shape = cls.facts
    if shape is None:
        return dict(facts)
    unknown = sorted(set(facts) - set(F._hints(shape)))
    assert not unknown, f"{cls.id}: {unknown} are no keys of {shape.__name__}"
    return {**{k: None for k in shape.__required_keys__}, **facts}


def check_source(cls) -> str:
    """The source of a check class and of its own base classes up to Check: a body may live
    in a shared base class of a module's checks (config's _PathVariables)."""
    import inspect

    from stackpeel.checks.base import Check

    return "".join(inspect.getsource(k) for k in cls.__mro__ if issubclass(k, Check) and k is not Check)
