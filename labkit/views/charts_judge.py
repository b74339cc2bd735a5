"""Altair charts (and one HTML card) for judge bias and intrinsic self-correction.

Every chart that shows a simulated judge or answerer says so in its labels.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, cast

import altair as alt
import polars as pl

from labkit.core.stats import Interval
from labkit.experiments.judging.bias import LengthControl, PositionReport, SideReport
from labkit.experiments.judging.judge import Swap, shown
from labkit.experiments.judging.selfcorrect import PublishedPoint, Transition
from labkit.views.glossary import link_first_uses


def who(name: str, simulated: bool) -> str:
    """A judge's or answerer's name as shown beside its numbers."""
    return f"{name} (simulated)" if simulated and "simulated" not in name else name


def _rows(series: str, items: Sequence[tuple[str, Interval]], **extra: str) -> list[dict[str, object]]:
    return [
        {
            "series": series,
            "metric": m,
            "value": iv.estimate,
            "low": iv.low,
            "high": iv.high,
            **extra,
        }
        for m, iv in items
    ]


def _bars(
    data: pl.DataFrame,
    title: str,
    x_title: str,
    domain: tuple[float, float] = (0.0, 1.0),
    reference: float | None = None,
) -> alt.LayerChart:
    """Horizontal grouped bars with interval whiskers, one colour per series (in given order)."""
    series = list(dict.fromkeys(data.get_column("series").to_list()))
    if data.select("series", "metric").is_duplicated().any():
        raise ValueError(f"two series share a name in {title!r}: give each judge its own name")
    enc: dict[str, Any] = {
        "y": alt.Y("metric:N", sort=None, title=None, axis=alt.Axis(labelLimit=260)),
        "color": alt.Color("series:N", sort=series, legend=alt.Legend(orient="top", title=None, labelLimit=400)),
    }
    if len(series) > 1:  # side-by-side bars per metric (a one-value offset breaks the layout)
        enc["yOffset"] = alt.YOffset("series:N", sort=series)
    base = alt.Chart(data).encode(**enc)
    bars = base.mark_bar().encode(
        x=alt.X("value:Q", title=x_title, scale=alt.Scale(domain=list(domain)), stack=None),
        tooltip=[
            alt.Tooltip("series:N"),
            alt.Tooltip("metric:N"),
            alt.Tooltip("value:Q", format=".3f"),
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
        ],
    )
    whiskers = base.mark_rule().encode(
        x=alt.X("low:Q"),
        x2=alt.X2("high:Q"),
        y=alt.Y("metric:N", sort=None, bandPosition=0.5),
        color=alt.ColorValue("black"),
    )
    layers: list[alt.Chart] = [bars, whiskers]
    if reference is not None:
        layers.append(
            alt.Chart(pl.DataFrame({"ref": [reference]}))
            .mark_rule(strokeDash=[4, 4], color="gray")
            .encode(x=alt.X("ref:Q"))
        )
    return cast(alt.LayerChart, alt.layer(*layers).properties(title=title, width=300, height=alt.Step(14)))


def position_chart(reports: Sequence[PositionReport]) -> alt.LayerChart:
    """Consistency and the shares biased to the first / second slot, per judge, with intervals."""
    rows = []
    for r in reports:
        rows += _rows(
            who(r.judge, r.simulated),
            [
                ("consistent", r.consistency),
                ("first slot both times", r.first),
                ("second slot both times", r.second),
                ("one tie", r.other),
            ],
        )
    return _bars(pl.DataFrame(rows), "Swap the order: same verdict?", "share of pairs")


def scoring_chart(reports: Sequence[PositionReport]) -> alt.LayerChart:
    """Accuracy in each order and under the three scoring rules, per judge."""
    rows = []
    for r in reports:
        rows += _rows(
            who(r.judge, r.simulated),
            [
                ("A = output 1", r.accuracy_12),
                ("A = output 2", r.accuracy_21),
                ("FastChat (inconsistent = tie)", r.fastchat),
                ("LLMBar (average)", r.llmbar),
                ("JudgeBench (vote)", r.judgebench),
            ],
        )
    return _bars(pl.DataFrame(rows), "Accuracy against the gold label", "accuracy", reference=0.5)


def share_chart(reports: Sequence[SideReport]) -> alt.LayerChart:
    """Share of verdicts for the longer / own output (0.5 = no preference), per slot shown in."""
    rows = []
    for r in reports:
        rows += _rows(
            who(r.judge, r.simulated),
            [
                (f"{r.what}: both orders", r.share),
                (f"{r.what}: shown first", r.shown_first),
                (f"{r.what}: shown second", r.shown_second),
            ],
        )
    return _bars(pl.DataFrame(rows), "Verbosity and self-preference", "share of verdicts", reference=0.5)


def winrate_chart(lc: LengthControl) -> alt.LayerChart:
    """Raw against length-controlled win rate per model, against the baseline."""
    rows = []
    for r in lc.rates:
        rows += _rows("raw", [(r.model, r.raw)])
        rows += _rows("length-controlled", [(r.model, r.length_controlled)])
    title = f"Win rate vs {lc.rates[0].baseline if lc.rates else '?'} — judge {who(lc.judge, lc.simulated)}"
    return _bars(pl.DataFrame(rows), title, "win rate", reference=0.5)


def accuracy_chart(published: Sequence[PublishedPoint], lab: Mapping[str, Sequence[Interval]]) -> alt.LayerChart:
    """Accuracy by self-correction round: the published table beside the lab's own runs.

    `lab` maps a series name (say so if simulated) to per-round accuracies (0..1).
    """
    pub = pl.DataFrame(
        [
            {
                "series": f"{p.model} · {p.benchmark}",
                "round": p.round,
                "accuracy": p.accuracy,
                "low": p.accuracy,
                "high": p.accuracy,
                "from": "Huang et al. 2024",
            }
            for p in published
        ]
    )
    mine = pl.DataFrame(
        [
            {
                "series": name,
                "round": r,
                "accuracy": 100 * iv.estimate,
                "low": 100 * iv.low,
                "high": 100 * iv.high,
                "from": "this lab",
            }
            for name, ivs in lab.items()
            for r, iv in enumerate(ivs)
        ]
    )
    data = pl.concat([pub, mine]) if mine.height else pub
    base = alt.Chart(data).encode(
        x=alt.X("round:O", title="self-correction round (0 = first answer)", axis=alt.Axis(labelAngle=0)),
        color=alt.Color("series:N", legend=alt.Legend(orient="right", title=None, labelLimit=400)),
    )
    lines = base.mark_line(point=True).encode(
        y=alt.Y("accuracy:Q", title="accuracy (%)", scale=alt.Scale(domain=[0, 100])),
        strokeDash=alt.StrokeDash("from:N", legend=alt.Legend(title=None, orient="bottom")),
        tooltip=[alt.Tooltip(t) for t in ("series:N", "from:N", "round:O")] + [alt.Tooltip("accuracy:Q", format=".1f")],
    )
    whiskers = base.mark_rule().encode(y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
    return cast(
        alt.LayerChart,
        alt.layer(lines, whiskers).properties(title="Intrinsic self-correction: no oracle", width=320, height=240),
    )


def transitions_chart(transitions: Sequence[Transition], title: str) -> alt.Chart:
    """Per round, where the questions went: right→right, right→wrong, wrong→right, wrong→wrong."""
    kinds = [
        ("right → right", "right_right"),
        ("right → wrong", "right_wrong"),
        ("wrong → right", "wrong_right"),
        ("wrong → wrong", "wrong_wrong"),
    ]
    data = pl.DataFrame(
        [
            {
                "round": f"round {t.round}",
                "transition": label,
                "order": i,
                "share": getattr(t, field).estimate,
                "n": t.n,
            }
            for t in transitions
            for i, (label, field) in enumerate(kinds)
        ]
    )
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("round:N", title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("share:Q", title="share of questions", stack="zero", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "transition:N",
                sort=[k for k, _ in kinds],
                scale=alt.Scale(range=["#4c78a8", "#e45756", "#54a24b", "#bab0ac"]),
                legend=alt.Legend(orient="right", title=None),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("round:N"),
                alt.Tooltip("transition:N"),
                alt.Tooltip("share:Q", format=".3f"),
                alt.Tooltip("n:Q"),
            ],
        )
        .properties(title=title, width=alt.Step(60), height=200)
    )


def stopping_chart(no_oracle: Sequence[Interval], oracle: Sequence[Interval], title: str) -> alt.LayerChart:
    """Accuracy per round with no oracle against stopping when correct (which needs the oracle)."""
    rows = _rows("no oracle", [(f"round {r}", iv) for r, iv in enumerate(no_oracle)])
    rows += _rows("oracle stopping", [(f"round {r}", iv) for r, iv in enumerate(oracle)])
    return _bars(pl.DataFrame(rows), title, "accuracy")


def swap_html(swap: Swap) -> str:
    """One pair in both orders, side by side, with what the judge picked each time (the letters'
    share of the first token, when known, links to its glossary entry)."""
    p = swap.pair

    def side(order: str) -> str:
        j = swap.first if order == "12" else swap.second
        a, b = shown(p, "12" if order == "12" else "21")
        pick = j.pick or "no verdict"
        won = {1: "output 1", 2: "output 2", 0: "a tie"}.get(j.winner, "nothing") if j.winner is not None else "nothing"
        probs = f" · P(A)={j.probs[0]:.2f}, P(B)={j.probs[1]:.2f}" if j.probs else ""
        if j.mass is not None:
            probs += f" (letters held {j.mass:.0%} of the first token)"
        return (
            f"<div style='flex:1;border:1px solid #ccc;border-radius:6px;padding:8px'>"
            f"<b>Order {order[0]}→{order[1]}</b><br><small>A:</small> {html.escape(a)}<br>"
            f"<small>B:</small> {html.escape(b)}<br>"
            f"<b>picked {html.escape(pick)}</b> = {won}{probs}</div>"
        )

    verdict = (
        "<b style='color:#c0392b'>the verdict flipped with the order</b>"
        if swap.flipped
        else "the verdict held in both orders"
    )
    gold = (
        {1: "output 1", 2: "output 2", 0: "equal quality"}.get(p.label, "unknown") if p.label is not None else "unknown"
    )
    judge = who(swap.first.judge, swap.first.simulated)
    sides = link_first_uses([side("12") + side("21")], ["letter_mass"])[0]  # "first token" -> glossary
    return (
        f"<div><p><b>Question:</b> {html.escape(p.question)}<br><small>judge: {html.escape(judge)} · "
        f"gold: {gold}</small></p><div style='display:flex;gap:8px'>{sides}</div>"
        f"<p>{verdict}</p></div>"
    )
