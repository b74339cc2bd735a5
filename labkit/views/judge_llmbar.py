"""The judge-bias notebook's "Real judges (LLMBar)" section, built once for both notebooks.

Everything here reads the committed LLMBar tables (data/published/llmbar) and scores them with
`labkit.experiments.published.llmbar` (labkit's swap metrics): nothing is fetched, no model runs.
Every chart and table carries the source label: published run (LLMBar authors' judge verdicts),
re-scored by labkit.
"""

from __future__ import annotations

from typing import Any, cast

import altair as alt
import polars as pl

from labkit.experiments.judging.judge import Judgment, Swap
from labkit.experiments.judging.pairs import Pair
from labkit.experiments.published import llmbar as L
from labkit.experiments.published.llmbar_build import SETS
from labkit.views import charts_judge as cj
from labkit.views.stepper import Stepper

__all__ = [
    "CLAIM_CAPTION", "FLIP_JUDGE", "INTRO", "LABEL", "STRATEGY", "TABLE_CAPTION", "TITLE", "accuracy_chart",
    "claim_md", "claim_people", "consistency_chart", "flip_stepper", "flips", "flips_md", "scores_for",
    "shift_chart", "table_people",
]  # fmt: skip

TITLE = "Real judges (LLMBar)"
LABEL = L.SOURCE_LABEL
STRATEGY = ("strategy", list(L.STRATEGIES), "Vanilla")  # (label, options, default) of the dropdown
FLIP_JUDGE = ("judge whose flips to step through", list(L.JUDGES), "ChatGPT")
_SETS = list(SETS)
_JUDGES = list(L.JUDGES)

INTRO = f"""## {TITLE}

Everything above used a simulated judge or a small local one. The LLMBar authors (Zeng et al.,
*Evaluating Large Language Models at Evaluating Instruction Following*, ICLR 2024) published real
pairwise verdicts: **GPT-4, ChatGPT** (gpt-3.5-turbo-0613, and its older 0301 snapshot), **PaLM2**
(text-bison-001), **LLaMA2** (70B chat) and **Falcon** (180B chat) each chose the better of two
outputs for one instruction, **in both orders**, under several prompting strategies. The sets:
*Natural* (100 instances) and four *adversarial* sets (Neighbor, GPTInst, GPTOut, Manual) built
so that the output that follows the instruction is not the one that merely looks better.

labkit reads the authors' verdicts (commit 900616b, MIT licence; `data/published/llmbar/SOURCE.md`)
and scores them with its own swap metrics. A reply with no verdict counts as wrong, as in the
authors' code, and every number equals their `statistics.json` exactly, in all 290
judge × strategy × set folders (tests/test_llmbar_published.py). Order 1 shows the outputs as the
data lists them, order 2 swaps them. Choose a prompting strategy:

_All figures in this section: {LABEL}._"""


def scores_for(strategy: str) -> tuple[L.Scores, ...]:
    """Every judge and set under one strategy, with 95% bootstrap intervals (1000 resamples)."""
    return L.score_all(1000, (strategy,))


def _titled(chart: Any, title: str) -> alt.TopLevelMixin:
    return cast(
        alt.TopLevelMixin,
        chart.properties(title=alt.TitleParams(title, subtitle=LABEL, anchor="start")),
    )


def _points(scores: tuple[L.Scores, ...]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "judge": s.judge,
                "set": s.set,
                "order 1": 100 * s.accuracy_order1.estimate,
                "order 2": 100 * s.accuracy_order2.estimate,
                "consistent": 100 * s.consistency.estimate,
                "shift": 100 * s.gold_shift.estimate,
                "low": 100 * s.gold_shift.low,
                "high": 100 * s.gold_shift.high,
            }
            for s in scores
        ]
    )


