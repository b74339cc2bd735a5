"""Step pages for "is reflection worth it?": one case, every arm, round by round, read from a ledger.

Each page shows what one arm did in one round of one job (`arms/<suite>/<case>/<arm>/<seed>`):
the request(s) as sent to the model (only visible evidence ever reaches a prompt: the arms'
policies are given the visible suite alone), the reply, each candidate's code, its visible
test results (test by test), its hidden result (pass or fail only: no hidden test text is
shown), the engine's decision, and the round's spend beside the job's limit. Pages are built
once from recorded events; the Stepper shows them without a kernel round trip.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Event, Ledger
from labkit.views.arms_page import arm_name
from labkit.views.glossary import term_link
from labkit.views.stepper import Stepper
from labkit.views.tables import frame_html

__all__ = ["case_pages", "case_stepper", "calls_of", "stepper_cases"]

_PROMPT = re.compile(r"<prompt>\n(.*?)\n</prompt>\n?", re.S)
_PRE = "background:#f6f6f6;border:1px solid #ddd;padding:0.4em;white-space:pre-wrap;word-break:break-word;max-height:18em;overflow:auto;margin:0.2em 0"
_DECISION = {"keep": "#2e7d32", "roll back": "#c62828", "keep investigating": "#ef6c00", "stop": "#455a64"}


def calls_of(raw: str) -> list[tuple[str, str]]:
    """(prompt as sent, reply) per model call in a reflector's recorded output; prompt "" when none was kept."""
    marks = list(_PROMPT.finditer(raw))
    if not marks:
        return [("", raw.strip())] if raw.strip() else []
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(raw)
        reply = raw[m.end() : end]
        out.append((m.group(1), reply.removesuffix("\n---\n").strip()))
    return out


def stepper_cases(ledger: Ledger) -> list[str]:
    """The cases of a ledger's arms jobs, in order (the stepper shows one of them)."""
    seen: dict[str, None] = {}
    for rid in ledger.runs():
        if rid.startswith("arms/"):
            seen.setdefault(rid.split("/")[2], None)
    return list(seen)


def _text(ledger: Ledger, h: str) -> str:
    if not h:
        return ""
    got = ledger.get(h)
    return got.decode("utf-8", "replace") if isinstance(got, bytes) else str(got)


def _code(ledger: Ledger, e: Event) -> str:
    try:
        files = json.loads(_text(ledger, e.output_hash)).get("files", {})
    except (json.JSONDecodeError, AttributeError):
        return ""
    return "\n".join(f"# --- {name}\n{body}" if len(files) > 1 else str(body) for name, body in files.items())


def _visible(e: Event) -> list[dict[str, Any]]:
    ev = e.evidence_value or {}
    results = ((ev.get("verdict") or {}).get("evidence") or {}).get("results") or []
    return [
        {"id": str(r[0]), "test": str(r[0]).split("::")[-1], "outcome": str(r[1]), "message": str(r[2])[:300]}
        for r in results
    ]


