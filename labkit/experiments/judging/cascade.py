"""The selector cascade (seed 002 §2): hard checks, then a blinded rubric reviewer, then the owner.

1. **Hard checks**, in the seed's order: compile (byte-compile, nothing executed), the
   protected tests (labkit's validator, paid through the run's budget), constraints (the
   rule's patch cap). A candidate stops at its first failure and never reaches a later tier.
   They are one `engine.run` with a frontier (`labkit.experiments.judging.hard_checks`).
2. **Rubric reviewer**: sees only the survivors' diffs, as "candidate 1", "candidate 2", …
   in an order drawn from the rule's seed and again reversed; every pair whose verdict flips
   with the order is kept as a disagreement (never averaged away) and goes to the owner.
3. **Owner**: business trade-offs (e.g. "bounded memory before smallest change") decide
   among the reviewer's contested finalists, by priorities written in the rule.

The rule — tiers, cap, rubric, floor, margin, owner priorities, blinding seed — is written
to the ledger (a SELECT event, tier "rule", with its digest) as the run's first event,
before any candidate exists; `run_cascade` refuses a rule whose digest differs or a run
whose candidates were recorded first. A reviewer score can never bring back a candidate
that failed a hard check: the reviewer never sees it, and `_winner` refuses one anyway.

The reviewer and owner here are scripted (labelled so); every validation is real.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any, Protocol

from labkit.core import patch as patches
from labkit.core.errors import SelectionError
from labkit.core.paths import DATA
from labkit.core.types import Patch, digest
from labkit.core.versions import package_versions
from labkit.experiments.judging.hard_checks import Offered, OfferedChange, Tiered, hard_tier
from labkit.record.events import Kind, Role

if TYPE_CHECKING:  # the engine, cases and grading load when a cascade runs (`run_cascade`, `measure`),
    # not when a page reads the recording (~0.3 s of imports on judge_bias's open)
    from labkit.grading.cases import Case
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = [
    "CASCADE_DIR",
    "COMMAND",
    "CascadeResult",
    "DEPENDS_ON",
    "Offered",
    "OfferedChange",
    "RECORDING",
    "Registration",
    "Reviewer",
    "ScriptedReviewer",
    "SelectionRule",
    "Tiered",
    "as_json",
    "load_entries",
    "measure",
    "owner_key",
    "recorded",
    "register",
    "run_cascade",
    "ungated_pick",
]

DEPENDS_ON = ("pytest",)  # the packages the recording's numbers depend on

CASCADE_DIR = DATA / "selector_cascade"
RECORDING = CASCADE_DIR / "recording.json"
COMMAND = "python -m labkit.experiments.judging.cascade"
_CANDIDATE_KINDS = {str(Kind.GENERATE), str(Kind.VERIFY), str(Kind.SCORE)}


@dataclass(frozen=True, kw_only=True)
class SelectionRule:
    """Everything that decides the winner, fixed before any candidate exists."""

    name: str = "hard checks, then blinded rubric, then owner"
    hard: tuple[str, ...] = ("compile", "tests", "constraints")
    patch_cap: tuple[tuple[str, int], ...] = (("max_hunks", 2), ("max_lines", 8))
    rubric: tuple[str, ...] = ("correctness", "clarity", "thoroughness")
    floor: float = 2.5  # a survivor whose mean is below this in BOTH orders is dropped by the reviewer
    margin: float = 0.5  # finalists within this of the best mean are contested: the owner decides
    owner: tuple[str, ...] = ("bounds_memory", "smallest_change")  # the owner's declared trade-off
    blind_seed: int = 7

    @property
    def digest(self) -> str:
        return digest(json.dumps(asdict(self), sort_keys=True))


@dataclass(frozen=True)
class Registration:
    run_id: str
    rule: str  # the digest written
    seq: int  # the ledger position of the rule event


class Reviewer(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def score(self, diff: str, slot: int) -> Mapping[str, float]: ...


@dataclass(frozen=True)
class ScriptedReviewer:
    """A rubric reviewer with the two biases of the judging chapter, as parameters (scripted).

    thoroughness rises with lines added (verbosity), clarity falls with hunks, correctness is
    flat; `position` is added to every criterion of the candidate shown first."""

    position: float = 1.0
    name: str = "scripted rubric reviewer (position and verbosity bias)"
    simulated: bool = True

    def score(self, diff: str, slot: int) -> Mapping[str, float]:
        size = patches.size(Patch(diff))
        bonus = self.position if slot == 0 else 0.0
        return {
            "correctness": 3.0 + bonus,
            "clarity": max(1.0, 5.0 - size.hunks) + bonus,
            "thoroughness": min(5.0, 1.0 + size.added / 2) + bonus,
        }


@dataclass(frozen=True, kw_only=True)
class CascadeResult:
    run_id: str
    rule: str
    winner: str
    decided_by: str  # "reviewer" (uncontested) or "owner" (a trade-off among contested finalists)
    tiers: tuple[Tiered, ...]
    disagreements: tuple[str, ...]
    reviewer: str
    cost_units: float
    simulated: tuple[str, ...] = field(default=("reviewer", "owner"))


def register(rule: SelectionRule, ledger: Ledger, run_id: str) -> Registration:
    """Write the rule as the run's first event. Refused once anything of the run exists."""
    if ledger.events(run_id):
        raise SelectionError(f"run {run_id!r} already has events: the selection rule must come before any candidate")
    ev = ledger.record(
        run_id,
        0,
        Role.DECISION,
        Kind.SELECT,
        detail={"tier": "rule", "rule": rule.digest, "passed": True, "reason": json.dumps(asdict(rule))},
    )
    return Registration(run_id, rule.digest, ev.seq)


