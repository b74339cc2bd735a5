"""Comparable progress: when ΔF with severity lets a search branch go on (seed 002 §4).

ΔF (labkit.grading.checkset) counts failures within one check set. A search needs one
more judgement: does this change count as progress? It does not when

- a check was skipped or not run (a required check must run to count);
- a check's version changed (a rewritten test is a different check);
- a new failure is high or critical (a new severe failure is never bought by fixes);
- the worst new failure is more severe than the worst resolved one (many light fixes
  never mask one severe failure);
- ΔF <= 0.

Otherwise it does. The resolved / new / not-run / changed checks and their severities
are carried along, so the search records say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labkit.grading.checkset import SEVERITIES, RoundReport, Severity

__all__ = ["Progress", "judge"]

_RANK = {s: i for i, s in enumerate(reversed(SEVERITIES))}  # low 0 .. critical 3
_SEVERE: tuple[Severity, ...] = ("high", "critical")


@dataclass(frozen=True, kw_only=True)
class Progress:
    comparable: bool  # may this branch be expanded further?
    reason: str
    delta_f: int
    resolved: tuple[tuple[str, Severity], ...]
    new: tuple[tuple[str, Severity], ...]
    not_run: tuple[tuple[str, Severity], ...]
    changed: tuple[tuple[str, Severity], ...]
    still_failing: tuple[tuple[str, Severity], ...]

    def as_dict(self) -> dict[str, Any]:
        def rows(xs: tuple[tuple[str, Severity], ...]) -> list[dict[str, str]]:
            return [{"check": c, "severity": s} for c, s in xs]

        return {
            "comparable": self.comparable,
            "reason": self.reason,
            "delta_f": self.delta_f,
            "resolved": rows(self.resolved),
            "new": rows(self.new),
            "not_run": rows(self.not_run),
            "changed": rows(self.changed),
            "still_failing": rows(self.still_failing),
        }


def _worst(xs: tuple[tuple[str, Severity], ...]) -> int:
    return max((_RANK[s] for _, s in xs), default=-1)


def judge(report: RoundReport) -> Progress:
    """Whether `report` (parent run -> child run, one check set) is comparable progress."""

    def pick(entries: Any) -> tuple[tuple[str, Severity], ...]:
        return tuple((e.check, e.severity) for e in entries)

    resolved, new = pick(report.resolved), pick(report.new)
    not_run, changed = pick(report.not_run), pick(report.changed)
    severe = [c for c, s in new if s in _SEVERE]
    if not_run:
        ok, why = False, f"checks not run (skipped or missing): {', '.join(c for c, _ in not_run)}"
    elif changed:
        ok, why = False, f"check versions changed: {', '.join(c for c, _ in changed)}"
    elif severe:
        ok, why = False, f"new {'/'.join(_SEVERE)}-severity failure: {', '.join(severe)}"
    elif new and _worst(new) > _worst(resolved):
        ok, why = False, "lighter fixes do not mask a more severe new failure"
    elif report.delta_f <= 0:
        ok, why = False, f"no progress: ΔF = {report.delta_f:+d}"
    else:
        ok, why = True, f"ΔF = {report.delta_f:+d}, no new severe failure"
    return Progress(
        comparable=ok,
        reason=why,
        delta_f=report.delta_f,
        resolved=resolved,
        new=new,
        not_run=not_run,
        changed=changed,
        still_failing=pick(report.still_failing),
    )
