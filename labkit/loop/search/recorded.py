"""A recorded search, step by step, read back from its ledger (for the notebook's stepper).

Each step of the search as `labkit.loop.search.readback` reads it from the engine's events
(define, expand, branch, seal, decision, quarantine, confirm, stop) is one step. For each
step: what was spent on search, spent on confirmation, still held for confirmation, and
left (the budget's events before it); and the tree, sealed candidates and error-class
decisions as they stood. Nothing is re-run.

`sweep` runs the real search at several total budgets (same case, same reserve) and says,
for each, how the task ended — where it turns incomplete.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from labkit.core.types import Verdict
from labkit.grading.checkset import CheckSet
from labkit.grading.sealed import SearchCase
from labkit.grading.verdicts import Checker
from labkit.loop.search.readback import read_search
from labkit.loop.search.search_case import environment_of, search
from labkit.record.events import BudgetStatus, Kind
from labkit.record.ledger import Ledger

if TYPE_CHECKING:
    from labkit.loop.search.frontier import SearchResult

__all__ = ["SearchStep", "Sweep", "steps", "sweep"]

_SETTLED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)


@dataclass(frozen=True, kw_only=True)
class SearchStep:
    index: int
    kind: Kind
    title: str
    detail: dict[str, Any]
    limit: float
    reserve: float
    search_spent: float
    confirm_spent: float
    branches: tuple[dict[str, Any], ...]  # every branch event so far (detail)
    sealed: tuple[str, ...]
    decisions: tuple[dict[str, Any], ...]  # error-class decisions so far

    @property
    def held(self) -> float:
        """The part of the reserve not yet used by confirmation."""
        return max(self.reserve - self.confirm_spent, 0.0)

    @property
    def left(self) -> float:
        return self.limit - self.search_spent - self.confirm_spent

    @property
    def search_left(self) -> float:
        return max(self.left - self.held, 0.0)


def _title(kind: Kind, d: dict[str, Any]) -> str:
    if kind == Kind.DEFINE:
        return f"rule registered before any candidate: {d.get('rule')}; reserve {d.get('reserve'):g}"
    if kind == Kind.EXPAND:
        return (
            f"expand {d.get('hypothesis') or 'start'}: proposed {d.get('proposed')}, "
            f"kept {d.get('kept')} (generate {d.get('spent'):g})"
        )
    if kind == Kind.BRANCH:
        return f"{d.get('name')}: {d.get('outcome')} — {d.get('reason')} (spent {d.get('spent'):g})"
    if kind == Kind.SEAL:
        return f"sealed {d.get('name')} (seal {d.get('seal')})"
    if kind == Kind.ERROR_DECISION:
        return f"{d.get('error_class')} at {d.get('where')}: {d.get('action')}"
    if kind == Kind.CONFIRM:
        ok = d.get("confirmed")
        return (
            "confirmation not funded" if ok is None else f"confirmation on the sealed set: {'pass' if ok else 'fail'}"
        )
    if kind == Kind.STOP:
        return f"task {d.get('status')}; the search ended on: {d.get('reason')}"
    return f"{kind}: {d.get('reason', '')}"


def steps(ledger: Ledger, run_id: str, checks: CheckSet, environment: str = "") -> list[SearchStep]:
    """One SearchStep per step of the search `run_id`, with the accounts as they stood."""
    back = read_search(ledger, run_id, checks, environment)
    branches: list[dict[str, Any]] = []
    sealed: list[str] = []
    decisions: list[dict[str, Any]] = []
    out: list[SearchStep] = []
    for st in back.steps:
        d = dict(st.detail)
        if st.kind == Kind.BRANCH:
            branches.append(d)
        elif st.kind == Kind.SEAL:
            sealed.append(str(d.get("name")))
        elif st.kind == Kind.ERROR_DECISION:
            decisions.append(d)
        out.append(
            SearchStep(
                index=len(out),
                kind=st.kind,
                title=_title(st.kind, d),
                detail=d,
                limit=back.limit,
                reserve=back.reserve,
                search_spent=st.search_spent,
                confirm_spent=st.confirm_spent,
                branches=tuple(branches),
                sealed=tuple(sealed),
                decisions=tuple(decisions),
            )
        )
    return out


@dataclass(frozen=True)
class Sweep:
    total: float
    reserve: float
    result: SearchResult
    steps: tuple[SearchStep, ...]
    ledger: Ledger | None = None  # the run's own ledger, kept open (the evidence card reads it)


def sweep(
    case: SearchCase,
    checker: Checker,
    baseline: Verdict,
    totals: Sequence[float],
    reserve: float,
    *,
    workers: int = 2,
) -> list[Sweep]:
    """The real search on `case` at each total budget (same reserve, same scripted routes).

    Each total is its own run (its own ledger and budget; what it pays never depends on the
    shared verdict cache), so the order only moves wall time: the largest total runs first,
    alone, and validates every candidate a smaller one reaches; the others then run `workers`
    at a time, their dev checks answered by the cache, each still running its own sealed
    confirmation (never cached)."""

    def one(total: float) -> Sweep:
        run_id = f"sweep-{total:g}"
        led = Ledger()
        result = search(case, checker, baseline, total=total, reserve=reserve, ledger=led, run_id=run_id)
        return Sweep(total, reserve, result, tuple(steps(led, run_id, case.checks, environment_of(case, checker))), led)

    if not totals:
        return []
    first = max(totals)
    done = {first: one(first)}
    rest = [t for t in totals if t != first]
    with ThreadPoolExecutor(max_workers=max(workers, 1)) as pool:
        done.update(zip(rest, pool.map(one, rest), strict=True))
    return [done[t] for t in totals]