def _round_page(
    ledger: Ledger,
    arm: str,
    case: str,
    rnd: int,
    evs: list[Event],
    before: list[Event],
    limit: dict[str, Any],
    simulated: bool,
) -> str:
    e = html.escape
    at = [x for x in evs if x.round == rnd]
    settled = [x for x in at if x.role == Role.BUDGET and x.calls + x.tokens + x.cost_units + x.wall_seconds > 0]
    so_far = [x for x in before if x.role == Role.BUDGET] + settled
    n_calls = sum(x.calls for x in settled)
    spend = (
        f"<b>spend this round</b>: {n_calls} call{'' if n_calls == 1 else 's'}, {sum(x.tokens for x in settled)} tokens, "
        f"{sum(x.wall_seconds for x in settled):.1f} s · <b>so far</b>: {sum(x.calls for x in so_far)} of "
        f"{limit.get('calls', '?')} calls, {sum(x.tokens for x in so_far)} of {limit.get('tokens', '?')} tokens"
    )
    who = "SIMULATED policy" if simulated else "real model"
    parts = [
        f"<h4 style='margin:0 0 4px'>{e(arm_name(arm))} · round {rnd} · {e(case)} <span style='color:#666;font-weight:normal'>({who})</span></h4>",
        f"<p style='margin:2px 0'>{spend}</p>",
    ]
    calls = [
        c
        for x in at
        if x.role == Role.REFLECTOR and x.kind == Kind.REFLECT
        for c in calls_of(_text(ledger, x.output_hash))
    ]
    notes = [str(x.detail.get("failure") or x.detail.get("note") or "") for x in at if x.role == Role.REFLECTOR]
    if notes and any(notes):
        parts.append(f"<p style='margin:2px 0'><b>arm says</b>: {e('; '.join(n for n in notes if n))}</p>")
    for k, (prompt, reply) in enumerate(calls, 1):
        head = f"call {k}" if len(calls) > 1 else "the call"
        asked = (
            (
                f"<details><summary>{head}: the prompt as sent ({len(prompt)} characters; visible tests and their "
                f"results only)</summary><pre style='{_PRE}'>{e(prompt)}</pre></details>"
            )
            if prompt
            else f"<p style='margin:2px 0'>{head}: no prompt (a simulated policy picks among the case's measured states)</p>"
        )
        parts.append(asked + f"<div style='margin:2px 0'><b>reply</b></div><pre style='{_PRE}'>{e(reply[:4000])}</pre>")
    if not calls:
        parts.append("<p style='margin:2px 0'>no model call this round</p>")
    scored = {s.candidate: s for s in outcomes.scores(at)}
    verified = {str(x.detail.get("candidate")): x for x in at if x.role == Role.VALIDATOR and x.kind == Kind.VERIFY}
    decided = {ch.name: ch for d in outcomes.decisions(at) for ch in d.each}
    rows, details = [], []
    for g in (x for x in at if x.role == Role.EXECUTOR and x.kind == Kind.GENERATE):
        cand = str(g.detail.get("candidate"))
        vis = _visible(verified[cand]) if cand in verified else []
        passed = sum(v["outcome"] == "passed" for v in vis)
        n_tests = sum("::" in v["id"] for v in vis)
        hidden = scored.get(cand)
        name = str(g.detail.get("proposal") or cand[:8])
        d = decided.get(name)
        rows.append(
            {
                "candidate": name,
                "visible passed": f"{passed}/{n_tests}" if vis else "—",
                "hidden": ("pass" if hidden.correct else "fail") if hidden else "— (not kept)",
                "decision": d.decision if d else "—",
                "why": d.reason if d else "",
            }
        )
        table = (
            frame_html(
                pl.DataFrame(vis).drop("id"),
                colours={"outcome": {"passed": "#2e7d32", "failed": "#c62828", "error": "#c62828"}},
            )
            if vis
            else ""
        )
        details.append(
            f"<details><summary>{e(rows[-1]['candidate'])}: code and visible test results</summary>"
            f"<pre style='{_PRE}'>{e(_code(ledger, g))}</pre>{table}</details>"
        )
    if rows:
        parts.append(
            frame_html(
                pl.DataFrame(rows), colours={"hidden": {"pass": "#2e7d32", "fail": "#c62828"}, "decision": _DECISION}
            )
            + "".join(details)
        )
    for h in scored.values():
        held = "pass" if h.correct else "fail"
        parts.append(
            f"<p style='margin:2px 0'><b>held after this round</b>: {e(h.state)} · "
            f"visible {'pass' if h.visible else 'fail'} · <b>hidden {held}</b></p>"
        )
    for s in (x for x in at if x.kind == Kind.STOP):
        parts.append(
            f"<p style='margin:2px 0'><b>{term_link('stop_reasons', 'stop')}</b>: "
            f"{e(str(s.detail.get('reason', '')))}</p>"
        )
    return "<div class='labkit-arms-step' style='line-height:1.4'>" + "".join(parts) + "</div>"


def case_pages(ledger: Ledger, case: str | None = None, seed: int = 0) -> tuple[list[str], list[str]]:
    """(labels, pages): one page per round of each arm's job on `case` (default: the ledger's first)."""
    cases = stepper_cases(ledger)
    if not cases:
        raise ValueError("the ledger holds no arms runs (run ids arms/<suite>/<case>/<arm>/<seed>)")
    case = case or cases[0]
    if case not in cases:
        raise ValueError(f"the ledger has no arms job on case {case!r}; it has {cases}")
    labels: list[str] = []
    pages: list[str] = []
    for rid in (
        r for r in ledger.runs() if r.startswith("arms/") and r.split("/")[2] == case and r.endswith(f"/{seed}")
    ):
        arm = rid.split("/")[3]
        evs = list(ledger.events(rid))
        define = next((x for x in evs if x.role == Role.EXPERIMENT and x.kind == Kind.DEFINE), None)
        if define is None:
            labels.append(arm_name(arm))
            reason = next((str(x.detail.get("reason", "")) for x in evs if x.kind == Kind.STOP), "")
            pages.append(
                f"<h4 style='margin:0'>{html.escape(arm_name(arm))} · {html.escape(case)}</h4><p><b>not available</b>: {html.escape(reason)}</p>"
            )
            continue
        limit, simulated = dict(define.detail.get("limit") or {}), bool(define.detail.get("simulated"))
        for rnd in sorted({x.round for x in evs if x.round > 0}):
            labels.append(f"{arm_name(arm)}, round {rnd}")
            pages.append(
                _round_page(ledger, arm, case, rnd, evs, [x for x in evs if 0 < x.round < rnd], limit, simulated)
            )
    if not pages:
        raise ValueError(f"no arms job on case {case!r} with seed {seed}")
    return labels, pages


def case_stepper(ledger: Ledger, case: str | None = None, seed: int = 0, arms: Sequence[str] | None = None) -> Stepper:
    """A Stepper over `case_pages` (marimo: wrap in mo.ui.anywidget; JupyterLab: display it)."""
    labels, pages = case_pages(ledger, case, seed)
    if arms is not None:
        names = {arm_name(a) for a in arms}
        keep = [i for i, lab in enumerate(labels) if lab.split(", round ")[0] in names]
        labels, pages = [labels[i] for i in keep], [pages[i] for i in keep]
    return Stepper(len(pages), labels, unit="step", pages=pages)
