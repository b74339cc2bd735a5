"""The budget: every paid action reserves its upper bound first, then settles what it used.

SPEC §7's ``paid(kind, operation)``. An Operation is a deferred description of an action
(function, arguments, upper bound over every dimension, and how to measure what it used);
building one spends nothing. ``paid`` reserves the upper bound (BudgetExhausted if it does
not fit), runs the function, and settles the measured usage, also when the function
raises. Unknown usage keeps the whole reservation charged and flags it for
reconciliation.

Overspending is impossible by construction: an action only starts once its whole upper
bound is reserved, and a settlement never charges more than was reserved on a limited
dimension. So ``spent + reserved <= limit`` holds on every dimension at every moment.
An action that used more than it declared is not allowed to break that: it is charged
what it reserved, the excess is recorded as an overrun, flagged for reconciliation and
reported (a BudgetOverrun warning, and the ledger event when there is a ledger). On an
unlimited dimension there is nothing to protect, so the full actual usage is charged.

Limits: every dimension of ``limit`` is enforced, zero included. Build limits with
``limits(cost_units=15)`` to leave the other dimensions unlimited.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from labkit.core.errors import BudgetExhausted, BudgetOverrun
from labkit.core.types import Usage
from labkit.record.events import BudgetStatus, Role
from labkit.record.ledger import Event, Ledger
from labkit.record.usage import (
    DIMENSIONS,
    NONE,
    UNLIMITED_COUNT,
    check_usage,
    clip,
    fits,
    num,
    show,
    show_limit,
    total,
    valid,
    with_wall,
)

T = TypeVar("T")


def limits(
    *,
    tokens: int | None = None,
    calls: int | None = None,
    wall_seconds: float | None = None,
    cost_units: float | None = None,
) -> Usage:
    """A budget limit in which every dimension left out is unlimited."""
    return Usage(
        UNLIMITED_COUNT if tokens is None else tokens,
        UNLIMITED_COUNT if calls is None else calls,
        math.inf if wall_seconds is None else wall_seconds,
        math.inf if cost_units is None else cost_units,
    )


@dataclass(frozen=True)
class Operation(Generic[T]):
    """A paid action, described but not run: ``fn(*args, **kwargs)`` costs at most `upper`.

    ``measure(result)`` says what it actually used, or None when that is unknown; without
    `measure` the usage is unknown. Wall time is measured by ``paid`` itself.
    """

    fn: Callable[..., T]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    upper: Usage = NONE
    measure: Callable[[T], Usage | None] | None = None


@dataclass(frozen=True)
class Reservation:
    """An upper bound set aside for one action until it is settled."""

    id: int
    kind: str
    upper: Usage
    from_reserve: bool  # drawn with for_confirmation=True: may use the confirmation reserve
    round: int = 0


@dataclass(frozen=True)
class Charge:
    """How one reservation was settled."""

    reservation: Reservation
    actual: Usage | None  # None: usage unknown, the whole reservation stays charged
    charged: Usage
    overrun: Usage  # usage beyond the reserved bound on limited dimensions (zero if none)
    error: str = ""  # "Type: message" when the action raised

    @property
    def unreconciled(self) -> bool:
        return self.actual is None or self.overrun != NONE


class Budget:
    """Limits over tokens, calls, wall seconds and cost units, spent only through reservations.

    `confirmation` is set aside up front for the final confirmation: ordinary actions can
    never reserve into it; actions with ``for_confirmation=True`` may use it (and whatever
    else is left).

    With a `ledger`, each reservation, settlement and refusal is a "budget" event of
    `run_id` (detail["status"]: reserved / settled / unknown / overrun / refused; the
    usage columns hold the charge). A Budget opened on a ledger that already has budget
    events for `run_id` resumes from them, so restarting a run does not refill its budget,
    and a reservation that was never settled (the process died mid-action) is charged in
    full as unknown. The bookkeeping lives in this object: one Budget per run at a time.
    """

    def __init__(
        self,
        limit: Usage,
        *,
        confirmation: Usage = NONE,
        ledger: Ledger | None = None,
        run_id: str = "",
    ) -> None:
        check_usage(limit, "limit", finite=False)
        check_usage(confirmation, "confirmation")
        if limit.wall_seconds == 0:
            raise ValueError(
                "limit.wall_seconds is 0, but every action takes some wall time; "
                "use labkit.record.budget.limits(...) to leave dimensions unlimited"
            )
        if not confirmation.fits_in(limit):
            raise ValueError(f"confirmation reserve {confirmation} does not fit in the limit {show_limit(limit)}")
        if ledger is not None and not run_id:
            raise ValueError("a Budget that records to a ledger needs a run_id")
        self.limit = limit
        self.confirmation = confirmation
        self.ledger = ledger
        self.run_id = run_id
        self._lock = threading.RLock()  # reads take it too: another thread may be reserving
        self._open: dict[int, Reservation] = {}
        self._history: list[Charge] = []
        self._spent = NONE
        self._spent_confirming = NONE  # part of _spent drawn with for_confirmation=True
        self._next_id = 1
        if ledger is not None:
            self._resume(ledger)

    # -- the state -----------------------------------------------------------------------

    @property
    def spent(self) -> Usage:
        """What settled actions were charged."""
        with self._lock:
            return self._spent

    @property
    def reserved(self) -> Usage:
        """Upper bounds of actions reserved and not yet settled."""
        with self._lock:
            return total(r.upper for r in self._open.values())

    @property
    def remaining(self) -> Usage:
        """limit - spent - reserved, including what is still held for confirmation."""
        with self._lock:
            return clip(self.limit - self._spent - self.reserved)

    @property
    def available(self) -> Usage:
        """What an ordinary (not for_confirmation) action can still reserve."""
        with self._lock:
            return clip(self._room(for_confirmation=False))

    @property
    def held(self) -> Usage:
        """The part of the confirmation reserve not yet used by confirmation actions."""
        with self._lock:
            confirming = self._spent_confirming + total(r.upper for r in self._open.values() if r.from_reserve)
        return clip(self.confirmation - confirming)

    @property
    def unreconciled(self) -> list[Reservation]:
        """Reservations settled with unknown usage or with an overrun."""
        with self._lock:
            return [c.reservation for c in self._history if c.unreconciled]

    @property
    def history(self) -> list[Charge]:
        with self._lock:
            return list(self._history)

    def __repr__(self) -> str:
        with self._lock:
            return (
                f"Budget(limit: {show_limit(self.limit)}; spent: {show(self._spent)}; "
                f"reserved: {show(self.reserved)}; held: {show(self.held)}; "
                f"unreconciled: {len(self.unreconciled)})"
            )

    # -- the verbs -----------------------------------------------------------------------

    def reserve(self, kind: str, upper: Usage, *, for_confirmation: bool = False, round: int = 0) -> Reservation:
        """Set `upper` aside for one action, or raise BudgetExhausted naming what does not fit."""
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"kind must be a non-empty str, got {kind!r}")
        check_usage(upper, "upper")
        with self._lock:
            room = self._room(for_confirmation)
            short = [d for d in DIMENSIONS if not fits(getattr(upper, d), getattr(room, d))]
            if short:
                refusal = self._refusal(kind, upper, room, short, for_confirmation)
            else:
                reservation = Reservation(self._next_id, kind, upper, for_confirmation, round)
                self._next_id += 1
                self._open[reservation.id] = reservation
        detail = {"upper": upper.as_dict(), "from_reserve": for_confirmation}
        if short:
            self._record(kind, round, NONE, {"status": BudgetStatus.REFUSED, "short": short, **detail})
            raise BudgetExhausted(refusal)
        try:  # recorded before the action runs, so a crash mid-action is known on resume
            self._record(kind, round, NONE, {"status": BudgetStatus.RESERVED, "reservation": reservation.id, **detail})
        except BaseException:
            with self._lock:
                del self._open[reservation.id]
            raise
        return reservation

    def settle(self, reservation: Reservation, actual: Usage | None, *, error: str = "") -> Charge:
        """Charge what the action used; None keeps the whole reservation charged, flagged.

        On a limited dimension the charge never exceeds the reservation: usage beyond it
        is recorded as an overrun (flagged for reconciliation, warned about), not spent.
        """
        return self._settle(reservation, actual, error, stacklevel=3)

    def _settle(self, reservation: Reservation, actual: Usage | None, error: str, stacklevel: int) -> Charge:
        if actual is not None:
            check_usage(actual, "actual usage")
        with self._lock:
            if self._open.pop(reservation.id, None) is None:
                raise ValueError(f"reservation {reservation.id} ({reservation.kind}) is not open")
            upper = reservation.upper
            if actual is None:
                charged, overrun = upper, NONE
            else:
                charged, overrun = self._split(actual, upper)
            charge = Charge(reservation, actual, charged, overrun, error)
            self._history.append(charge)
            self._spent = self._spent + charged
            if reservation.from_reserve:
                self._spent_confirming = self._spent_confirming + charged
        if overrun != NONE:
            warnings.warn(
                f"{reservation.kind} (reservation {reservation.id}) used more than its upper bound "
                f"({show(upper)}); charged the bound, overrun {show(overrun)} awaits reconciliation",
                BudgetOverrun,
                stacklevel=stacklevel,
            )
        status = (
            BudgetStatus.UNKNOWN
            if actual is None
            else BudgetStatus.OVERRUN
            if overrun != NONE
            else BudgetStatus.SETTLED
        )
        self._record(
            reservation.kind,
            reservation.round,
            charged,
            {
                "status": status,
                "reservation": reservation.id,
                "upper": upper.as_dict(),
                "actual": None if actual is None else actual.as_dict(),
                "overrun": overrun.as_dict(),
                "from_reserve": reservation.from_reserve,
                "error": error,
            },
        )
        return charge

    def paid(self, kind: str, op: Operation[T], *, for_confirmation: bool = False, round: int = 0) -> T:
        """Reserve `op.upper`, run `op`, settle its measured usage (also if it raises), return its result.

        `paid` does not interrupt a running function: one that outlives its declared wall
        bound is an overrun. If the function raises, its usage is unknown (the whole
        reservation stays charged, flagged) unless the exception carries a `usage`
        attribute of type Usage; the exception is re-raised after settling.
        """
        reservation = self.reserve(kind, op.upper, for_confirmation=for_confirmation, round=round)
        start = time.perf_counter()
        try:
            result = op.fn(*op.args, **op.kwargs)
            measured = None if op.measure is None else op.measure(result)
            if measured is not None:
                check_usage(measured, f"usage measured for {kind}")
        except BaseException as exc:
            carried = getattr(exc, "usage", None)
            usage = carried if isinstance(carried, Usage) and valid(carried) else None
            wall = time.perf_counter() - start
            error = f"{type(exc).__name__}: {exc}"
            self._settle(reservation, with_wall(usage, wall), error, stacklevel=3)
            raise
        self._settle(reservation, with_wall(measured, time.perf_counter() - start), "", stacklevel=3)
        return result

    # -- plumbing ------------------------------------------------------------------------

    def _room(self, for_confirmation: bool) -> Usage:
        left = self.limit - self._spent - self.reserved
        # Not clipped at zero: a tolerance-sized overshoot must not become room for more.
        return left if for_confirmation else left - self.held

    def _split(self, actual: Usage, upper: Usage) -> tuple[Usage, Usage]:
        """(charged, overrun): actual capped at the reservation wherever the limit is finite."""
        charged, overrun = {}, {}
        for d in DIMENSIONS:
            a, u, lim = getattr(actual, d), getattr(upper, d), getattr(self.limit, d)
            bounded = math.isfinite(lim) and lim < UNLIMITED_COUNT
            if a <= u or not bounded:
                charged[d], overrun[d] = a, 0 * a
            else:  # never more than reserved; float dust above the bound is not an overrun
                charged[d], overrun[d] = u, (0 * a if fits(a, u) else a - u)
        return Usage(**charged), Usage(**overrun)

    def _refusal(self, kind: str, upper: Usage, room: Usage, short: list[str], for_confirmation: bool) -> str:
        parts = [f"{d} needs {num(getattr(upper, d))} but {num(max(getattr(room, d), 0))} is left" for d in short]
        held = "" if for_confirmation or self.held == NONE else f"; {show(self.held)} held for confirmation"
        return (
            f"{kind} does not fit the budget: {'; '.join(parts)} (limit {show_limit(self.limit)}; "
            f"spent {show(self._spent)}; reserved {show(self.reserved)}{held})"
        )

    def _record(self, kind: str, round: int, usage: Usage, detail: dict[str, Any]) -> None:
        if self.ledger is not None:
            self.ledger.record(self.run_id, round, Role.BUDGET, kind, usage=usage, detail=detail)

    def _resume(self, ledger: Ledger) -> None:
        """Take over the charges recorded for this run. A reservation recorded but never
        settled belongs to a process that died mid-action: its usage is unknown, so it is
        settled now as such (whole reservation charged, flagged)."""
        from labkit.record.lease import check_free

        check_free(ledger, self.run_id)  # a live run's open reservations are its own to settle
        unsettled: dict[int, Reservation] = {}
        for event in ledger.events(self.run_id):
            status = event.detail.get("status")
            if event.role != Role.BUDGET or status not in (BudgetStatus.RESERVED, *_SETTLED):
                continue
            res = _reservation(event)
            self._next_id = max(self._next_id, res.id + 1)
            if status == BudgetStatus.RESERVED:
                unsettled[res.id] = res
                continue
            unsettled.pop(res.id, None)
            actual = event.detail.get("actual")
            self._history.append(
                Charge(
                    res,
                    None if actual is None else Usage(**actual),
                    event.usage,
                    Usage(**event.detail.get("overrun", {})),
                    str(event.detail.get("error", "")),
                )
            )
            self._spent = self._spent + event.usage
            if res.from_reserve:
                self._spent_confirming = self._spent_confirming + event.usage
        owed = self._spent + total(r.upper for r in unsettled.values())
        if not owed.fits_in(self.limit):
            raise ValueError(
                f"run {self.run_id!r} already spent {show(owed)} (unsettled reservations included) "
                f"in {ledger.path}, more than this budget's limit {show_limit(self.limit)}"
            )
        for res in unsettled.values():
            self._open[res.id] = res
            self.settle(res, None, error="the run ended before this action was settled")


_SETTLED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)


def _reservation(event: Event) -> Reservation:
    d = event.detail
    return Reservation(int(d["reservation"]), event.kind, Usage(**d["upper"]), bool(d["from_reserve"]), event.round)
