"""The lessons notebook's text, tables and stepper, built once for both notebooks.

`notebooks/lessons.py` (marimo) and `notebooks/lessons.ipynb` (JupyterLab) call these and
differ only in how they display the result. Every table lays out what a run recorded; every
sentence with a number reads it from the run. Nothing here runs or recomputes a loop. The
first use of each glossary term in the prose links to its entry (`labkit.views.glossary`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

import polars as pl

from labkit.record.events import Kind, Role
from labkit.views.glossary import glossary_html, link_first_uses
from labkit.views.search_pages import outcome_words
from labkit.views.stepper import Stepper

if TYPE_CHECKING:
    import altair as alt

    from labkit.experiments.lessons.coverage import CoverageRun
    from labkit.experiments.lessons.free_shipping import Walkthrough
    from labkit.experiments.lessons.irreversible import Story
    from labkit.loop.control.bound import ToolRun
    from labkit.loop.control.effects import EffectStep
    from labkit.loop.control.layer_metrics import LayerMetrics
    from labkit.record.ledger import Ledger

__all__ = [
    "BOUND", "COVERAGE", "COVERAGE_CAPTION", "EFFECTS", "EFFECTS_HEAD", "GLOSSARY", "INTRO", "METRICS", "METRICS_CAPTION",
    "REVALIDATION_CAPTION", "TEST_CHANGE", "bound_md", "checkpoint_frame", "commands_md", "coverage_frame",
    "effect_browser", "effect_frame", "effects_md", "glossary", "metrics_frame", "revalidation_frame", "test_change_md",
    "spend_chart", "spend_frame", "tool_frame", "units_frame",
]  # fmt: skip

GLOSSARY = ("p2p", "hidden", "error_classes", "idempotency", "unit_status", "stop_reasons")
_CARD_TERMS = ("error_classes", "idempotency")  # linked in each step card, where they are used

_INTRO = """# Five lessons, each a run

Seeds 000 and 002 end with lessons that are easy to nod at and easy to forget. Here each one
is a short run on case material: the engine, the validator, the budget and the ledger are
the real ones; where a tool, an outbox or a reflector is **simulated or scripted**, the
section says so. Every number below is read from what the run recorded and asserted in
`tests/test_lessons.py`. A linked term opens its entry in the glossary at the end."""

_COVERAGE = """## 1 · The coverage counterfactual

*"If the same-user hit test had never been written, the loop would quietly accept 'disable
the cache'."* The engine runs twice from v1 of the cache case with one scripted proposal,
**disable the cache**: once on the protected acceptance as written, once with the
protective same-user hit tests removed. The full acceptance scores the result afterwards,
as a hidden suite the loop never sees."""

_COVERAGE_CAPTION = """Same proposal, same engine, same validator: only the acceptance differs.
**Reflection quality is capped by acceptance coverage.**"""

_TEST_CHANGE = """## 2 · Changing a test legitimately

Case `data/free_shipping`: the ticket said "free shipping over 50", and its author wrote a
protected test that an order of exactly 50 still pays. The pricing policy (REQ-7, signed
off by the product owner) says **50 or more** ships free. The engine, offered both fixes,
keeps the one the wrong test wants. A protected test may change only on a requirement
record the candidates' author did not write, through its own recorded event, and every
candidate scored under the old test is re-validated."""

_WALK = """Before the change the engine keeps **{before}**.

{refused}
- evidence **REQ-7** by *{author}* → accepted, event #{seq}:
  test `{old_test}` → `{new_test}`, suite `{old_suite}` → `{new_suite}`.

After the change the engine keeps **{after}**."""

_REVALIDATION_CAPTION = "Every candidate scored under the old test, re-validated:"

_BOUND = """## 3 · Observation-bound reflection