def accuracy_chart(scores: tuple[L.Scores, ...]) -> alt.TopLevelMixin:
    """Accuracy in order 1 and order 2, per judge, one panel per set (a line joins the two orders)."""
    d = _points(scores)
    long = d.unpivot(
        on=["order 1", "order 2"],
        index=["judge", "set"],
        variable_name="order",
        value_name="accuracy",
    )
    y = alt.Y("judge:N", sort=_JUDGES, title=None)
    x = alt.X("accuracy:Q", title="accuracy (%)", scale=alt.Scale(domain=[0, 100]))
    rule = alt.Chart().mark_rule(color="#999").encode(x=alt.X("min(accuracy):Q"), x2=alt.X2("max(accuracy):Q"), y=y)
    dots = (
        alt.Chart()
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            y=y,
            color=alt.Color("order:N", legend=alt.Legend(orient="top", title=None)),
            shape=alt.Shape("order:N"),
            tooltip=[alt.Tooltip(t) for t in ("judge:N", "set:N", "order:N")]
            + [alt.Tooltip("accuracy:Q", format=".1f")],
        )
    )
    chart = (
        alt.layer(rule, dots, data=long)
        .properties(width=150, height=alt.Step(18))
        .facet(column=alt.Column("set:N", sort=_SETS, title=None))
    )
    return _titled(chart, "Accuracy in each order")


def consistency_chart(scores: tuple[L.Scores, ...]) -> alt.TopLevelMixin:
    """The share of instances with the same verdict in both orders, judge × set."""
    d = _points(scores).with_columns(text=pl.col("consistent").round(1).cast(pl.String) + "%")
    base = alt.Chart(d).encode(
        x=alt.X("set:N", sort=_SETS, title=None, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("judge:N", sort=_JUDGES, title=None),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "consistent:Q",
            title="same verdict (%)",
            scale=alt.Scale(domain=[0, 100], scheme="blues"),
        )
    )
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("text:N"),
        color=alt.ColorValue("black", condition={"test": "datum.consistent > 60", "value": "white"}),
    )
    return _titled(alt.layer(cells, text).properties(width=420, height=alt.Step(24)), "Same verdict in both orders")


def shift_chart(scores: tuple[L.Scores, ...]) -> alt.TopLevelMixin:
    """Accuracy with the better output shown first minus shown second (points, 95% interval); the
    dashed lines mark ±10 points, the seed's threshold."""
    y = alt.Y("judge:N", sort=_JUDGES, title=None)
    x = alt.X("shift:Q", title="points", stack=None, scale=alt.Scale(domain=[-40, 100], clamp=True))
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=x,
            y=y,
            color=alt.ColorValue("#7f8c8d", condition={"test": "abs(datum.shift) > 10", "value": "#c0392b"}),
            tooltip=[
                alt.Tooltip("judge:N"),
                alt.Tooltip("set:N"),
                alt.Tooltip("shift:Q", format=".1f"),
                alt.Tooltip("low:Q", format=".1f"),
                alt.Tooltip("high:Q", format=".1f"),
            ],
        )
    )
    whiskers = alt.Chart().mark_rule(color="black").encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y)
    limits = [alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.XDatum(v)) for v in (-10, 10)]
    chart = alt.layer(bars, whiskers, *limits, data=_points(scores)).properties(width=140, height=alt.Step(18))
    chart = chart.facet(column=alt.Column("set:N", sort=_SETS, title=None))
    return _titled(
        chart,
        "What the order moves: accuracy with the better output shown first − shown second (points)",
    )


def table_people(scores: tuple[L.Scores, ...]) -> pl.DataFrame:
    """The judge table: plain headers, percentages to one decimal (show with digits=1), counts as integers."""
    return pl.DataFrame(
        [
            {
                "judge": s.judge,
                "set": s.set,
                "instances": s.n,
                "accuracy, order 1 (%)": 100 * s.accuracy_order1.estimate,
                "accuracy, order 2 (%)": 100 * s.accuracy_order2.estimate,
                "same verdict both orders (%)": 100 * s.consistency.estimate,
                "swap-averaged accuracy (%)": 100 * s.accuracy_swap_avg.estimate,
                "better first − second (points)": 100 * s.gold_shift.estimate,
                "no verdict (instances)": s.n_unparseable,
            }
            for s in scores
        ]
    )


def claim_people() -> pl.DataFrame:
    """Per judge, over every strategy and set: in how many folders swapping moves accuracy > 10 points."""
    c = L.claim_frame(L.score_all())
    per = c.group_by("judge").agg(
        pl.len().alias("folders"),
        pl.col("order_gap_holds").sum().cast(pl.Int64).alias("order 1 vs order 2: > 10 points"),
        pl.col("gold_shift_holds").sum().cast(pl.Int64).alias("better first vs second: > 10 points"),
    )
    per = per.sort(pl.col("judge").replace_strict({j: i for i, j in enumerate(_JUDGES)}))
    total = per.select(pl.lit("all judges").alias("judge"), pl.all().exclude("judge").sum())
    return pl.concat(
        [per.with_columns(pl.col("folders").cast(pl.Int64)), total.with_columns(pl.col("folders").cast(pl.Int64))]
    )


