"""The lessons page's diagnosis block (seed 002 §7 and §5), built once for both notebooks.

Two sections: spending the budget on an explanation that discriminates (read from the triage
recording, `labkit.experiments.lessons.triage`) and fixing the plan vs fixing the state (a
scripted run through the engine and validator, `labkit.experiments.lessons.plan_state`).
Every number in a sentence is read from the outcomes or the story; nothing here runs a loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from labkit.experiments.lessons.triage import ARMS, BUDGET, COMMAND, summarise
from labkit.record.events import Kind

if TYPE_CHECKING:
    from labkit.experiments.lessons.plan_state import Story
    from labkit.experiments.lessons.triage import Outcome
    from labkit.record.ledger import Ledger

__all__ = [
    "DIAGNOSIS", "PLAN_STATE", "TRIAGE", "checkpoints_frame", "plan_frame", "plan_state_md", "restores_caption",
    "restores_frame",
    "triage_cases_frame", "triage_md", "triage_summary_frame",
]  # fmt: skip

DIAGNOSIS = """## Diagnosis: discriminate first, restore the whole state

Two habits from seed 002 that decide where a repair budget goes: find out *which* explanation
holds before paying for patches (§7), and when a change is undone, undo all of it (§5)."""

TRIAGE = f"""### Spend the budget on explanations that discriminate

A failing test can come from the **code**, the **test data** or the **environment**. Six
**scripted** cases (`data/triage/cases.json`), two per cause, all with the same symptom: the
report's total is wrong. Each case is one engine run with **{BUDGET:g} cost units** (a
validation costs 1, a strategy's reply 1). *Three patches at once* pays for three code patches
written from the failure alone. *One experiment, then one patch* first runs a probe in the
sandbox that reproduces the minimal failure and checks the image and data digests against the
manifest of the last green run; its **prediction** ("the cause is the code: both digests
match") is written to the ledger *before* the probe runs and scored after. Then it makes one
change. Correctness is the hidden check: the visible tests plus the manifest's digests. Every
candidate ran through labkit's validator; the figures are the recording `data/triage/recording.json`
(`{COMMAND}`)."""

_TRIAGE_RESULT = """Where the cause was the data or the environment ({n} cases), three patches ended correct on
**{patches_correct}/{n}** for **{patches_spent:g}** units ({patches_green} green for the loop only:
a patch that compensates for a drifted environment); one experiment, then one patch, on
**{probe_correct}/{n}** for **{probe_spent:g}**. Its prediction held on **{held}/{made}** of those
cases: the bet three code patches make implicitly was wrong every time. Where the cause was the
code ({m} cases), three shots found the fix on **{code_patches}/{m}** and one patch on
**{code_probe}/{m}**: the experiment buys information, not a better patch."""

PLAN_STATE = """### Fix the plan vs fix the state

A plan error can change route from the same checkpoint; a corrupted state needs the environment
restored or a new branch. The module `shipping.py` uses an installed dependency, `moneylib`,
pinned in `deps.lock`; a build cache and a background worker's state file (standing for a
process that loaded the dependency) belong to the environment. The bug: an order of exactly 50
should ship free. **Scripted** routes; the engine, the validator and the ledger are the real
ones. Every checkpoint records the digest of each part (code version, dependency image = lock +
installed package, environment = cache + worker) and its event position, so an audit can say
what a restore left behind."""

_PLAN_RESULT = """**Plan error.** Route A is rolled back and route B, tried from the same checkpoint, is
kept: the audit after route A's roll back finds {plan_audit} different from the checkpoint, so
restoring the code was a complete restore.

