"""The one comparison every recording test makes: what labkit computes now against what a
recording under data/ holds. When they differ the failure says, in its first line, whether the
packages the recording's numbers depend on are installed at other versions than it stores
(labkit.core.versions), then where the two first differ."""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

from labkit.core.versions import describe_drift

__all__ = ["assert_as_recorded", "first_difference", "what_happened"]

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 120


def first_difference(now: Any, recorded: Any, where: str = "") -> str:
    """Where `now` and `recorded` (JSON-like values) first differ, and the two values there."""
    if isinstance(now, Mapping) and isinstance(recorded, Mapping):
        for key in [*recorded, *(k for k in now if k not in recorded)]:
            if key not in now or key not in recorded:
                return f"at {where}[{key!r}]: only {'recorded' if key in recorded else 'computed now'}"
            if now[key] != recorded[key]:
                return first_difference(now[key], recorded[key], f"{where}[{key!r}]")
    elif isinstance(now, list | tuple) and isinstance(recorded, list | tuple):
        for i, (a, b) in enumerate(zip(now, recorded, strict=False)):
            if a != b:
                return first_difference(a, b, f"{where}[{i}]")
        if len(now) != len(recorded):
            return f"at {where or 'the top'}: {len(recorded)} items recorded, {len(now)} now"
    return f"at {where or 'the top'}: recorded {_SHORT.repr(recorded)}, now {_SHORT.repr(now)}"


def _same(now: Any, recorded: Any) -> bool:
    equals = getattr(now, "equals", None)  # a polars frame: == compares cell by cell
    return bool(equals(recorded)) if callable(equals) else bool(now == recorded)


def assert_as_recorded(now: Any, recorded: Any, record: Mapping[str, Any], what: str) -> None:
    """Fail unless `now` equals `recorded` (taken from the recording `record`); the message
    names the packages whose installed versions differ from those `record` stores."""
    if _same(now, recorded):
        return
    if hasattr(now, "to_dicts") and hasattr(recorded, "to_dicts"):  # frames: compare their rows
        now, recorded = now.to_dicts(), recorded.to_dicts()
    how = record.get("command") or record.get("computed_by") or "its command"
    raise AssertionError(
        f"{what} is not what its recording holds; {describe_drift(record.get('versions', {}))}\n"
        f"  first difference {first_difference(now, recorded)}\n"
        f"  once the change is understood, record it again: {how}"
    )


def what_happened(value: Any, aside: Collection[str], scrub: Callable[[str], str] | None = None) -> Any:
    """An event's detail or evidence (JSON-like) with only what happened: the keys in `aside`
    (timings, cache hits, what names the machine) dropped at any depth, each test result cut to
    [test id, outcome, message] (its seconds dropped), and every string passed through `scrub`."""
    if isinstance(value, Mapping):
        out = {k: what_happened(v, aside, scrub) for k, v in value.items() if k not in aside}
        if "results" in out:
            out["results"] = [r[:3] for r in out["results"]]
        return out
    if isinstance(value, list | tuple):
        return [what_happened(v, aside, scrub) for v in value]
    if isinstance(value, str) and scrub is not None:
        return scrub(value)
    return value