Seed 002 §2: the same model may read a permission refusal as a badly written command and
keep changing the command. The tool here is a **simulated** shell in which policy denies
writes under `/srv/deploy`; both reflectors are **scripted**. The unbound one answers the
message's words; the bound one must cite the action number, the error class the control
plane recorded, the artifact and the explanations not yet ruled out — and POLICY_DENIED
grants only an authorisation change or stop."""

_COMMANDS = "The unbound reflector's commands, budget {budget:g} units:\n\n{commands}"

_BOUND_RESULT = """The bound reflection, as recorded in the ledger: **observation** — action {action},
classified **{error_class}**, artifact `{artifact}`; **contributing hypothesis** —
{hypothesis} (not yet ruled out: {open}); **next trial** — {next_trial}.
Outcome: **{outcome}** after {actions} action."""

_EFFECTS = """## 4 · Side effects a rollback cannot undo

The cache fix comes with a notice to customers. The outbox is a **local in-process stub**
(simulated) that delivers and then loses the first acknowledgement: UNKNOWN_EFFECT. The
gate plans in dry run, sends under an idempotency key, refuses to repeat before
reconciling, and checkpoints record code version, dependency image, environment, pending
external actions and event position."""

_EFFECTS_RESULT = """After the rollback the code is `{code}` again, but the budget re-read from
the ledger still says **{spent_after:g}** units spent (it was {spent_before:g} before) and the
outbox still holds **{delivered}** notice. A naive retry with a fresh key instead:
**{naive_delivered}** deliveries, **{naive_duplicates}** duplicate found by the audit."""

EFFECTS_HEAD = "### The gated run, event by event (from its ledger)"

_METRICS = """## 5 · Layer metrics