def claim_md(strategy: str) -> str:
    """The seed's claim against the data: counts computed from every folder, and the chosen strategy's."""
    c = L.claim_frame(L.score_all())
    here = c.filter(pl.col("strategy") == strategy)
    gpt4 = c.filter(pl.col("judge") == "GPT-4")
    ones = L.load().instances.group_by("set").agg((pl.col("label") == 1).mean().alias("share"))["share"]
    return f"""**The seed's claim: "swapping the order moves pairwise accuracy by more than 10%".** On real
judges it depends on which accuracy. *Order 1 against order 2* (the data's order against the
swapped one): more than 10 points in **{int(c["order_gap_holds"].sum())} of {c.height}** folders
({int(here["order_gap_holds"].sum())} of {here.height} under {strategy}). That gap hides the bias: in every
set output 1 is the better one about half the time ({min(ones):.0%} to {max(ones):.0%} of a set's
instances), so a judge that always picks the first slot scores about the same in either order. *Better output shown first against shown second* (what a
position bias moves): more than 10 points in **{int(c["gold_shift_holds"].sum())} of {c.height}**
folders ({int(here["gold_shift_holds"].sum())} of {here.height} under {strategy}), yet in only
{int(gpt4["gold_shift_holds"].sum())} of GPT-4's {gpt4.height}. The claim holds for the weaker
judges and fails for the strongest; the swap-averaged accuracy is the one number that does not
depend on the order shown."""


TABLE_CAPTION = (
    f"**The judge table** ({LABEL}). Accuracy in each order, the same-verdict share and the "
    "swap-averaged accuracy equal the authors' statistics.json."
)
CLAIM_CAPTION = f"**Folders where swapping moves accuracy by more than 10 points**, every strategy and set ({LABEL}):"


def flips_md(judge: str, strategy: str, n_flips: int) -> str:
    """What the flip stepper shows, or why it shows nothing."""
    t = L.load().verdicts
    if t.filter((pl.col("judge") == judge) & (pl.col("strategy") == strategy)).height == 0:
        return f"_The authors did not run {judge} with the {strategy} strategy: choose another._"
    if n_flips == 0:
        return f"_{judge} never changed its verdict with the order under {strategy}._"
    return (
        f"**{judge} changed its verdict with the order on {n_flips} instances under {strategy}.** "
        f"Step through them: the instruction, both outputs as shown in each order, the authors' "
        f"label (gold) and the verdict in each order ({LABEL})."
    )


def _swap(row: dict[str, Any], judge: str, strategy: str) -> Swap:
    pair = Pair(
        id=f"{row['set']} #{row['id']}",
        question=row["input"],
        output_1=row["output_1"],
        output_2=row["output_2"],
        label=row["label"],
        kind="llmbar",
    )
    name = f"{judge} ({strategy}; LLMBar published run)"

    def seen(order: str, winner: int | None) -> Judgment:
        pick = None if winner is None else ("A" if (winner == 1) == (order == "12") else "B")
        return Judgment(pair_id=pair.id, order=order, pick=pick, judge=name, simulated=False)  # type: ignore[arg-type]

    return Swap(pair, seen("12", row["order1"]), seen("21", row["order2"]))


def flips(judge: str, strategy: str) -> list[Swap]:
    """The instances where the judge's verdict changed with the order (both orders gave one)."""
    t = L.load()
    v = t.verdicts.filter(
        (pl.col("judge") == judge) & (pl.col("strategy") == strategy) & (pl.col("order1") != pl.col("order2"))
    )
    rows = v.join(t.instances, on=["set", "id"]).sort(
        pl.col("set").replace_strict({s: i for i, s in enumerate(_SETS)}), "id"
    )
    return [_swap(r, judge, strategy) for r in rows.iter_rows(named=True)]


def flip_stepper(judge: str, strategy: str) -> tuple[list[Swap], Stepper | None]:
    """A stepper over the judge's flips: instruction, both outputs, the label, the verdict in each order."""
    shown = flips(judge, strategy)
    if not shown:
        return shown, None
    return shown, Stepper(len(shown), [s.pair.id for s in shown], unit="flip", pages=[cj.swap_html(s) for s in shown])
