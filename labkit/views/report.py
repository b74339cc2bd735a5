"""Traces as tables: what a notebook or widget shows for one round, computed here and tested.

A "step" is a position a stepper can show: step 0 is the starting candidate and its
evidence; step k is round k (reflection, patch, re-test, decision).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from labkit.core.types import Verdict
from labkit.loop.engine import Round, Trace
from labkit.loop.strategies.reflector import CALL_FAILED

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite


def evidence_frame(verdict: Verdict, suite: AcceptanceSuite | None = None) -> pl.DataFrame:
    """One row per test: group, expected role (F2P/P2P), outcome, bucket, first line of the message."""
    groups = {nid: g for g, ids in (suite.groups.items() if suite else []) for nid in ids}
    f2p = set(verdict.fail_to_pass) | set(verdict.fail_to_fail)
    bucket = {
        **{n: "FAIL_TO_PASS" for n in verdict.fail_to_pass},
        **{n: "FAIL_TO_FAIL" for n in verdict.fail_to_fail},
        **{n: "PASS_TO_PASS" for n in verdict.pass_to_pass},
        **{n: "PASS_TO_FAIL" for n in verdict.pass_to_fail},
    }
    rows = [
        {
            "test": r.nodeid.split("::")[-1],
            "group": groups.get(r.nodeid, ""),
            "role": "failing acceptance" if r.nodeid in f2p else "protective",
            "outcome": r.outcome,
            "bucket": bucket.get(r.nodeid, ""),
            "message": (r.message.splitlines() or [""])[0][:120],
        }
        for r in verdict.evidence.results
        if "::" in r.nodeid or r.outcome != "error"  # a whole file that failed to import is no test: see import_error
    ]
    schema = {k: pl.Utf8 for k in ("test", "group", "role", "outcome", "bucket", "message")}
    return pl.DataFrame(rows, schema=schema)


def scores_frame(trace: Trace, suite: AcceptanceSuite) -> pl.DataFrame:
    """Per step: passed/total for every display group of the suite, plus the decision and cost so far."""
    rows = []
    for step in range(len(trace.rounds) + 1):
        verdict = step_verdict(trace, step)
        rnd = trace.rounds[step - 1] if step else None
        for group in suite.groups:
            ok, n = suite.score(verdict, group)
            rows.append(
                {
                    "step": step,
                    "group": group,
                    "passed": ok,
                    "total": n,
                    "decision": rnd.decision.decision.value if rnd else "start",
                    "cost_units": rnd.usage.cost_units if rnd else 0.0,
                }
            )
    return pl.DataFrame(rows)


def step_verdict(trace: Trace, step: int) -> Verdict:
    """The verdict a step is about: the start's evidence, or round k's re-test (or its input if none)."""
    if step == 0:
        return trace.start_verdict
    rnd = trace.rounds[step - 1]
    return rnd.retest or rnd.verdict


def what_changed(trace: Trace, step: int) -> str:
    """One line for a step: which tests flipped, and what the loop decided.

    Step 0 says what the run starts from; round k compares the candidate it tested with
    the verdict it started from (a round whose patch was never tested says why).
    """
    if step == 0:
        v = trace.start_verdict
        failing = [r.nodeid.split("::")[-1] for r in v.evidence.results if r.outcome != "passed"]
        a, n = v.score("acceptance")
        return f"start: failing acceptance passes {a}/{n}; {len(failing)} test(s) fail ({', '.join(failing) or 'none'})"
    rnd = trace.rounds[step - 1]
    decision = rnd.decision.decision.value
    if rnd.retest is None:
        return f"nothing was tested this round (see why above) → {decision}"
    before = {r.nodeid: r.outcome for r in rnd.verdict.evidence.results}
    after = {r.nodeid: r.outcome for r in rnd.retest.evidence.results}
    fixed = sorted(n.split("::")[-1] for n, o in after.items() if o == "passed" and before.get(n) != "passed")
    broke = sorted(n.split("::")[-1] for n, o in after.items() if o != "passed" and before.get(n) == "passed")
    parts = []
    if fixed:
        parts.append(f"{len(fixed)} now pass ({', '.join(fixed)})")
    if broke:
        parts.append(f"{len(broke)} now fail ({', '.join(broke)})")
    return f"{'; '.join(parts) or 'no test changed'} → {decision}"


def step_labels(trace: Trace) -> list[str]:
    labels = [f"start · {trace.start.label}"]
    labels += [f"round {r.index} · {r.decision.decision.value}" for r in trace.rounds]
    return labels


@dataclass(frozen=True, kw_only=True)
class StepView:
    """Everything shown for one step, as plain values and frames."""

    title: str
    candidate: str
    diff: str
    observations: tuple[tuple[str, str], ...]  # (question, output)
    record: dict[str, object] | None
    failure: str
    evidence: pl.DataFrame
    decision: str
    reason: str
    cost_so_far: float
    simulated: bool
    reflector: str
    changed: str = ""  # one line: which tests flipped, and the decision (what_changed)
    raw: str = ""  # the reflector's reply as received (a real model's, or the replayed script's)
    error: str = ""  # the Python error that kept the tests from running at all (import_error), if any
    cut_off: bool = False  # `raw` is what arrived before the model call timed out, not a whole reply


_WORKSPACE = re.compile(r'File "[^"]*/(?:ws-[0-9a-f]+|tmp[^/"]*)/')


def import_error(verdict: Verdict) -> str:
    """The error that stopped the test files from importing (a SyntaxError in the patched code, a
    NameError at import time), as Python printed it: pytest's "E" lines of the first collection
    error, with the sandbox's workspace path cut; "" when every test file imported."""
    for r in verdict.evidence.results:
        if r.outcome != "error":
            continue
        lines = [ln[1:].rstrip() for ln in r.message.splitlines() if ln.startswith("E ")]
        if lines and "importtestmodule" in r.message:
            indent = min(len(ln) - len(ln.lstrip()) for ln in lines if ln.strip())
            return "\n".join(_WORKSPACE.sub('File "', ln[indent:]) for ln in lines)
    return ""


