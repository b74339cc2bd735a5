"""Dependent changes as a checkpointed sequence, through the engine's validation and ledger."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core import patch as patches
from labkit.core.errors import PatchError
from labkit.core.types import Candidate, Patch, Verdict
from labkit.grading.verdicts import Checker
from labkit.loop.steps import Recorder, checker_for
from labkit.loop.trace import Task
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator
    from labkit.record.ledger import Ledger

__all__ = ["Checkpointed", "run_sequence"]


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


def run_sequence(
    candidate: Candidate,
    steps: Sequence[Patch],
    suite: AcceptanceSuite,
    validator: Validator | Checker,
    *,
    ledger: Ledger | None = None,
    run_id: str = "sequence",
) -> Checkpointed:
    """Dependent changes as a checkpointed sequence through the engine's validation and ledger.

    Each step is applied to the last green checkpoint, validated and recorded. A step that
    does not apply, breaks a protective test or raises an alarm is recorded and the sequence
    returns to the last green checkpoint, which it hands back with every step's evidence.
    """
    from labkit.record.ledger import Ledger

    task = Task(run_id, candidate, suite)
    rec = Recorder(run_id, ledger if ledger is not None else Ledger(), checker_for(validator, None), None, 1.0, False)
    verdict = rec.verified(task, 0, candidate, rec.check(task, 0, candidate), None, "start")
    out: list[tuple[Patch, Verdict | None, str]] = []
    held = candidate
    for i, step in enumerate(steps, start=1):
        try:
            nxt = patches.apply(held, step)
        except PatchError as exc:
            out.append((step, None, f"does not apply: {exc}"))
            rec.log(task, i, Role.DECISION, Kind.CHECKPOINT, inputs=step.diff,
                    detail={"applied": False, "reason": str(exc), "candidate": held.digest})  # fmt: skip
            break
        after = rec.verified(task, i, nxt, rec.check(task, i, nxt), verdict, f"step {i}")
        green = not (set(after.pass_to_fail) - set(verdict.pass_to_fail)) and not after.quarantined
        out.append((step, after, "kept" if green else "rolled back"))
        rec.log(task, i, Role.DECISION, Kind.CHECKPOINT, inputs=step.diff,
                detail={"applied": True, "resolved": after.resolved, "green": green,
                        "candidate": (nxt if green else held).digest})  # fmt: skip
        if not green:
            break
        held, verdict = nxt, after
    return Checkpointed(tuple(out), held, verdict)
