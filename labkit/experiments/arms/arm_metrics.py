"""Per-arm metrics from the merged ledger (never from what a run kept aside).

One row per job (`runs`): final success on the hidden tests, final visible verdict, the
start and first-round states, rounds worked, children rolled back, escalations, status
(complete / incomplete / not available) and the budget actually charged (settled budget
events). `table` aggregates per arm with percentile-bootstrap intervals over jobs:

- success: hidden tests pass at the end (incomplete jobs count, as whatever they hold);
- gap: visible pass rate minus hidden pass rate at the end;
- broken_first: of jobs whose answer after round 1 was right, the share wrong at the end;
- broken_start: of jobs that *started* right (correct-original slice), the share wrong at the end;
- coverage: test coverage of the acceptance, as a stated proxy (not line coverage): of the jobs
  whose final answer fails the hidden tests (the behaviour surface), the share whose visible
  (acceptance) tests fail too — how much of the wrong behaviour the acceptance would catch;
  1 − coverage is the share of wrong answers it would accept. None when no final answer is wrong;
- gain_r: the change in success from round r-1 to r (a stopped job holds its state);
- rounds, rollback rate, escalation rate, incomplete rate, tokens/calls per success;
- spend beside the limit (mean and max of tokens, calls, wall seconds);
- self-tests: how often the model's own tests passed code the hidden tests fail
  (false-positive rate), counted from the judged candidates.

`flips(runs_frame, arm)` is the engine accounting's transition matrix per round.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from labkit.core.stats import Interval, bootstrap_mean, resample_indices
from labkit.loop.engine import accounting
from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Event, Ledger

__all__ = ["ArmRow", "flips", "ledger_table", "runs", "self_test_judgements", "table"]


def _parts(run_id: str) -> tuple[str, str, str, int]:
    _, suite, case, arm, seed = run_id.split("/")
    return suite, case, arm, int(seed)


def _run_row(run_id: str, events: list[Event]) -> dict[str, Any]:
    suite, case, arm, seed = _parts(run_id)
    scores = sorted((s.round, s.correct, s.visible, s.candidate) for s in outcomes.scores(events))
    # The job's status is its stops' (a ledger recorded before this also repeats it as detail["job_status"]).
    stops = [e for e in events if e.kind == Kind.STOP]
    status = "complete"
    if any(e.detail.get("rule") == "not available" for e in stops):
        status = "not available"
    elif any(e.detail.get("rule") == "budget" for e in stops):
        status = "incomplete"
    budget = [e for e in events if e.role == Role.BUDGET]  # only settlements carry usage (reservations, refusals: 0)
    define = next((e for e in events if e.role == Role.EXPERIMENT and e.kind == Kind.DEFINE), None)
    worked = {
        e.round for e in events if e.role == Role.REFLECTOR and e.kind == Kind.REFLECT and e.detail.get("children")
    }
    children = [ch for d in outcomes.decisions(events) for ch in d.children]
    by_round = {r: (c, v) for r, c, v, _ in scores}
    last = max(by_round) if by_round else 0
    return {
        "run": run_id,
        "suite": suite,
        "case": case,
        "arm": arm,
        "seed": seed,
        "status": status,
        "start": by_round.get(0, (False, False))[0],
        "first": by_round.get(1, by_round.get(0, (False, False)))[0],
        "correct": by_round.get(last, (False, False))[0],
        "visible": by_round.get(last, (False, False))[1],
        "rounds": len(worked),
        "children": len(children),
        "rolled_back": sum(ch.decision == "roll back" for ch in children),
        "escalated": any(e.detail.get("outcome") == "escalate" for e in stops),
        "tokens": sum(e.tokens for e in budget),
        "calls": sum(e.calls for e in budget),
        "seconds": sum(e.wall_seconds for e in budget),
        "cost": sum(e.cost_units for e in budget),
        "limit": json.dumps(define.detail.get("limit")) if define else "",
        "scores": [(r, c) for r, (c, _) in sorted(by_round.items())],
    }


def runs(ledger: Ledger) -> pl.DataFrame:
    """One row per job run id (`arms/<suite>/<case>/<arm>/<seed>`) found in the ledger.

    Counted once per ledger and length: a page asks for the same recorded ledger's jobs many
    times (one table, several captions), and an append-only ledger of unchanged length holds
    the same events. Polars frames are not changed in place, so the same frame is returned.
    """
    return _kept(ledger).runs


def ledger_table(ledger: Ledger) -> list[ArmRow]:
    """`table(runs(ledger))`, kept like `runs` (its bootstrap is seeded: the same rows every time)."""
    kept = _kept(ledger)
    if kept.table is None:
        kept.table = table(kept.runs)
    return list(kept.table)


@dataclass
class _Kept:
    count: int
    runs: pl.DataFrame
    table: list[ArmRow] | None = None


_KEPT: weakref.WeakKeyDictionary[Ledger, _Kept] = weakref.WeakKeyDictionary()


def _kept(ledger: Ledger) -> _Kept:
    count = len(ledger)  # counted before reading: an event appended meanwhile is read next time
    kept = _KEPT.get(ledger)
    if kept is None or kept.count != count:
        kept = _KEPT[ledger] = _Kept(count, _runs(ledger))
    return kept


def _runs(ledger: Ledger) -> pl.DataFrame:
    groups: dict[str, list[Event]] = {}
    for e in ledger.events():
        if e.run_id.startswith("arms/"):
            groups.setdefault(e.run_id, []).append(e)
    if not groups:
        raise ValueError("the ledger holds no arms runs (run ids arms/<suite>/<case>/<arm>/<seed>)")
    rows = [_run_row(rid, evs) for rid, evs in sorted(groups.items())]
    return pl.DataFrame(rows)


def self_test_judgements(ledger: Ledger) -> pl.DataFrame:
    """Each time a self_tests arm ran its own tests: did they pass, and was the code right (hidden)?"""
    rows = []
    groups: dict[str, list[Event]] = {}
    for e in ledger.events():
        if e.run_id.startswith("arms/") and e.run_id.split("/")[3] == "self_tests":
            groups.setdefault(e.run_id, []).append(e)
    for rid, evs in groups.items():
        hidden = {s.candidate: s.correct for s in outcomes.scores(evs)}
        for e in evs:
            note = str(e.detail.get("note", "")) if e.role == Role.REFLECTOR else ""
            if note.startswith("{") and "self_tests" in note:
                j = json.loads(note)
                if j["self_tests"] in ("pass", "fail") and j["candidate"] in hidden:
                    rows.append(
                        {
                            "run": rid,
                            "round": e.round,
                            "own_pass": j["self_tests"] == "pass",
                            "hidden_pass": hidden[j["candidate"]],
                        }
                    )
    return pl.DataFrame(
        rows, schema={"run": pl.Utf8, "round": pl.Int64, "own_pass": pl.Boolean, "hidden_pass": pl.Boolean}
    )


@dataclass(frozen=True, kw_only=True)
class ArmRow:
    arm: str
    jobs: int
    status: str  # "" or "not available"
    success: Interval | None = None
    visible: Interval | None = None
    gap: Interval | None = None
    broken_first: Interval | None = None
    broken_start: Interval | None = None
    coverage: Interval | None = None  # wrong at the end (hidden) and caught by the visible tests
    gains: tuple[Interval, ...] = ()
    rounds: Interval | None = None
    rollback: float = 0.0
    escalation: Interval | None = None
    incomplete: Interval | None = None
    tokens_per_success: Interval | None = None
    calls_per_success: Interval | None = None
    spend: dict[str, float] | None = None


def _ratio(num: np.ndarray, den: np.ndarray, seed: int = 0) -> Interval | None:
    if den.sum() == 0:
        return None
    idx = resample_indices(len(num), 1000, seed)
    n, d = num[idx].sum(axis=1), den[idx].sum(axis=1)
    draws = np.where(d > 0, n / np.maximum(d, 1), np.nan)
    draws = draws[~np.isnan(draws)]
    low, high = np.quantile(draws, [0.025, 0.975])
    return Interval(float(num.sum() / den.sum()), float(low), float(high))


def _mean(x: np.ndarray) -> Interval | None:
    return bootstrap_mean(x) if x.size else None


def table(frame: pl.DataFrame, rounds: int = 4) -> list[ArmRow]:
    """Per-arm metrics with 95% bootstrap intervals over jobs (see the module docstring)."""
    out = []
    for arm in frame["arm"].unique(maintain_order=True).to_list():
        f = frame.filter(pl.col("arm") == arm)
        ran = f.filter(pl.col("status") != "not available")
        if ran.height == 0:
            out.append(ArmRow(arm=arm, jobs=f.height, status="not available"))
            continue
        correct = ran["correct"].cast(pl.Float64).to_numpy()
        visible = ran["visible"].cast(pl.Float64).to_numpy()
        first, start = ran.filter(pl.col("first")), ran.filter(pl.col("start"))
        wrong = ran.filter(~pl.col("correct"))
        held = np.array([[_at(s, r) for r in range(rounds + 1)] for s in ran["scores"].to_list()], dtype=float)
        gains = tuple(bootstrap_mean(held[:, r] - held[:, r - 1]) for r in range(1, rounds + 1))
        children, rolled = int(ran["children"].sum()), int(ran["rolled_back"].sum())
        spend = {
            f"{k}_{agg}": float(getattr(ran[k], agg)())
            for k in ("tokens", "calls", "seconds")
            for agg in ("mean", "max")
        }
        limit = next((json.loads(x) for x in ran["limit"].to_list() if x), None)
        if limit:
            spend |= {
                f"limit_{k}": float(limit[k if k != "seconds" else "wall_seconds"])
                for k in ("tokens", "calls", "seconds")
            }
        out.append(
            ArmRow(
                arm=arm,
                jobs=ran.height,
                status="",
                success=bootstrap_mean(correct),
                visible=bootstrap_mean(visible),
                gap=bootstrap_mean(visible - correct),
                broken_first=_mean((~first["correct"]).cast(pl.Float64).to_numpy()),
                broken_start=_mean((~start["correct"]).cast(pl.Float64).to_numpy()),
                coverage=_mean((~wrong["visible"]).cast(pl.Float64).to_numpy()),
                gains=gains,
                rounds=bootstrap_mean(ran["rounds"].cast(pl.Float64).to_numpy()),
                rollback=rolled / children if children else 0.0,
                escalation=bootstrap_mean(ran["escalated"].cast(pl.Float64).to_numpy()),
                incomplete=bootstrap_mean((ran["status"] == "incomplete").cast(pl.Float64).to_numpy()),
                tokens_per_success=_ratio(ran["tokens"].cast(pl.Float64).to_numpy(), correct),
                calls_per_success=_ratio(ran["calls"].cast(pl.Float64).to_numpy(), correct),
                spend=spend,
            )
        )
    return out


def _at(scores: list[Any], r: int) -> bool:
    """The held state's correctness after round r (a job that stopped earlier holds its last)."""
    val = False
    for rr, c in scores:
        if rr <= r:
            val = bool(c)
    return val


def flips(frame: pl.DataFrame, arm: str) -> pl.DataFrame:
    """The engine accounting's transition matrix per round for one arm (jobs as units)."""
    f = frame.filter((pl.col("arm") == arm) & (pl.col("status") != "not available"))
    rows = [
        {"case": run, "round": int(r), "correct": bool(c)}
        for run, s in zip(f["run"], f["scores"], strict=True)
        for r, c in s
    ]
    if not rows:
        raise ValueError(f"arm {arm!r} has no scored jobs")
    return accounting.transitions(pl.DataFrame(rows))
