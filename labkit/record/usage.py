"""Usage arithmetic for the budget: checks, sums, clipping, and showing usage and limits."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import replace
from typing import Any

from labkit.core.types import Usage

DIMENSIONS = ("tokens", "calls", "wall_seconds", "cost_units")
UNLIMITED_COUNT = sys.maxsize  # tokens and calls are ints; this is "no limit" for them
NONE = Usage()


def show(u: Usage) -> str:
    """Usage as its non-zero dimensions, e.g. "cost_units=12, wall_seconds=0.3"."""
    return ", ".join(f"{d}={num(getattr(u, d))}" for d in DIMENSIONS if getattr(u, d) > 0) or "nothing"


def show_limit(u: Usage) -> str:
    """A limit as its limited dimensions (zero included), e.g. "tokens=0, cost_units=15"."""
    parts = [f"{d}={num(getattr(u, d))}" for d in DIMENSIONS if num(getattr(u, d)) != "unlimited"]
    return ", ".join(parts) or "unlimited"


# How each dimension reads in a message: its unit after a rounded figure.
UNITS = {"tokens": "token", "calls": "call", "wall_seconds": "s wall", "cost_units": "cost unit"}
_NUMBER = r"([0-9][0-9.e+-]*|unlimited|inf)"
_NEEDS = re.compile(rf"\b(tokens|calls|wall_seconds|cost_units) needs {_NUMBER} but {_NUMBER} is left")
_PAIR = re.compile(rf"\b(tokens|calls|wall_seconds|cost_units)={_NUMBER}")


def amount(d: str, x: float | str) -> str:
    """One dimension's figure with its unit, rounded for reading: "0.38 s wall", "12 cost units"."""
    value = float(x)
    if value >= UNLIMITED_COUNT or math.isinf(value):
        return f"unlimited {UNITS[d]}s" if d != "wall_seconds" else "unlimited wall time"
    figure = f"{int(value)}" if d in ("tokens", "calls") else f"{round(value, 2):g}"
    plural = "" if figure == "1" or d == "wall_seconds" else "s"
    return f"{figure} {UNITS[d]}{plural}"


def readable(message: str) -> str:
    """A budget message (as recorded: "wall_seconds=0.379697", "cost_units needs 3 but 1 is
    left") with rounded, unit-labelled figures ("0.38 s wall", "needs 3 cost units, 1 left")."""
    message = _NEEDS.sub(lambda m: f"needs {amount(m[1], m[2])}, {amount(m[1], m[3])} left", message)
    return _PAIR.sub(lambda m: amount(m[1], m[2]), message)


def check_usage(u: Usage, what: str, *, finite: bool = True) -> None:
    if not isinstance(u, Usage):
        raise TypeError(f"{what} must be a labkit.core.types.Usage, got {type(u).__name__}")
    for d in DIMENSIONS:
        v = getattr(u, d)
        if not isinstance(v, int | float) or isinstance(v, bool) or math.isnan(v) or v < 0:
            raise ValueError(f"{what}.{d} must be a number >= 0, got {v!r}")
        if finite and math.isinf(v):
            raise ValueError(f"{what}.{d} must be finite, got {v!r}")


def valid(u: Usage) -> bool:
    try:
        check_usage(u, "usage")
    except (TypeError, ValueError):
        return False
    return True


def fits(need: float, room: float) -> bool:
    return need <= room + (1e-9 if isinstance(need, float) or isinstance(room, float) else 0)


def total(items: Any) -> Usage:
    out = NONE
    for u in items:
        out = out + u
    return out


def clip(u: Usage) -> Usage:
    """Negative components (float dust, or nothing left) become zero."""
    return Usage(*(max(getattr(u, d), 0 * getattr(u, d)) for d in DIMENSIONS))


def with_wall(u: Usage | None, wall: float) -> Usage | None:
    """Wall time is what paid() measured, or what the action reported if that is more."""
    return None if u is None else replace(u, wall_seconds=max(u.wall_seconds, wall))


def num(x: float) -> str:
    return "unlimited" if x >= UNLIMITED_COUNT or math.isinf(x) else f"{x:g}"
