"""One step of a trace as an HTML card, shared by the marimo notebook and the JupyterLab browser."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import polars as pl

from labkit.loop.strategies.handwritten import YOU
from labkit.views.glossary import link_first_uses
from labkit.views.report import StepView, ledger_rows, step_view
from labkit.views.tables import frame_html

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.loop.engine import Trace

_COLOURS = {
    "keep": "#2e7d32",
    "roll back": "#c62828",
    "keep investigating": "#ef6c00",
    "stop": "#455a64",
    "reflect": "#1565c0",
}
_OUTCOME = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#c62828",
    "skipped": "#ef6c00",
    "missing": "#ef6c00",
}


def step_html(view: StepView) -> str:
    """Title, decision badge, provenance label, observations, record, diff and evidence table."""
    e = html.escape
    colour = _COLOURS.get(view.decision, "#455a64")
    label = (
        "scripted reflector — authored teaching material"
        if view.simulated
        else view.reflector
        if view.reflector == YOU
        else f"model: {view.reflector}"
    )
    parts = [
        '<div class="labkit-step" style="font-size:1.05em;line-height:1.45">',
        f'<h3 style="margin:0.2em 0">{e(view.title)}</h3>',
        f'<span style="background:{colour};color:white;padding:0.15em 0.6em;border-radius:3px;font-weight:600">'
        f"{e(view.decision)}</span> <span>{e(view.reason)}</span>",
        f'<p class="labkit-changed" style="margin:0.4em 0"><b>What changed</b>: {e(view.changed)}</p>'
        if view.changed
        else "",
        f'<div style="color:#666;font-size:0.85em;margin:0.3em 0">reflector: {e(label)} · '
        f"cost so far: {view.cost_so_far:g} units · candidate: {e(view.candidate)}</div>",
    ]
    if view.error:
        parts.append(
            '<div class="labkit-import-error" style="margin:0.4em 0;padding:0.3em 0.6em;border-left:4px solid #c62828">'
            "<b>The patched code does not import</b>, so no test could run: every test below reads "
            "<i>error</i>, the protective ones too. Python said:"
            "<pre style='background:#fff3f3;padding:0.4em;margin:0.3em 0;white-space:pre-wrap'>"
            f"{e(view.error)}</pre></div>"
        )
    for question, output in view.observations:
        parts.append(
            f"<p><b>Experiment</b>: {e(question)}</p><pre style='background:#f4f4f4;padding:0.5em'>{e(output)}</pre>"
        )
    if view.failure:
        parts.append(f'<p style="color:#c62828"><b>Unusable reflection</b>: {e(view.failure)}</p>')
    if view.record:
        hyp = view.record.get("hypothesis") or {}
        cause = hyp.get("cause", "") if isinstance(hyp, dict) else ""
        refuted = hyp.get("refuted_if", "") if isinstance(hyp, dict) else ""
        parts.append(
            f"<p><b>Hypothesis</b>: {e(str(cause))}<br><i>refuted if</i>: {e(str(refuted))}<br>"
            f"<b>Action</b>: {e(str(view.record.get('action', '')))}<br>"
            f"<b>Expected</b>: {e(_expected_text(view.record.get('expected')))}</p>"
        )
    if view.diff:
        parts.append(diff_html(view.diff))
    if view.raw:
        what = (
            f"<b>Raw reply received before the time limit</b> ({len(view.raw)} characters; the model was stopped there)"
            if view.cut_off
            else f"<b>Raw reply</b> ({len(view.raw)} characters, as the reflector sent it)"
        )
        opened = " open" if view.failure else ""  # an unusable reply is what the card is about
        parts.append(
            f"<details style='margin:0.4em 0'{opened}><summary style='cursor:pointer'>{what}</summary>"
            "<pre style='background:#f4f4f4;padding:0.5em;white-space:pre-wrap;max-height:24em;"
            f"overflow:auto'>{e(view.raw)}</pre></details>"
        )
    table = view.evidence.select(
        pl.when(pl.col("group") != "").then(pl.col("group")).otherwise(pl.col("role")).alias("group"),
        "test",
        "outcome",
        "bucket",
    )
    parts.append(frame_html(table, colours={"outcome": _OUTCOME}) + "</div>")
    return "".join(parts)


def diff_html(diff: str) -> str:
    """A unified diff as a block: added lines green, removed lines red."""
    lines = []
    for ln in diff.splitlines():
        col = "#2e7d32" if ln.startswith("+") else "#c62828" if ln.startswith("-") else "#333"
        lines.append(f'<span style="color:{col}">{html.escape(ln)}</span>')
    return "<pre style='background:#fafafa;border:1px solid #ddd;padding:0.5em'>" + "\n".join(lines) + "</pre>"


def _expected_text(expected: object) -> str:
    """The record's expected verification, in words: which tests must pass, which must stay green."""
    if not isinstance(expected, dict):
        return str(expected or "—")

    def names(key: str) -> str:
        return ", ".join(str(n).split("::")[-1] for n in expected.get(key) or []) or "—"

    must, keep = names("acceptance"), names("protective")
    return f"must now pass: {must}; must stay green: {keep}"


def trace_pages(trace: Trace, suite: AcceptanceSuite | None = None, ledger: pl.DataFrame | None = None) -> list[str]:
    """One HTML page per step (card, plus that step's ledger rows if a ledger frame is given).

    Each card links its first use of a bucket or of the patch-size notation to the glossary.
    """
    pages = []
    for i in range(len(trace.rounds) + 1):
        page = step_html(step_view(trace, i, suite))
        if ledger is not None:
            rows = ledger_rows(ledger, i)
            page += (
                f"<p style='margin-top:0.8em'><b>Ledger rows of {f'round {i}' if i else 'the start'}</b> "
                "(every action, its cost and its evidence hash)</p>" + frame_html(rows)
            )
        pages.append(link_first_uses([page], CARD_TERMS)[0])
    return pages


CARD_TERMS = ("f2p", "p2p", "patch_size")  # the glossary entries a step card links to