Seed 002 §7's metrics for in-task evolution, read from one ledger holding the real frontier
search on `api_change` at three budgets, a fourth search task whose environment check
failed (**invalid_environment**, kept in the denominator), the deploy task three ways and
the notice two ways. All branches of a search are one unit."""

_METRICS_CAPTION = """A unit is a **trusted** completion when it ended in success, was confirmed on a sealed
set where it had one, and duplicated no side effect: the naive notice 'succeeded' and is not
trusted. Candidates are search branches and tool commands tried; a notice is an action, not a
candidate. Cost counts every unit, failures included. A no-progress stop is a unit whose stop
rule found its rounds stalled; a human takeover is an escalation to a person."""

# The prose in reading order, each glossary term linked at its first use.
(
    INTRO,
    COVERAGE,
    COVERAGE_CAPTION,
    TEST_CHANGE,
    _WALK,
    REVALIDATION_CAPTION,
    BOUND,
    _COMMANDS,
    _BOUND_RESULT,
    EFFECTS,
    _EFFECTS_RESULT,
    METRICS,
    METRICS_CAPTION,
) = link_first_uses(
    [
        _INTRO,
        _COVERAGE,
        _COVERAGE_CAPTION,
        _TEST_CHANGE,
        _WALK,
        _REVALIDATION_CAPTION,
        _BOUND,
        _COMMANDS,
        _BOUND_RESULT,
        _EFFECTS,
        _EFFECTS_RESULT,
        _METRICS,
        _METRICS_CAPTION,
    ],
    GLOSSARY,
)


def recorded_source(record: Mapping[str, Any]) -> str:
    """Where a recorded table comes from: its label and the command that records it again."""
    return f"_Source: {record['label']} (`{record['command']}`; the suite measures it again and compares)._"


def glossary() -> str:
    """The collapsible glossary the prose links to."""
    return glossary_html(GLOSSARY)


def test_change_md(w: Walkthrough) -> str:
    """What the engine kept before and after the change, the refusals and the accepted change event."""
    ev = w.accepted()
    refused = "\n".join(f"- evidence **{o}** → refused: {why.split('refused: ')[-1]}" for o, why in w.refusals)
    return _WALK.format(
        before=w.kept(w.before),
        after=w.kept(w.after),
        refused=refused,
        author=w.outcome.requirement.author,
        seq=ev.seq,
        old_test=ev.detail["old_test"],
        new_test=ev.detail["new_test"],
        old_suite=ev.detail["old_suite"],
        new_suite=ev.detail["new_suite"],
    )


def commands_md(run: ToolRun, budget: float) -> str:
    """The commands a tool run tried, numbered by action, with the error class each got."""
    commands = "\n".join(f"{o.action}. `{o.command}` → {o.error_class}" for o in run.history)
    return _COMMANDS.format(budget=budget, commands=commands)


def bound_md(run: ToolRun, ledger: Ledger) -> str:
    """The bound reflection as the ledger recorded it (its `reflect` event) and how the run ended."""
    r = next(e.detail for e in ledger.events(run.run_id) if e.kind == Kind.REFLECT)
    return _BOUND_RESULT.format(
        action=r["action"],
        error_class=r["error_class"],
        artifact=r["artifact"],
        hypothesis=r["hypothesis"],
        open="; ".join(r["open"]),
        next_trial=r["next_trial"],
        outcome=run.outcome,
        actions=run.actions,
    )


def effects_md(gated: Story, naive: Story) -> str:
    """What a rollback left behind in the gated run, and what a naive retry did."""
    return _EFFECTS_RESULT.format(
        code=gated.code_after_rollback,
        spent_after=gated.spent_after_rollback,
        spent_before=gated.spent_before_rollback,
        delivered=gated.delivered,
        naive_delivered=naive.delivered,
        naive_duplicates=naive.duplicates,
    )


def coverage_frame(arms: Sequence[CoverageRun]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "acceptance": [f"{a.name} ({a.protective} protective tests)" for a in arms],
            "engine's decision on 'disable the cache'": [a.decision for a in arms],
            "run ends holding": [a.kept for a in arms],
            "green for the loop": [a.visible_green for a in arms],
            "green on the full acceptance": [a.full_green for a in arms],
            "why": [a.reason for a in arms],
        }
    )


def revalidation_frame(w: Walkthrough) -> pl.DataFrame:
    rows = w.outcome.revalidated
    return pl.DataFrame(
        {
            "candidate": [r.label for r in rows],
            "digest": [r.candidate for r in rows],
            "resolved under the old test": [r.old_resolved for r in rows],
            "resolved under the new test": [r.new_resolved for r in rows],
        }
    )


def tool_frame(runs: Sequence[ToolRun]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "reflector": [r.reflector for r in runs],
            "actions": [r.actions for r in runs],
            "spent (cost units)": [r.spent for r in runs],
            "new evidence": [r.new_evidence for r in runs],
            "error classes seen": [", ".join(sorted({str(o.error_class) for o in r.history})) for r in runs],
            "outcome": [r.outcome for r in runs],
        }
    )


SPEND_SOURCE = "scripted reflectors, simulated shell"


def spend_frame(runs: Sequence[ToolRun], ledger: Ledger) -> pl.DataFrame:
    """Cost units spent after each action, per reflector, read from the budget's charges in the ledger."""
    rows = []
    for run in runs:
        spent = 0.0
        for e in ledger.events(run.run_id):
            if e.role == Role.BUDGET and e.cost_units > 0:
                spent += e.cost_units
                rows.append(
                    {
                        "reflector": run.reflector,
                        "action": e.round,
                        "spent (cost units)": spent,
                        "how it ended": run.outcome.replace("_", " "),
                    }
                )
    return pl.DataFrame(rows)


def spend_chart(frame: pl.DataFrame, budget: float) -> alt.LayerChart:
    """Units spent per action for each reflector, against the budget (labelled by its source)."""
    import altair as alt

    lines = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("action:O", title="action", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("spent (cost units):Q", title="cost units spent", scale=alt.Scale(domain=[0, budget])),
            color=alt.Color("reflector:N", legend=alt.Legend(orient="bottom", title=None)),
            tooltip=["reflector", "action", "spent (cost units)", "how it ended"],
        )
    )
    cap = (
        alt.Chart(pl.DataFrame({"budget": [budget]})).mark_rule(strokeDash=[4, 3], color="#c62828").encode(y="budget:Q")
    )
    last = frame.group_by("reflector", maintain_order=True).last()
    ends = (
        alt.Chart(last)
        .mark_text(align="left", dx=8, dy=10)
        .encode(
            x="action:O", y="spent (cost units):Q", color=alt.Color("reflector:N", legend=None), text="how it ended:N"
        )
    )
    return (lines + cap + ends).properties(
        width=420, height=220, title=f"Budget spent before the run stops ({SPEND_SOURCE}; budget {budget:g} units)"
    )