**Corrupted state.** The agent upgrades `moneylib` to 2.0 and ports the code; the engine decides
**{up_decision}** ({up_reason}). The upgrade changed {upgraded}. The same right fix (route B) is
then run from each restore:"""

_PLAN_CAPTION = """The code-only restore leaves {left} at moneylib 2.0: route B fails there with
`{failure}` and the engine **{decision}** a correct patch — a wrong verdict caused by the state,
not the patch. The complete restore (the alternative is a new branch from the checkpoint) gives
the verdict the patch deserves."""


def _parts(parts: tuple[str, ...]) -> str:
    return ", ".join(parts) if parts else "nothing"


def triage_md(outcomes: tuple[Outcome, ...]) -> str:
    """The comparison in two sentences, every number read from the outcomes."""
    patches, probe = summarise(outcomes, ("data", "environment"))
    code_patches, code_probe = summarise(outcomes, ("code",))
    return _TRIAGE_RESULT.format(
        n=patches.cases,
        patches_correct=patches.correct,
        patches_spent=patches.spent,
        patches_green=patches.visible_green - patches.correct,
        probe_correct=probe.correct,
        probe_spent=probe.spent,
        held=probe.predictions_held,
        made=probe.predictions,
        m=code_patches.cases,
        code_patches=code_patches.correct,
        code_probe=code_probe.correct,
    )


def triage_summary_frame(outcomes: tuple[Outcome, ...]) -> pl.DataFrame:
    rows = [s for causes in (("data", "environment"), ("code",)) for s in summarise(outcomes, causes)]
    return pl.DataFrame(
        {
            "cause": [" or ".join(s.causes) for s in rows],
            "arm": [s.arm for s in rows],
            "cases": [s.cases for s in rows],
            "correct (hidden check)": [s.correct for s in rows],
            "green for the loop": [s.visible_green for s in rows],
            "cost units spent": [s.spent for s in rows],
            "predictions held": [f"{s.predictions_held}/{s.predictions}" if s.predictions else "—" for s in rows],
        }
    )


def triage_cases_frame(outcomes: tuple[Outcome, ...]) -> pl.DataFrame:
    """One row per case: what each arm ended holding and whether it was right."""
    by = {(o.arm, o.case): o for o in outcomes}
    cases = list(dict.fromkeys(o.case for o in outcomes))

    def said(o: Outcome) -> str:
        right = "correct" if o.correct else "green for the loop, wrong" if o.visible_green else "not fixed"
        return f"{o.held if o.held != 'failing' else 'nothing kept'} ({right})"

    three, probe = ARMS
    return pl.DataFrame(
        {
            "case (scripted)": cases,
            f"{three}": [said(by[(three, c)]) for c in cases],
            f"{probe}": [said(by[(probe, c)]) for c in cases],
            "prediction 'the code' held": ["yes" if by[(probe, c)].prediction_held else "no" for c in cases],
        }
    )


def plan_frame(s: Story) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "route (from checkpoint C0)": [r for r, _, _ in s.plan_decisions],
            "engine's decision": [d for _, d, _ in s.plan_decisions],
            "why": [w for _, _, w in s.plan_decisions],
        }
    )


def plan_state_md(s: Story) -> str:
    return _PLAN_RESULT.format(
        plan_audit=_parts(s.plan_audit),
        up_decision=s.upgrade_decision,
        up_reason=s.upgrade_reason,
        upgraded=_parts(s.upgraded_parts),
    )


def restores_frame(s: Story) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "restore": [r.name for r in s.restores],
            "parts put back": [_parts(r.parts) for r in s.restores],
            "parts still different from C0": [_parts(r.left_different) for r in s.restores],
            "engine's decision on route B (the right fix)": [r.decision for r in s.restores],
            "why": [r.reason for r in s.restores],
        }
    )


def restores_caption(s: Story) -> str:
    partial = s.restores[0]
    return _PLAN_CAPTION.format(
        left=_parts(partial.left_different),
        failure=partial.failure.removeprefix("E   "),
        decision="rolls back" if partial.decision == "roll back" else partial.decision,
    )


def checkpoints_frame(ledger: Ledger, run_id: str) -> pl.DataFrame:
    """The checkpoint events as the ledger holds them: each part's digest and the event position."""
    cps = [e.detail for e in ledger.events(run_id) if e.kind == Kind.CHECKPOINT]
    return pl.DataFrame(
        {
            "checkpoint": [str(d["reason"]) for d in cps],
            "code version": [str(d["code_version"]) for d in cps],
            "dependency image": [str(d["dependency_image"]) for d in cps],
            "environment": [str(d["environment"]) for d in cps],
            "event position": [int(d["position"]) for d in cps],
        }
    )
