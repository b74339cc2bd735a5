"""Dependent changes as a checkpointed sequence: one engine round whose proposal is the steps.

Each step is applied to the last green checkpoint, validated and recorded (a `checkpoint`
event per step). A step that does not apply, breaks a protective test, grows the visible
failures or raises an alarm ends the sequence, and the candidate returns to the last green
checkpoint — which is handed back with every step's evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.types import Candidate, Decision, Patch, Verdict
from labkit.loop.engine import run
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = ["Checkpointed", "Steps", "run_sequence"]


@dataclass(frozen=True)
class Checkpointed:
    """A checkpointed sequence: each step's verdict, and the last green checkpoint held."""

    steps: tuple[tuple[Patch, Verdict | None, str], ...]  # (step, verdict or None, what happened)
    held: Candidate
    verdict: Verdict

    @property
    def green(self) -> int:
        """How many steps were applied and kept."""
        return sum(1 for _, _, what in self.steps if what == "kept")


@dataclass(frozen=True)
class Steps:
    """A strategy that proposes fixed dependent steps once, as one checkpointed sequence."""

    steps: tuple[Patch, ...]
    name: str = "checkpointed sequence"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        if situation.round > 1:
            return Proposal(note="the sequence was proposed in round 1")
        kids = tuple(Child(patch=p, name=f"step {i}", source="sequence") for i, p in enumerate(self.steps, 1))
        return Proposal(children=kids, sequence=True)


def run_sequence(
    candidate: Candidate,
    steps: Sequence[Patch],
    suite: AcceptanceSuite,
    validator: Validator | Checker,
    *,
    ledger: Ledger | None = None,
    run_id: str = "sequence",
) -> Checkpointed:
    """Run `steps` as one checkpointed sequence through the engine (see the module docstring)."""
    task = Task(id=run_id, start=candidate, suite=suite)
    out = run(
        [task],
        Steps(tuple(steps)),
        validator,
        rounds=1,
        keep="no_worse",
        stop_at_green=False,
        ledger=ledger,
        run_id=run_id,
    )
    trace = out.traces[task.id]
    attempts = trace.rounds[0].attempts if trace.rounds else ()
    rows = []
    for a in attempts:
        patch = a.child.patch
        assert patch is not None
        what = "kept" if a.decision.decision is Decision.KEEP else "rolled back"
        if a.retest is None:
            what = a.decision.reason
        rows.append((patch, a.retest, what))
    return Checkpointed(tuple(rows), trace.final, trace.final_verdict)
