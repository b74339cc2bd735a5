"""The arms of "is reflection worth it?" as strategies on the one engine.

Each arm proposes through a `Policy` (simulated or a model) and declares `upper`, the most
one proposal may cost (so the engine reserves it through `Budget.paid` before asking), and
how the engine should run it (`keep`, `stop_at_green`, `max_rounds`):

| arm | per round | external feedback | engine keep |
|---|---|---|---|
| direct | one draft in round 1, then nothing | none | progress |
| best_of_n | n drafts in round 1 as rival children; the engine keeps the best on the visible tests | selection only | progress |
| reflect | revise with the failing visible tests' messages (bounded) | visible tests | no_worse |
| self_refine | draft; then the model critiques its own code and refines (≤ 4 rounds) | none | always |
| eval_opt | draft; then a separate critic call accepts or asks for a rewrite | none | always |
| self_tests | draft + the model writes tests; then its own tests' failures drive revisions | its own tests | always |
| stronger | one draft by a second model | none | progress |

Intrinsic arms (self_refine, eval_opt, self_tests) keep every child ("always") and ignore
the visible verdict, which is still recorded: the gap between what they accept and what
the visible and hidden tests say is the measurement. Their own check stops a case through a
case rule (`Arm.case_rules`: `own_check.OwnCheckAccepts`), not by idling. `self_tests` asks
the engine to run its own tests first (an observation: `own_check.own_tests_probe`), then
records, per round, the candidate its own tests judged and whether they passed
(Proposal.note, JSON), so the false-positive rate (own tests pass, hidden tests fail) is
counted from the ledger.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from labkit.core.types import Usage
from labkit.experiments.arms.own_check import (
    OwnCheckAccepts,
    own_tests_probe,
    own_tests_seen,
    self_test_suite,
)
from labkit.experiments.arms.policy import Act, Policy, evidence_of
from labkit.loop.engine.decide import Keep
from labkit.loop.engine.stopping import Rule
from labkit.loop.engine.strategy import Child, Proposal, Situation

__all__ = ["ARMS", "Arm", "make_arm"]

ARMS = ("direct", "best_of_n", "reflect", "self_refine", "eval_opt", "self_tests", "stronger")
CALL_TOKENS = 1024  # upper bound of one call's tokens (prompt + reply) reserved per call
CALL_WALL = 120.0  # upper bound of one call's wall seconds


def _upper(calls: int) -> Usage:
    return Usage(tokens=calls * CALL_TOKENS, calls=calls, wall_seconds=calls * CALL_WALL, cost_units=float(calls))


def _shown(act: Act) -> str:
    """What the ledger keeps of one call: the prompt as sent (if any) and the reply."""
    return f"<prompt>\n{act.prompt}\n</prompt>\n{act.text}" if act.prompt else act.text


@dataclass(kw_only=True)
class Arm:
    """One arm: a strategy the engine asks each round. One instance per (case, run)."""

    form: str
    policy: Policy
    n: int = 1  # best_of_n: samples; others: unused
    max_rounds: int = 4
    accepted: set[str] = field(default_factory=set)  # cases whose intrinsic check accepted the code
    tests: dict[str, str] = field(default_factory=dict)  # self_tests: each case's own test text

    @property
    def name(self) -> str:
        return f"{self.form} ({self.policy.name})"

    @property
    def simulated(self) -> bool:
        return self.policy.simulated

    @property
    def keep(self) -> Keep:
        if self.form in ("self_refine", "eval_opt", "self_tests"):
            return "always"
        return "no_worse" if self.form == "reflect" else "progress"  # reflect holds its last attempt to reflect on

    @property
    def stop_at_green(self) -> bool:
        return self.keep != "always"

    @property
    def rounds(self) -> int:
        return 1 if self.form in ("direct", "best_of_n", "stronger") else self.max_rounds

    @property
    def upper(self) -> Usage:
        calls = {"best_of_n": self.n, "self_refine": 2, "eval_opt": 2}.get(self.form, 1)
        if self.form == "self_tests" and not self.tests:  # round 1 also writes the tests
            calls = 2
        return _upper(calls)  # its own tests run as the engine's observation, not in the proposal

    @property
    def case_rules(self) -> tuple[Rule, ...]:
        """An intrinsic arm's case stops once its own check accepted the code."""
        return (OwnCheckAccepts(self.accepted),) if self.keep == "always" else ()

    def propose(self, s: Situation) -> Proposal:
        first = s.round == 1
        if self.form in ("direct", "stronger"):
            return self._one(self.policy.draft(s, 0), "draft") if first else Proposal(note="one sample only")
        if self.form == "best_of_n":
            if not first:
                return Proposal(note="the n samples were drawn in round 1")
            acts = [self.policy.draft(s, k) for k in range(self.n)]
            return self._many(acts, "sample")
        if self.form == "reflect":
            if s.state in ("stub", "start"):  # a stub's failure says nothing yet: the first answer is a draft
                return self._one(self.policy.draft(s, 0), "draft")
            return self._one(self.policy.revise(s, evidence_of(s)), "reflect")
        if self.form in ("self_refine", "eval_opt"):
            if first and s.state in ("stub", "start"):
                return self._one(self.policy.draft(s, 0), "draft")
            crit = self.policy.critique(s, critic=self.form == "eval_opt")
            if crit.ok:
                self.accepted.add(s.case)
                return Proposal(raw=_shown(crit), usage=crit.usage, note="critique accepts the code")
            return self._one(self.policy.refine(s, crit.text), "refine", before=crit)
        if self.form == "self_tests":
            return self._self_tests(s, first)
        raise ValueError(f"unknown arm {self.form!r}; arms are {ARMS}")

    def _self_tests(self, s: Situation, first: bool) -> Proposal:
        wrote: Act | None = None
        if s.case not in self.tests:
            wrote = self.policy.write_tests(s)
            self.tests[s.case] = wrote.text
        if first and s.state in ("stub", "start"):
            return self._one(self.policy.draft(s, 0), "draft", before=wrote)
        spent, raw = (wrote.usage, _shown(wrote)) if wrote is not None else (Usage(), "")
        suite = self_test_suite(self.tests[s.case])
        if suite is None:
            self.accepted.add(s.case)
            note = json.dumps({"self_tests": "unusable", "candidate": s.candidate.digest})
            return Proposal(usage=spent, raw=raw, note=note)
        seen = own_tests_seen(s, suite)
        if seen is None:  # the engine runs them first (an observation), then asks again
            return Proposal(experiment=own_tests_probe(self.tests[s.case]), usage=spent, raw=raw)
        judged: dict[str, Any] = {"self_tests": "pass" if seen.passed else "fail", "candidate": s.candidate.digest}
        if seen.passed:
            self.accepted.add(s.case)
            return Proposal(note=json.dumps(judged))
        out = self._one(self.policy.revise(s, seen.failing[:1200]), "revise")
        return Proposal(
            children=out.children, raw=out.raw, usage=out.usage, failure=out.failure, note=json.dumps(judged)
        )

    def _one(self, act: Act, source: str, before: Act | None = None) -> Proposal:
        usage = act.usage + (before.usage if before else Usage())
        raw = "\n---\n".join(_shown(a) for a in (before, act) if a is not None)
        if act.candidate is None:
            return Proposal(failure=act.error or "reply has no usable code", raw=raw, usage=usage)
        child = Child(target=act.candidate, name=act.state or f"model:{act.candidate.digest[:8]}", source=source)
        return Proposal(children=(child,), raw=raw, usage=usage, note=source)

    def _many(self, acts: list[Act], source: str) -> Proposal:
        usage = sum((a.usage for a in acts), Usage())
        children = tuple(
            Child(target=a.candidate, name=a.state or f"model:{a.candidate.digest[:8]}", source=f"{source}{k}")
            for k, a in enumerate(acts)
            if a.candidate is not None
        )
        return Proposal(
            children=children,
            raw="\n---\n".join(_shown(a) for a in acts),
            usage=usage,
            note=f"{len(children)}/{len(acts)} usable",
        )


def make_arm(kind: str, policy: Policy, *, n: int = 4, max_rounds: int = 4) -> Arm:
    if kind not in ARMS:
        raise ValueError(f"unknown arm {kind!r}; arms are {ARMS}")
    if kind == "self_refine" and max_rounds > 4:
        raise ValueError("self_refine runs at most 4 rounds (Self-Refine's setting)")
    return Arm(form=kind, policy=policy, n=n, max_rounds=max_rounds)
