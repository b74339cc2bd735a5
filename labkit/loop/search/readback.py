"""A frontier search read back from its engine run's ledger: its steps, branches and result.

The search is a configuration of `engine.run` (labkit.loop.search.search_run); it writes only
the engine's events. This module reads them in order and says what the search did, in its
own nouns (labkit.loop.search.frontier):

- the START's preregistration (limits, winner rule, budget limit and reserve) -> "define";
- each round's proposal (REFLECT / IDLE, or a failed generation's ERROR_DECISION) -> "expand":
  the state expanded, children proposed and kept, what its generation cost;
- each child: executed and verified (GENERATE, VERIFY), refused or failed at step 4, or
  not executed for want of budget -> "branch", whose outcome the round's DECIDE gives
  (sealed: kept and green; frontier: kept and queued; not expanded; execute failed; not
  run; quarantined), with its spend, its progress (ΔF with severity against the state it
  was proposed from) and its error class; a sealed branch is also a "seal";
- ERROR_DECISION -> "decision" (and "quarantine"); a budget refusal -> a "decision" at
  "budget" with no error class (an exhausted budget is no POLICY_DENIED refusal);
- the winner's CONFIRM -> "confirm"; the run's STOP -> "stop", with the task's status.

Every step carries the accounts as they stood (the budget's settled events before it), so
spend is never re-priced here. Nothing is re-run: verdicts are the ones VERIFY recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labkit.core.types import Candidate, Verdict
from labkit.grading.checkset import CheckSet, compare
from labkit.grading.verdicts import verdict_from_json
from labkit.loop.control.classify import classify
from labkit.loop.engine.progress import judge
from labkit.loop.engine.recorder import candidate_from_json
from labkit.loop.search.frontier import Branch, Expansion, Sealed, SearchResult, State
from labkit.record.events import BudgetStatus, Event, Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["ReadStep", "Readback", "read_search"]

_SETTLED = (BudgetStatus.SETTLED, BudgetStatus.UNKNOWN, BudgetStatus.OVERRUN)
# the engine's stop rules, as the search's reasons
_REASONS = {"budget": "budget_exhausted", "frontier-empty": "frontier_empty", "round-cap": "max_expansions",
            "stalled": "stalled", "policy-denied": "policy_denied", "quarantine": "integrity_or_effect_unresolved",
            "integrity": "integrity_or_effect_unresolved"}  # fmt: skip


@dataclass
class ReadStep:
    """One step of the search as read back, with the accounts as they stood after it."""

    kind: Kind
    detail: dict[str, Any]
    search_spent: float
    confirm_spent: float
    seq: int  # the engine event it was read from (its number in the ledger)


@dataclass
class _Node:
    path: tuple[str, ...]
    verdict: Verdict
    candidate: Candidate

    @property
    def hypothesis(self) -> str:
        return " > ".join(self.path)


@dataclass
class Readback:
    """What `read_search` found: the steps in order and the result they add up to."""

    steps: list[ReadStep]
    result: SearchResult
    limit: float
    reserve: float


@dataclass(kw_only=True)
class _Reader:
    ledger: Ledger
    run_id: str
    checks: CheckSet
    environment: str
    limits: dict[str, int] = field(default_factory=dict)
    search: float = 0.0
    confirm: float = 0.0
    steps: list[ReadStep] = field(default_factory=list)
    nodes: dict[str, _Node] = field(default_factory=dict)
    queued: set[tuple[str, str]] = field(default_factory=set)
    sealed: list[Sealed] = field(default_factory=list)
    expansions: list[Expansion] = field(default_factory=list)
    branches: list[dict[str, Any]] = field(default_factory=list)  # this run's, in order (mutable until decided)
    round_branches: list[dict[str, Any]] = field(default_factory=list)
    reached: dict[int, _Node] = field(default_factory=dict)  # id of a verified branch -> the state it reached
    expanded: _Node | None = None
    mark: float = 0.0  # search spend when the current branch began
    budget_said: bool = False
    pending: tuple[str, str, str] | None = None  # the child executed last: (name, digest, output hash)
    stopped: dict[str, Any] | None = None  # the run's STOP detail
    start_state: str = "start"
    seq: int = 0  # the event being read
    stop_seq: int = 0
    prices: dict[str, float] = field(default_factory=dict)
    limit: float = math.inf
    reserve: float = 0.0

    def step(self, kind: Kind, detail: dict[str, Any]) -> dict[str, Any]:
        self.steps.append(ReadStep(kind, detail, self.search, self.confirm, self.seq))
        return detail

    def state_key(self, node: _Node) -> str:
        return State(node.candidate, self.environment, node.hypothesis, len(node.path)).key

    def branch(self, name: str, **d: Any) -> dict[str, Any]:
        assert self.expanded is not None
        parent = self.expanded
        b = {"expansion": len(self.expansions), "name": name, "parent": self.state_key(parent), "state": "",
             "depth": len(parent.path) + 1, "candidate": "", "outcome": "", "reason": "", "spent": self.search - self.mark,
             "progress": {}, "error_class": "", "resolved": False, **d}  # fmt: skip
        self.mark = self.search
        self.branches.append(b)
        self.round_branches.append(b)
        return self.step(Kind.BRANCH, b)

    def budget_stop(self, why: str) -> None:
        if not self.budget_said:
            self.budget_said = True
            self.step(Kind.ERROR_DECISION, {"where": "budget", "error_class": "", "reason": why, "action": "stop"})

    # -- the events ------------------------------------------------------------------------

    def read(self, e: Event) -> None:
        self.seq, d = e.seq, dict(e.detail)
        if e.role == Role.BUDGET:
            if d.get("status") in _SETTLED:
                if d.get("from_reserve"):
                    self.confirm += e.cost_units
                else:
                    self.search += e.cost_units
            elif d.get("status") == BudgetStatus.REFUSED and not d.get("from_reserve"):
                self.budget_stop(f"{e.kind} does not fit: short of {', '.join(d.get('short') or [])}")
            return
        key = (e.role, e.kind)
        if key == (Role.EXPERIMENT, Kind.START):
            self.limits, self.prices = dict(d.get("limits") or {}), dict(d.get("prices") or {})
            raw = d.get("limit")
            self.limit, self.reserve = math.inf if raw is None else float(raw), float(d.get("reserve") or 0.0)
            self.step(
                Kind.DEFINE,
                {
                    "rule": d.get("winner_rule", ""),
                    "limits": self.limits,
                    "limit": d.get("limit"),
                    "reserve": d.get("reserve", 0.0),
                    "strategy": d.get("strategy", ""),
                },
            )
        elif key == (Role.EXECUTOR, Kind.GENERATE) and e.round == 0:
            self.start_state = str(d.get("state") or "start")
        elif key == (Role.VALIDATOR, Kind.VERIFY) and e.round == 0:
            v = verdict_from_json(e.evidence_value["verdict"])
            self.nodes.setdefault(self.start_state, _Node((), v, self.candidate(e.input_hash)))
        elif key in ((Role.REFLECTOR, Kind.REFLECT), (Role.REFLECTOR, Kind.IDLE)):
            self.expand(e.round, d, int(d.get("children") or 0), str(d.get("failure") or ""))
        elif key == (Role.EXECUTOR, Kind.GENERATE) and e.round > 0:
            self.pending = (str(d.get("proposal", "")), str(d.get("candidate", "")), e.output_hash)
        elif key == (Role.VALIDATOR, Kind.VERIFY):
            self.child_verdict(e)
        elif key == (Role.DECISION, Kind.ERROR_DECISION):
            self.failed(e.round, d)
        elif key == (Role.DECISION, Kind.DECIDE):
            self.decided(d)
        elif key == (Role.DECISION, Kind.CONFIRM):
            self.step(
                Kind.CONFIRM,
                {
                    "seal": self.seal_of(str(d.get("state"))),
                    "confirmed": d.get("confirmed"),
                    "reason": d.get("reason", ""),
                    "spent": e.cost_units,
                    "state": d.get("state"),
                },
            )
        elif key == (Role.DECISION, Kind.STOP) and d.get("run"):
            self.stopped, self.stop_seq = d, e.seq

    def candidate(self, output_hash: str) -> Candidate:
        return candidate_from_json(self.ledger.get(output_hash))

    def expand(self, rnd: int, d: dict[str, Any], proposed: int, failure: str) -> None:
        if len(self.expansions) == rnd:  # already read (a failed generation said so first)
            return
        node = self.nodes[str(d.get("state") or "start")]
        self.expanded, self.round_branches = node, []
        kept = min(proposed, int(self.limits.get("max_children", proposed)))
        spent = self.search - self.mark
        exp = Expansion(
            index=rnd,
            state=self.state_key(node),
            hypothesis=node.hypothesis,
            depth=len(node.path),
            proposed=proposed,
            kept=kept,
            generate_spent=spent,
            failure=failure,
        )
        self.expansions.append(exp)
        self.mark = self.search
        self.step(
            Kind.EXPAND,
            {
                "spent": spent,
                "state": exp.state,
                "hypothesis": exp.hypothesis,
                "depth": exp.depth,
                "proposed": proposed,
                "kept": kept,
                "truncated": proposed - kept,
                "failure": failure,
            },
        )

    def child_verdict(self, e: Event) -> None:
        assert self.expanded is not None and self.pending is not None
        name, digest, out = self.pending
        v = verdict_from_json(e.evidence_value["verdict"])
        progress = judge(compare(self.checks.read(self.expanded.verdict.evidence), self.checks.read(v.evidence)))
        cls = classify(v)
        node = _Node((*self.expanded.path, name), v, self.candidate(out))
        self.nodes.setdefault(name, node)
        b = self.branch(
            name,
            state=self.state_key(node),
            candidate=digest,
            progress=progress.as_dict(),
            resolved=v.resolved,
            error_class=cls.error_class.value if cls else "",
        )
        self.reached[id(b)] = node
        self.pending = None

    def failed(self, rnd: int, d: dict[str, Any]) -> None:
        where, action, child = d.get("where"), d.get("action"), str(d.get("child", ""))
        words = {"continue": "end this branch; other hypotheses continue"}.get(str(action), action)
        if where == "propose":
            self.step(Kind.ERROR_DECISION, {**_decision(d), "action": words})
            self.expand(rnd, {"state": self._state_of(d)}, 0, f"{d.get('error_class')}: {d.get('reason')}")
        elif where == "execute":
            self.pending = None
            outcome = "quarantined" if action == "quarantine" else "execute failed"
            self.branch(child, outcome=outcome, reason=str(d.get("reason")), error_class=d.get("error_class"))
            self.step(Kind.ERROR_DECISION, {**_decision(d), "action": words})
        else:  # an alarm at verification: the branch was read at its VERIFY
            b = self.round_branches[-1]
            b.update(outcome="quarantined", reason=str(d.get("reason")), error_class=d.get("error_class"))
            self.step(Kind.ERROR_DECISION, {**_decision(d), "action": words})
        if action == "quarantine":
            self.step(Kind.QUARANTINE, {"reason": d.get("reason")})

    def _state_of(self, d: dict[str, Any]) -> str:
        digest = d.get("candidate")
        return next((n for n, node in self.nodes.items() if node.candidate.digest == digest), self.start_state)

    def decided(self, d: dict[str, Any]) -> None:
        by_name = {str(c.get("name")): c for c in d.get("children") or []}
        for b in self.round_branches:
            c = by_name.get(b["name"])
            if c is None or b["outcome"]:
                continue
            node = self.reached.pop(id(b))
            if c.get("decision") != "keep":
                b.update(
                    outcome="quarantined" if c.get("rule") == "integrity" else "not expanded", reason=c.get("reason")
                )
            elif node.verdict.resolved:
                self.sealed.append(
                    Sealed(
                        order=len(self.sealed),
                        state=State(node.candidate, self.environment, node.hypothesis, len(node.path), b["parent"]),
                        route=b["name"],
                        evidence=node.verdict.evidence.digest,
                        suite=node.verdict.evidence.suite,
                        validator=node.verdict.evidence.validator,
                    )
                )
                b.update(outcome="sealed", reason="all required checks pass", error_class="")
                i = next(i for i, s in enumerate(self.steps) if s.detail is b)
                s = self.sealed[-1]
                seal = {"name": b["name"], "state": b["state"], "candidate": b["candidate"], "evidence": s.evidence,
                        "seal": s.digest}  # fmt: skip
                at = self.steps[i]
                self.steps.insert(i + 1, ReadStep(Kind.SEAL, seal, at.search_spent, at.confirm_spent, at.seq))
            elif (node.candidate.digest, b["name"]) in self.queued or len(node.path) >= self.limits.get("max_depth", 3):
                b.update(outcome="not expanded", reason="state already visited or at max depth")
            else:
                self.queued.add((node.candidate.digest, b["name"]))
                b.update(outcome="frontier", reason=f"not verified; {c.get('reason')}")
        unrun = d.get("unexecuted") or []
        if unrun:  # the first child the budget could not pay for: the run stopped there
            need = self.prices.get(str(Kind.EXECUTE), 0.0) + self.prices.get(str(Kind.VERIFY), 0.0)
            left = self.limit - self.reserve - self.search - self.confirm
            why = f"execute + verify cost {need:g} but {left:g} left"
            self.branch(str(unrun[0]), outcome="not run", reason=f"{why}: not executed")
            self.budget_stop(f"branch {unrun[0]!r}: {why}")

    def seal_of(self, state: str) -> str:
        return next((s.digest for s in self.sealed if s.route == state), "")


def _decision(d: dict[str, Any]) -> dict[str, Any]:
    return {"where": d.get("where"), "error_class": d.get("error_class"), "reason": d.get("reason")}


def read_search(ledger: Ledger, run_id: str, checks: CheckSet, environment: str = "") -> Readback:
    """The search `run_id` (an engine run with a frontier) as its steps and its result."""
    events = ledger.events(run_id)
    start = next((e for e in events if (e.role, e.kind) == (Role.EXPERIMENT, Kind.START)), None)
    if start is None or "expand" not in start.detail:
        raise ValueError(f"run {run_id!r} has no search in {ledger.path}")
    r = _Reader(ledger=ledger, run_id=run_id, checks=checks, environment=environment)
    for e in events:
        r.read(e)
    stop = r.stopped or {}
    rule = str(stop.get("rule", ""))
    reason = _REASONS.get(rule, f"stopped: {rule}")
    if rule == "error-class":  # the class whose permissions left only a stop (e.g. INFRASTRUCTURE retried out)
        said = [s.detail for s in r.steps if s.kind == Kind.ERROR_DECISION and s.detail.get("action") == "stop"]
        reason = f"stopped: {said[-1]['error_class'] if said else rule}"
    r.seq = r.stop_seq
    if rule == "budget":
        r.budget_stop(str(stop.get("reason", "")))
    confirm = next((s.detail for s in r.steps if s.kind == Kind.CONFIRM), None)
    winner = next((s for s in r.sealed if confirm and s.route == confirm.get("state")), None)
    confirmed = confirm.get("confirmed") if confirm else None
    status = "success" if confirmed is True else "incomplete"
    if winner is not None and confirmed is not True:
        reason = "confirmation_unfunded" if confirmed is None else "confirmation_failed"
    r.step(
        Kind.STOP,
        {
            "status": status,
            "reason": reason,
            "winner": winner.route if winner else "",
            "seal": winner.digest if winner else "",
            "confirmed": confirmed,
            "sealed": [s.route for s in r.sealed],
        },
    )
    define = r.steps[0].detail
    start_node = r.nodes[r.start_state]
    branches = tuple(Branch(**b) for b in r.branches)
    result = SearchResult(
        run_id=run_id,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        rule=str(define.get("rule", "")),
        winner=winner,
        confirmed=confirmed,
        sealed=tuple(r.sealed),
        expansions=tuple(r.expansions),
        branches=branches,
        baseline=start_node.verdict,
        baseline_run=checks.read(start_node.verdict.evidence),
    )
    return Readback(r.steps, result, r.limit, r.reserve)
