"""Step 6, once: what the evidence on a candidate calls for, and keep or roll back a child.

One policy with three keep modes, all judged on the visible (protected) suite by the same
validator as the failure:

- "progress" (the single-case loop): keep a child that resolves, or passes more failing
  acceptance tests and breaks no protective test; roll back anything else;
- "no_worse" (the multi-case repair experiment): keep unless the visible failures grow
  (ΔF < 0 on the visible check set) or a protective test newly fails — a change that
  keeps a passing case green is kept, which is how unseen breakage enters;
- "resolved": keep only a child whose visible suite fully passes;
- "severity" (frontier search): keep only comparable progress by ΔF *with severity*
  (`labkit.loop.engine.progress.judge` on a versioned, severity-rated `CheckSet`): a skipped or
  missing check, a changed check version, a new high-severity failure, or light fixes
  masking a more severe new failure never count as progress, whatever ΔF says. Its
  judgement comes before the protective and size rules so the record says why.
- "always": keep every child (an intrinsic strategy decides by itself, e.g. Self-Refine's
  own critique; the visible verdict is still recorded, it just does not gate).

Before any mode: a re-test on another suite or validator, or a quarantined verdict, stops
the case (integrity); a child over the patch-size cap is rolled back as not attributable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from labkit.core.types import Decision, DecisionRecord, Verdict

if TYPE_CHECKING:
    from labkit.grading.checkset import CheckSet

__all__ = ["KEEP_MODES", "Keep", "assess", "best", "decide", "delta_f"]

Keep = Literal["progress", "no_worse", "resolved", "severity", "always"]
KEEP_MODES: tuple[Keep, ...] = ("progress", "no_worse", "resolved", "severity", "always")


def assess(verdict: Verdict) -> DecisionRecord:
    """What the evidence on a candidate calls for before any patch."""
    if verdict.quarantined:
        return DecisionRecord(Decision.STOP, "integrity alarm: " + "; ".join(verdict.evidence.alarms), "integrity")
    if verdict.resolved:
        return DecisionRecord(
            Decision.STOP,
            "resolved: all failing acceptance passes, protective tests intact",
            "resolved",
        )
    a, n = verdict.score("acceptance")
    return DecisionRecord(Decision.INVESTIGATE, f"failing acceptance {a}/{n}: reflect on the evidence")


def delta_f(before: Verdict, after: Verdict) -> int:
    """Failing required tests before minus after, on one suite: positive is progress."""
    from labkit.grading import checkset

    suite = before.evidence.suite
    required = before.fail_to_pass + before.fail_to_fail + before.pass_to_pass + before.pass_to_fail
    cs = checkset.CheckSet(suite, tuple(checkset.Check(n) for n in required))
    return checkset.compare(cs.read(before.evidence), cs.read(after.evidence)).delta_f


def decide(
    before: Verdict,
    after: Verdict,
    size_problem: str = "",
    keep: Keep = "progress",
    checks: CheckSet | None = None,
) -> DecisionRecord:
    """Keep or roll back a patched candidate, judged by the same suite and validator as `before`.

    `checks` (the versioned checks with severities) is required by keep="severity"."""
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {KEEP_MODES}, got {keep!r}")
    if keep == "severity" and checks is None:
        raise ValueError('keep="severity" needs the check set with severities (checks=...)')
    if after.evidence.suite != before.evidence.suite or after.evidence.validator != before.evidence.validator:
        # Validator.retest already refuses this; decide refuses too, so no caller can slip past.
        return DecisionRecord(Decision.STOP, "re-test used a different suite or validator", "integrity")
    if after.quarantined:
        return DecisionRecord(Decision.STOP, "integrity alarm: " + "; ".join(after.evidence.alarms), "integrity")
    if keep == "severity":
        assert checks is not None
        from labkit.grading.checkset import compare
        from labkit.loop.engine.progress import judge

        judged = judge(compare(checks.read(before.evidence), checks.read(after.evidence)))
        if not judged.comparable:
            return DecisionRecord(Decision.ROLL_BACK, judged.reason, "severity")
    broken = sorted(set(after.pass_to_fail) - set(before.pass_to_fail))
    if broken:
        p, n = after.score("protective")
        return DecisionRecord(
            Decision.ROLL_BACK,
            f"breaks protective tests ({p}/{n} pass): {', '.join(broken)}",
            "protective",
        )
    if size_problem:
        return DecisionRecord(Decision.ROLL_BACK, f"green or not, not attributable: {size_problem}", "patch-size")
    if keep == "always":
        return DecisionRecord(Decision.KEEP, "kept without a visible gate: the strategy decides", "always")
    if keep == "resolved":
        if after.resolved:
            return DecisionRecord(Decision.KEEP, "all visible tests pass", "resolved")
        failing = len(after.fail_to_fail) + len(after.pass_to_fail)
        return DecisionRecord(Decision.ROLL_BACK, f"{failing} visible test(s) fail", "unresolved")
    if keep == "severity":
        return DecisionRecord(Decision.KEEP, judged.reason, "progress")
    if keep == "no_worse":
        df = delta_f(before, after)
        if df < 0:
            return DecisionRecord(Decision.ROLL_BACK, f"ΔF {df:+d} on the visible tests", "worse")
        return DecisionRecord(Decision.KEEP, f"ΔF {df:+d}, no new protective failure", "no-worse")
    fixed = len(after.fail_to_pass) - len(before.fail_to_pass)
    if after.resolved:
        return DecisionRecord(
            Decision.KEEP,
            "failing acceptance now passes and protective tests still pass",
            "resolved",
        )
    if fixed > 0:
        return DecisionRecord(Decision.KEEP, f"{fixed} more acceptance test(s) pass, none broken", "progress")
    return DecisionRecord(
        Decision.ROLL_BACK,
        "no failing acceptance test changed: hypothesis not supported",
        "no-progress",
    )


def best(options: Sequence[tuple[DecisionRecord, Verdict | None]]) -> int:
    """Which of several decided children to hold: a STOP first (integrity), else the kept child
    with the most visible tests passing (first on ties), else the first. Returns its index."""
    for i, (d, _) in enumerate(options):
        if d.decision is Decision.STOP:
            return i
    kept = [(i, v) for i, (d, v) in enumerate(options) if d.decision is Decision.KEEP and v is not None]
    if not kept:
        return 0
    return max(kept, key=lambda iv: (iv[1].resolved, len(iv[1].fail_to_pass) + len(iv[1].pass_to_pass), -iv[0]))[0]