def _check_registered(rule: SelectionRule, reg: Registration, ledger: Ledger) -> None:
    if rule.digest != reg.rule:
        raise SelectionError(f"the rule given ({rule.digest[:12]}) is not the one registered ({reg.rule[:12]})")
    first = min((e.seq for e in ledger.events(reg.run_id) if e.kind in _CANDIDATE_KINDS), default=None)
    if first is not None and first < reg.seq:
        raise SelectionError(f"run {reg.run_id!r} saw a candidate (event {first}) before its rule (event {reg.seq})")


def load_entries(case: Case) -> list[OfferedChange]:
    """The cache case's three patches and this section's two, with their authors' claims."""
    table = json.loads((CASCADE_DIR / "candidates.json").read_text())
    out = []
    for row in table["candidates"]:
        if "case_patch" in row:
            patch = case.patches[row["case_patch"]]
        else:
            patch = Patch((CASCADE_DIR / row["file"]).read_text(), row["name"])
        out.append(OfferedChange(row["name"], patch, frozenset(row.get("claims", ()))))
    return out


def owner_key(rule: SelectionRule) -> Callable[[Tiered], tuple[int, ...]]:
    """The owner's declared priorities as a sort key (smallest first)."""

    def key(t: Tiered) -> tuple[int, ...]:
        parts = []
        for p in rule.owner:
            parts.append(t.lines if p == "smallest_change" else int(p not in t.claims))
        return tuple(parts)

    return key


def _review(
    reviewer: Reviewer, rule: SelectionRule, alive: Sequence[tuple[Tiered, OfferedChange]]
) -> tuple[dict[str, tuple[float, ...]], list[str]]:
    """Blinded: the reviewer sees diffs only, slot by slot, in the seeded order and reversed."""
    order = list(range(len(alive)))
    random.Random(rule.blind_seed).shuffle(order)
    means: dict[str, list[float]] = {t.name: [] for t, _ in alive}
    for shown in (order, order[::-1]):
        for slot, i in enumerate(shown):
            s = reviewer.score(alive[i][1].patch.diff, slot)
            means[alive[i][0].name].append(sum(s[c] for c in rule.rubric) / len(rule.rubric))
    flips = [
        f"{a} vs {b}"
        for a, b in combinations(sorted(means), 2)
        if (means[a][0] > means[b][0]) != (means[a][1] > means[b][1])
    ]
    return {k: tuple(v) for k, v in means.items()}, flips


def _winner(finalists: Sequence[Tiered]) -> Tiered:
    best = finalists[0]
    if best.failed:  # unreachable by construction; kept as the rule's last line of defence
        raise SelectionError(f"{best.name} failed the hard check {best.failed!r}: no score can select it")
    return best


def _contested(ranked: list[Tiered], flips: Sequence[str], rule: SelectionRule) -> list[Tiered]:
    """The reviewer's best, and every finalist within the margin of it or flipping with it."""
    ranked = sorted(ranked, key=lambda t: -sum(t.reviewer))
    best = ranked[0]
    return [
        t
        for t in ranked
        if sum(best.reviewer) / 2 - sum(t.reviewer) / 2 <= rule.margin
        or " vs ".join(sorted((t.name, best.name))) in flips
    ]


def ungated_pick(entries: Sequence[OfferedChange], rule: SelectionRule, reviewer: Reviewer | None = None) -> str:
    """What the reviewer and owner would pick if the hard checks were skipped (diffs only,
    nothing run): the counterfactual the hard gate exists to prevent."""
    reviewer = reviewer or ScriptedReviewer()
    rows = [
        (
            Tiered(
                name=e.name,
                candidate="",
                failed="",
                reason="",
                lines=patches.size(e.patch).lines,
                claims=tuple(sorted(e.claims)),
            ),
            e,
        )
        for e in entries
    ]
    means, flips = _review(reviewer, rule, rows)
    ranked = [replace(t, reviewer=means[t.name]) for t, _ in rows]
    contested = _contested(ranked, flips, rule)
    return sorted(contested, key=owner_key(rule))[0].name if len(contested) > 1 else contested[0].name


