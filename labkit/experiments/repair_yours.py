"""Try your own patch on a repair case: one round of the repair experiment, your diff as the child.

`try_patch` is `repair.run` for one round with a `HandWritten` strategy (labkit.loop.strategies.handwritten):
the same engine, the same validator (the visible tests, real pytest), the same patch cap
(the case's task: none — a model repairer rewrites whole modules) and the same decide mode
(`keep="no_worse"`: keep unless the visible failures grow or a protective test breaks). As in
every repair round, the hidden tests score the held state only after the decision; `hidden`
reads that score back from the ledger, with the order of the two events.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

from labkit.core import patch as patches
from labkit.core.errors import LedgerError
from labkit.experiments import repair
from labkit.loop.strategies.handwritten import HandWritten
from labkit.record.ledger import Ledger

__all__ = ["EDIT_HINT", "Hidden", "failing_tests", "hidden", "template", "try_patch"]

EDIT_HINT = "# edit here: what do the failing tests need?"


def template(case: repair.RepairCase) -> str:
    """A well-formed starting diff that changes only a comment, on the line the case's bug is
    on (the first line its fix removes; a correct case: its first `def`). It fixes nothing."""
    text = case.original.files[case.module]
    assert isinstance(text, str), f"{case.id}: {case.module} is not text"
    lines = text.splitlines(keepends=True)
    at = _bug_line(case, lines)
    body = lines[at].rstrip("\n")
    lines[at] = f"{body}  {EDIT_HINT}\n"
    return patches.make({case.module: text}, {case.module: "".join(lines)}, "your patch").diff


def _bug_line(case: repair.RepairCase, lines: list[str]) -> int:
    fix = next((p for p in case.patches if p.kind == "fix" and p.base == "original"), None)
    if fix is not None:
        for ln in fix.patch.diff.splitlines():
            if ln.startswith("-") and not ln.startswith("---"):
                target = ln[1:] + "\n"
                if target in lines:
                    return lines.index(target)
    return next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("def ")), 0)


def failing_tests(case: repair.RepairCase) -> tuple[str, ...]:
    """The visible tests the original fails (as measured when the case was built)."""
    return case.visible.fail_to_pass


def try_patch(
    case: repair.RepairCase,
    hypothesis: str,
    diff: str,
    *,
    refuted_if: str = "",
    checker: repair.Checker | None = None,
    ledger: Ledger | None = None,
    run_id: str = "",
) -> repair.RepairRun:
    """One repair round on `case` with a hand-written hypothesis and diff, through `repair.run`.
    Never raises for a malformed diff or an empty hypothesis: the round says why it could not
    be tested (decision "keep investigating")."""
    env = f"Python {platform.python_version()}, pytest; module {case.module}"
    mine = HandWritten(hypothesis=hypothesis, diff=diff, refuted_if=refuted_if, environment=env)
    return repair.run(
        [case],
        mine,
        rounds=1,
        checker=checker,
        ledger=ledger,
        rules=(),
        workers=1,
        run_id=run_id or f"repair-yours-{case.id}",
        on_alarm="stop",
    )


@dataclass(frozen=True)
class Hidden:
    """The hidden tests' score of the held state, before your round and after its decision."""

    before_failing: tuple[str, ...]
    after_failing: tuple[str, ...]
    correct_before: bool
    correct_after: bool
    after_decision: bool  # the round's SCORE event follows its DECIDE event in the ledger

    def line(self) -> str:
        def says(correct: bool, failing: tuple[str, ...]) -> str:
            names = ", ".join(n.split("::")[-1] for n in failing)
            return "all pass (correct)" if correct else f"{len(failing)} fail ({names})"

        return (
            f"before your round: {says(self.correct_before, self.before_failing)}; "
            f"after the decision: {says(self.correct_after, self.after_failing)}"
        )


def hidden(result: repair.RepairRun, case_id: str) -> Hidden:
    """Read the hidden scoring of rounds 0 and 1 of `case_id` back from the run's ledger."""
    scores: dict[int, tuple[bool, tuple[str, ...]]] = {}
    score_seq = -1
    for s in result.scores(case_id):
        scores[s.round] = (s.correct, s.failing)
        if s.round == 1:
            score_seq = s.seq
    decide_seq = max((d.seq for d in result.decisions(case_id) if d.round == 1), default=-1)
    if 0 not in scores or 1 not in scores:
        raise LedgerError(f"run {result.run_id} has no hidden score of {case_id!r} for rounds 0 and 1")
    (c0, f0), (c1, f1) = scores[0], scores[1]
    return Hidden(f0, f1, c0, c1, score_seq > decide_seq >= 0)