def step_view(trace: Trace, step: int, suite: AcceptanceSuite | None = None) -> StepView:
    if not 0 <= step <= len(trace.rounds):
        raise IndexError(f"step {step} is outside 0..{len(trace.rounds)} for run {trace.run_id}")
    if step == 0:
        a, n = trace.start_verdict.score("acceptance")
        return StepView(
            title=f"Start: {trace.start.label}",
            candidate=trace.start.label,
            diff="",
            observations=(),
            record=None,
            failure="",
            evidence=evidence_frame(trace.start_verdict, suite),
            decision="reflect",
            reason=f"failing acceptance passes {a}/{n}: there is external evidence to reflect on",
            cost_so_far=0.0,
            simulated=trace.simulated,
            reflector=trace.reflector,
            changed=what_changed(trace, 0),
        )
    rnd: Round = trace.rounds[step - 1]
    refl = rnd.reflection
    return StepView(
        title=f"Round {rnd.index}: {rnd.decision.decision.value}",
        candidate=(rnd.patched or rnd.candidate).label,
        diff=refl.patch.diff if refl.patch else "",
        observations=tuple((o.experiment.question, o.output) for o in rnd.observations),
        record=refl.record.as_dict() if refl.record else None,
        failure=refl.failure,
        evidence=evidence_frame(rnd.retest or rnd.verdict, suite),
        decision=rnd.decision.decision.value,
        reason=rnd.decision.reason + _not_cross_checked(rnd.retest or rnd.verdict),
        cost_so_far=rnd.usage.cost_units,
        simulated=trace.simulated,
        reflector=trace.reflector,
        changed=what_changed(trace, step),
        raw=refl.raw,
        error=import_error(rnd.retest) if rnd.retest else "",
        cut_off=bool(refl.raw) and refl.failure.startswith(CALL_FAILED),
    )


def _not_cross_checked(verdict: Verdict) -> str:
    """' · resolved (not cross-checked): <tests>' when that is what the verdict is, else ''."""
    if not verdict.resolved or verdict.cross_checked:
        return ""
    return f" · {verdict.status}: {', '.join(verdict.evidence.unchecked)}"


def ledger_rows(frame: pl.DataFrame, step: int) -> pl.DataFrame:
    """The ledger events of one step (round), with the columns a reader wants first."""
    cols = [
        c
        for c in (
            "seq",
            "round",
            "role",
            "kind",
            "tokens",
            "calls",
            "wall_seconds",
            "cost_units",
            "output_hash",
        )
        if c in frame.columns
    ]
    return frame.filter(pl.col("round") == step).select(cols)


def rounds_frame(trace: Trace) -> pl.DataFrame:
    """One row per round: what the reflector gave, what the loop decided, and why."""
    rows = [
        {
            "round": r.index,
            "reflection": "experiment + record"
            if r.observations and r.reflection.record
            else "record"
            if r.reflection.record
            else "unusable",
            "decision": r.decision.decision.value,
            "why": r.decision.reason,
        }
        for r in trace.rounds
    ]
    schema = {"round": pl.Int64, "reflection": pl.Utf8, "decision": pl.Utf8, "why": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)