def effect_frame(s: Story) -> pl.DataFrame:
    return pl.DataFrame({"step": [a for a, _ in s.steps], "outcome": [o for _, o in s.steps]})


def checkpoint_frame(s: Story) -> pl.DataFrame:
    cps = s.checkpoints
    return pl.DataFrame(
        {
            "checkpoint": [c.name for c in cps],
            "code version": [c.code_version for c in cps],
            "dependency image": [c.dependency_image for c in cps],
            "environment": [c.environment for c in cps],
            "pending external actions": [
                ", ".join(f"{p['key']} ({p['state']})" for p in c.pending) or "—" for c in cps
            ],
            "event position": [c.position for c in cps],
        }
    )


def units_frame(m: LayerMetrics) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "unit": [r.unit for r in m.rows],
            "outcome": [outcome_words(r.status, r.reason) for r in m.rows],
            "trusted": [r.trusted for r in m.rows],
            "candidates": [r.candidates for r in m.rows],
            "cost": [r.cost for r in m.rows],
            "duplicated effects": [r.duplicates for r in m.rows],
            "takeovers": [r.takeovers for r in m.rows],
        }
    )


def metrics_frame(m: LayerMetrics) -> pl.DataFrame:
    cost = "—" if m.cost_per_trusted is None else f"{m.cost_per_trusted:.2f}"
    return pl.DataFrame(
        {
            "metric": [
                "trusted completion rate",
                "candidates per task",
                "cost per trusted completion",
                "duplicated side effects",
                "no-progress stops",
                "human takeovers",
            ],
            "value": [
                f"{m.trusted}/{m.units} = {m.trusted_rate:.2f}",
                f"{m.candidates_per_task:.2f}",
                cost,
                str(m.duplicated_side_effects),
                str(m.no_progress_stops),
                str(m.human_takeovers),
            ],
        }
    )


def _effect_page(s: EffectStep) -> str:
    d = s.detail
    if s.kind == Kind.EFFECT:
        what = f"<b>{d.get('mode')}</b> under idempotency key <code>{d.get('key')}</code> → <b>{d.get('outcome')}</b>"
        if d.get("error_class"):
            what += f" ({d['error_class']})"
    elif s.kind == Kind.CHECKPOINT:
        what = (
            f"<b>checkpoint</b>: {escape(str(d.get('reason')))} — code <code>{d.get('code_version')}</code>, "
            f"image <code>{d.get('dependency_image')}</code>, event position {d.get('position')}"
        )
    else:
        what = f"<b>stop</b>: {d.get('status')} — {escape(str(d.get('reason')))}"
    card = (
        f"<div class='labkit-step'><h3>Event #{s.seq}: {s.kind}</h3><p>{what}</p>"
        f"<p>budget spent so far: <b>{s.spent:g}</b> · delivered: <b>{', '.join(s.delivered) or 'nothing'}</b>"
        f" · pending: <b>{', '.join(s.pending) or 'nothing'}</b></p></div>"
    )
    return link_first_uses([card], _CARD_TERMS)[0]  # each card links its own first uses


def effect_browser(steps: Sequence[EffectStep]) -> Stepper:
    """A Stepper over a recorded effect run (marimo: wrap in mo.ui.anywidget)."""
    return Stepper(len(steps), [s.kind for s in steps], unit="event", pages=[_effect_page(s) for s in steps])
