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
the visible and hidden tests say is the measurement. `self_tests` records, per round, the
candidate its own tests judged and whether they passed (Proposal.note, JSON), so the
false-positive rate (own tests pass, hidden tests fail) is counted from the ledger.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from labkit.core.types import Usage
from labkit.experiments.arms.policy import Act, Policy, evidence_of
from labkit.grading.acceptance import AcceptanceSuite, SuiteError
from labkit.loop.engine.decide import Keep
from labkit.loop.engine.strategy import Child, Proposal, Situation

__all__ = ["ARMS", "Arm", "make_arm", "self_test_suite"]

ARMS = ("direct", "best_of_n", "reflect", "self_refine", "eval_opt", "self_tests", "stronger")
CALL_TOKENS = 1024  # upper bound of one call's tokens (prompt + reply) reserved per call
CALL_WALL = 120.0  # upper bound of one call's wall seconds
SELF_TESTS = "tests/test_self.py"


def _upper(calls: int, wall: float = 0.0) -> Usage:
    return Usage(tokens=calls * CALL_TOKENS, calls=calls, wall_seconds=calls * CALL_WALL + wall, cost_units=float(calls))


def _shown(act: Act) -> str:
    """What the ledger keeps of one call: the prompt as sent (if any) and the reply."""
    return f"<prompt>\n{act.prompt}\n</prompt>\n{act.text}" if act.prompt else act.text


def self_test_suite(text: str) -> AcceptanceSuite | None:
    """The model's own tests as a suite (every top-level test_* function), or None if unusable."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    if not names:
        return None
    try:
        return AcceptanceSuite("self-written", {SELF_TESTS: text}, tuple(f"{SELF_TESTS}::{n}" for n in names), ())
    except SuiteError:
        return None


@dataclass
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
        wall = 90.0 if self.form == "self_tests" else 0.0  # running its own tests
        return _upper(calls, wall)

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
        if s.case in self.accepted:
            return Proposal(note="accepted by its own check: stopped")
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
        spent = wrote.usage if wrote is not None else Usage()
        suite = self_test_suite(self.tests[s.case])
        if suite is None:
            self.accepted.add(s.case)
            note = json.dumps({"self_tests": "unusable", "candidate": s.candidate.digest})
            return Proposal(usage=spent, raw=_shown(wrote) if wrote else "", note=note)
        from labkit.grading.validator import Validator

        verdict = Validator().run(s.candidate, suite)
        spent = spent + Usage(wall_seconds=verdict.evidence.wall_seconds)
        judged: dict[str, Any] = {"self_tests": "pass" if verdict.resolved else "fail", "candidate": s.candidate.digest}
        if verdict.resolved:
            self.accepted.add(s.case)
            return Proposal(usage=spent, raw=_shown(wrote) if wrote else "", note=json.dumps(judged))
        failing = "\n".join(f"- {r.nodeid}: {r.outcome}: {r.message[:300]}" for r in verdict.evidence.results if r.outcome != "passed")
        out = self._one(self.policy.revise(s, failing[:1200]), "revise", before=wrote)
        return Proposal(out.children, raw=out.raw, usage=out.usage + Usage(wall_seconds=verdict.evidence.wall_seconds),
                        failure=out.failure, note=json.dumps(judged))  # fmt: skip

    def _one(self, act: Act, source: str, before: Act | None = None) -> Proposal:
        usage = act.usage + (before.usage if before else Usage())
        raw = "\n---\n".join(_shown(a) for a in (before, act) if a is not None)
        if act.candidate is None:
            return Proposal(failure=act.error or "reply has no usable code", raw=raw, usage=usage)
        child = Child(target=act.candidate, name=act.state or f"model:{act.candidate.digest[:8]}", source=source)
        return Proposal((child,), raw=raw, usage=usage, note=source)

    def _many(self, acts: list[Act], source: str) -> Proposal:
        usage = sum((a.usage for a in acts), Usage())
        children = tuple(
            Child(target=a.candidate, name=a.state or f"model:{a.candidate.digest[:8]}", source=f"{source}{k}")
            for k, a in enumerate(acts) if a.candidate is not None
        )  # fmt: skip
        return Proposal(children, raw="\n---\n".join(_shown(a) for a in acts), usage=usage, note=f"{len(children)}/{len(acts)} usable")


def make_arm(kind: str, policy: Policy, *, n: int = 4, max_rounds: int = 4) -> Arm:
    if kind not in ARMS:
        raise ValueError(f"unknown arm {kind!r}; arms are {ARMS}")
    if kind == "self_refine" and max_rounds > 4:
        raise ValueError("self_refine runs at most 4 rounds (Self-Refine's setting)")
    return Arm(kind, policy, n=n, max_rounds=max_rounds)