def run_cascade(
    entries: Sequence[OfferedChange],
    case: Case,
    rule: SelectionRule,
    reg: Registration,
    ledger: Ledger,
    *,
    reviewer: Reviewer | None = None,
    checker: Checker | None = None,
    budget: float = 20.0,
) -> CascadeResult:
    """Every entry through the cascade. The hard checks are one `engine.run` (run id
    `<run>/hard`): a breadth frontier expanding the start once, every compiling entry a child,
    validated and decided by the engine (validations paid, 1 unit each; the start's verdict is
    the task's input, unpaid). The reviewer and owner then judge the survivors."""
    from labkit.grading.verdicts import Checker
    from labkit.loop.engine import engine
    from labkit.loop.engine.expand import FrontierLimits
    from labkit.loop.engine.steps import Prices
    from labkit.loop.engine.trace import Task
    from labkit.record.budget import Budget, limits

    _check_registered(rule, reg, ledger)
    reviewer = reviewer or ScriptedReviewer()
    hard_id = f"{reg.run_id}/hard"
    paid = Budget(limits(cost_units=budget), ledger=ledger, run_id=hard_id)
    task = Task(id=case.name, start=case.start, suite=case.suite, hidden=case.hidden, patch_cap=dict(rule.patch_cap))
    offered = Offered(entries)
    out = engine.run(
        [task],
        offered,
        checker or Checker(),
        rounds=1,
        keep="resolved",
        stop_at_green=False,
        ledger=ledger,
        budget=paid,
        run_id=hard_id,
        expand="breadth",
        limits=FrontierLimits(1, max(1, len(entries))),
        prices=Prices(start=False),
    )
    rounds = out.traces[task.id].rounds
    attempts = {a.child.name: a for a in rounds[0].attempts} if rounds else {}

    def log(t: Tiered, tier: str, passed: bool, reason: str, **extra: object) -> None:
        ledger.record(
            reg.run_id,
            0,
            Role.DECISION,
            Kind.SELECT,
            detail={
                "suite": task.suite.digest,
                "case": task.id,
                "slice": task.slice,
                "simulated": True,
                "tier": tier,
                "rule": rule.digest,
                "name": t.name,
                "candidate": t.candidate,
                "passed": passed,
                "reason": reason,
                **extra,
            },
        )

    tiers = {e.name: hard_tier(e, case.start, offered, attempts) for e in entries}
    alive = [(tiers[e.name], e) for e in entries if not tiers[e.name].failed]
    for t in tiers.values():
        log(t, t.failed or "hard", not t.failed, t.reason)
    if not alive:
        raise SelectionError("no candidate passed the hard checks: nothing to select (the task is incomplete)")
    means, flips = _review(reviewer, rule, alive)
    ranked = []
    for t, _ in alive:
        score = means[t.name]
        kept = max(score) >= rule.floor
        tiers[t.name] = t = replace(t, reviewer=score, reached="reviewer")
        log(
            t,
            "reviewer",
            kept,
            "at or above the floor in an order" if kept else "below the floor in both orders",
            scores={f"order {i + 1}": v for i, v in enumerate(score)},
            disagreements=flips,
        )
        if kept:
            ranked.append(t)
    contested = _contested(ranked, flips, rule)
    decided_by = "reviewer"
    if len(contested) > 1:
        decided_by = "owner"
        contested.sort(key=owner_key(rule))
        for t in contested:
            tiers[t.name] = replace(t, reached="owner")
            log(t, "owner", t is contested[0], f"owner priorities {', '.join(rule.owner)}")
    win = _winner(contested)
    log(tiers[win.name], "winner", True, f"decided by the {decided_by}")
    return CascadeResult(
        run_id=reg.run_id,
        rule=rule.digest,
        winner=win.name,
        decided_by=decided_by,
        tiers=tuple(tiers[e.name] for e in entries),
        disagreements=tuple(flips),
        reviewer=reviewer.name,
        cost_units=paid.spent.cost_units,
    )


def recorded() -> dict[str, Any]:
    """The committed run (data/selector_cascade/recording.json), as the page reads it."""
    return dict(json.loads(RECORDING.read_text()))


def measure(
    ledger: Ledger | None = None, run_id: str = "cascade", reviewer: Reviewer | None = None
) -> tuple[CascadeResult, str]:
    """The section's run: the cache case's candidates through the default rule, and the
    counterfactual pick without the hard gate."""
    from labkit.grading.cases import load_case
    from labkit.record.ledger import Ledger

    ledger = ledger if ledger is not None else Ledger()
    case = load_case("cache_isolation")
    rule = SelectionRule()
    reg = register(rule, ledger, run_id)
    entries = load_entries(case)
    return run_cascade(entries, case, rule, reg, ledger, reviewer=reviewer), ungated_pick(entries, rule, reviewer)


def as_json(result: CascadeResult, ungated: str) -> dict[str, Any]:
    out = {"command": COMMAND, "source": "recorded real run (validations real; reviewer and owner scripted)",
           **{k: v for k, v in asdict(result).items() if k != "run_id"}, "ungated_pick": ungated,
           "versions": package_versions(DEPENDS_ON)}  # fmt: skip
    return dict(json.loads(json.dumps(out)))  # as the recording reads back (lists, not tuples)


if __name__ == "__main__":  # regenerate the recording
    RECORDING.write_text(json.dumps(as_json(*measure()), indent=1) + "\n")
    print(f"wrote {RECORDING}")
