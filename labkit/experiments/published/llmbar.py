"""LLMBar's real judges, re-scored by labkit's swap metrics (Zeng et al., ICLR 2024).

Five judges (GPT-4, ChatGPT, PaLM2, LLaMA2, Falcon; plus ChatGPT-0301, the older ChatGPT) compared
two outputs for one instruction, under several prompting strategies, on LLMBar's Natural set and
its four adversarial sets, each instance in both orders. Their verdicts are read from the committed
tables (`llmbar_build`) and scored with `labkit.experiments.judging.bias.position`, counting a
reply with no verdict as wrong, as the authors do; the result must equal their statistics.json.

The seed's claim, "swapping the order moves pairwise accuracy by more than 10%", is read two ways:
accuracy in the authors' order against the swapped one (`accuracy_order1 − accuracy_order2`), and
accuracy when the better output is shown first against shown second (`gold_first − gold_second`),
which is what a position bias moves; on sets with both labels in equal numbers the first gap can be
near 0 even for a judge that always picks the first slot.

`python -m labkit.experiments.published llmbar [--json]` prints every judge/strategy/set;
`... build-llmbar --repo PATH` rebuilds the tables from a clone of princeton-nlp/LLMBar.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from labkit.core.errors import ReferenceDataMissing
from labkit.core.stats import Interval
from labkit.experiments.judging import bias
from labkit.experiments.published import llmbar_build as build

__all__ = [
    "CLAIM_POINTS",
    "JUDGES",
    "MAIN_STRATEGIES",
    "SOURCE_LABEL",
    "STRATEGIES",
    "Scores",
    "Tables",
    "authors_percent",
    "build_main",
    "claim_frame",
    "load",
    "report_main",
    "score",
    "score_all",
    "swap_table",
]

SOURCE_LABEL = "published run (LLMBar authors' judge verdicts), re-scored by labkit"
JUDGES = ("GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon")
STRATEGIES = (
    "Vanilla",
    "Vanilla_NoRules",
    "Vanilla_1shot",
    "Vanilla_2shot",
    "CoT",
    "Swap",
    "Swap_CoT",
    "Metrics",
    "Reference",
    "Metrics_Reference",
)
# the paper's plain prompt and its best combination (rules + metrics + reference)
MAIN_STRATEGIES = ("Vanilla", "Metrics_Reference")
CLAIM_POINTS = 10.0  # "more than 10%": percentage points of accuracy


@dataclass(frozen=True, eq=False)
class Tables:
    """The committed tables: one row per instance, per verdict pair, per authors' statistics.json."""

    instances: pl.DataFrame
    verdicts: pl.DataFrame
    published: pl.DataFrame


@functools.lru_cache(maxsize=2)
def load(folder: Path | None = None) -> Tables:
    """The tables under data/published/llmbar (or `folder`); ReferenceDataMissing names what to run."""
    d = Path(folder) if folder else build.OUT
    paths = [d / build.INSTANCES, d / build.VERDICTS, d / build.PUBLISHED]
    for p in paths:
        if not p.is_file():
            raise ReferenceDataMissing(f"{p} is missing: rebuild it with `{build.BUILD}`")
    return Tables(pl.read_ndjson(paths[0]), pl.read_parquet(paths[1]), pl.read_ndjson(paths[2]))


@dataclass(frozen=True, kw_only=True)
class Scores:
    """One judge × strategy × set, scored as LLMBar scores it (shares of all instances)."""

    judge: str
    strategy: str
    set: str
    n: int
    n_unparseable: int  # instances where at least one order gave no verdict (counted wrong)
    accuracy_order1: Interval  # output_1 shown as Output (a), the authors' swap = False
    accuracy_order2: Interval  # swapped, swap = True
    consistency: Interval  # same verdict in both orders (two missing verdicts count as the same)
    accuracy_swap_avg: Interval  # the two orders' mean accuracy (the authors' correct_average)
    order_gap: Interval  # accuracy_order1 − accuracy_order2
    gold_first: Interval  # accuracy when the better output is shown first
    gold_second: Interval  # ... and second
    gold_shift: Interval  # gold_first − gold_second

    def as_json(self) -> dict[str, object]:
        return {
            "judge": self.judge,
            "strategy": self.strategy,
            "set": self.set,
            "n": self.n,
            "accuracy_order1": self.accuracy_order1.estimate,
            "accuracy_order2": self.accuracy_order2.estimate,
            "consistency": self.consistency.estimate,
            "accuracy_swap_avg": self.accuracy_swap_avg.estimate,
        }


@dataclass(frozen=True, eq=False, kw_only=True)
class _Columns:
    """Every verdict pair joined to its instance's label and lengths, each column converted to
    numpy once (a folder is an index array into them: no polars conversion per folder)."""

    ids: list[int]
    w12: npt.NDArray[np.int64]
    w21: npt.NDArray[np.int64]
    label: npt.NDArray[np.int64]
    len_1: npt.NDArray[np.float64]
    len_2: npt.NDArray[np.float64]


@functools.lru_cache(maxsize=2)
def _folders(t: Tables) -> tuple[_Columns, dict[tuple[str, str, str], npt.NDArray[np.int64]]]:
    """The joined columns, and (judge, strategy, set) -> its rows (in id order) in them."""
    inst = t.instances.select(
        "set",
        "id",
        "label",
        len_1=pl.col("output_1").str.len_chars(),
        len_2=pl.col("output_2").str.len_chars(),
    )
    rows = t.verdicts.join(inst, on=["set", "id"], how="left", validate="m:1").sort("id")

    def codes(col: str) -> npt.NDArray[np.int64]:
        return rows[col].fill_null(-1).to_numpy().astype(np.int64)

    cols = _Columns(
        ids=rows["id"].to_list(),
        w12=codes("order1"),
        w21=codes("order2"),
        label=codes("label"),
        len_1=rows["len_1"].to_numpy().astype(float),
        len_2=rows["len_2"].to_numpy().astype(float),
    )
    groups = rows.with_row_index("row").group_by(["judge", "strategy", "set"], maintain_order=True).agg("row")
    return cols, {(j, s, x): np.asarray(r, dtype=np.int64) for j, s, x, r in groups.iter_rows()}


def swap_table(t: Tables, judge: str, strategy: str, set_name: str) -> bias.SwapTable:
    """One folder's verdicts as labkit's SwapTable (−1 where a reply gave no verdict)."""
    cols, folders = _folders(t)
    at = folders.get((judge, strategy, set_name))
    if at is None:
        raise KeyError(f"LLMBar has no verdicts for {judge}/{strategy} on {set_name}")
    n = len(at)
    empty = np.full(n, "", dtype=object)
    return bias.SwapTable(
        pair_ids=np.array([f"{set_name}/{cols.ids[i]}" for i in at], dtype=object),
        w12=cols.w12[at],
        w21=cols.w21[at],
        label=cols.label[at],
        len_1=cols.len_1[at],
        len_2=cols.len_2[at],
        quality_1=np.full(n, np.nan),
        quality_2=np.full(n, np.nan),
        model_1=empty,
        model_2=empty,
        kind=np.full(n, set_name, dtype=object),
        judge=judge,
        simulated=False,
    )


def score(t: Tables, judge: str, strategy: str, set_name: str, resamples: int = 1000, seed: int = 0) -> Scores:
    """labkit's position metrics for one folder, missing verdicts counted wrong (LLMBar's rule)."""
    p = bias.position(
        swap_table(t, judge, strategy, set_name),
        resamples=resamples,
        seed=seed,
        unparseable="wrong",
    )
    return Scores(
        judge=judge,
        strategy=strategy,
        set=set_name,
        n=p.n_pairs,
        n_unparseable=p.n_unparseable,
        accuracy_order1=p.accuracy_12,
        accuracy_order2=p.accuracy_21,
        consistency=p.consistency,
        accuracy_swap_avg=p.llmbar,
        order_gap=p.accuracy_gap,
        gold_first=p.gold_first,
        gold_second=p.gold_second,
        gold_shift=p.gold_shift,
    )


def _order(frame: pl.DataFrame) -> pl.DataFrame:
    rank = {name: i for i, name in enumerate(JUDGES + STRATEGIES + tuple(build.SETS))}
    return frame.sort(
        pl.col("judge").replace_strict(rank),
        pl.col("strategy").replace_strict(rank),
        pl.col("set").replace_strict(rank),
    )


@functools.lru_cache(maxsize=4)
def score_all(resamples: int = 0, strategies: tuple[str, ...] | None = None) -> tuple[Scores, ...]:
    """Every judge × strategy × set in the committed tables (judges, strategies, sets in a fixed order);
    `resamples=0`: point estimates only (NaN bounds), what the tables and the claim need."""
    t = load()
    folders = _order(t.verdicts.select("judge", "strategy", "set").unique())
    return tuple(
        score(t, j, s, x, resamples) for j, s, x in folders.iter_rows() if strategies is None or s in strategies
    )


def authors_percent(share: float) -> str:
    """A share written as LLMBar's evaluate.py writes it: `share * 100` with Python's repr, then '%'."""
    return f"{share * 100}%"


def claim_frame(scores: tuple[Scores, ...]) -> pl.DataFrame:
    """Per folder, both readings of the claim: does swapping move accuracy by more than 10 points?"""
    return pl.DataFrame(
        [
            {
                "judge": s.judge,
                "strategy": s.strategy,
                "set": s.set,
                "order_gap_points": 100 * s.order_gap.estimate,
                "gold_shift_points": 100 * s.gold_shift.estimate,
                "order_gap_holds": abs(100 * s.order_gap.estimate) > CLAIM_POINTS,
                "gold_shift_holds": abs(100 * s.gold_shift.estimate) > CLAIM_POINTS,
            }
            for s in scores
        ]
    )


def _table_text(scores: tuple[Scores, ...]) -> str:
    head = (
        f"{'judge':<13}{'strategy':<18}{'set':<9}{'n':>4}{'order 1':>9}{'order 2':>9}{'consistent':>11}{'swap-avg':>9}"
    )
    lines = [SOURCE_LABEL, head]
    for s in scores:
        lines.append(
            f"{s.judge:<13}{s.strategy:<18}{s.set:<9}{s.n:>4}{s.accuracy_order1.estimate:>9.1%}"
            f"{s.accuracy_order2.estimate:>9.1%}{s.consistency.estimate:>11.1%}"
            f"{s.accuracy_swap_avg.estimate:>9.1%}"
        )
    c = claim_frame(scores)
    lines.append(
        f"\n|accuracy_order1 − accuracy_order2| > {CLAIM_POINTS:g} points in {int(c['order_gap_holds'].sum())} "
        f"of {c.height} judge/strategy/set folders; |better shown first − shown second| > "
        f"{CLAIM_POINTS:g} points in {int(c['gold_shift_holds'].sum())}."
    )
    return "\n".join(lines)


def report_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m labkit.experiments.published llmbar",
        description=f"LLMBar's judges, {SOURCE_LABEL}.",
    )
    ap.add_argument("--json", action="store_true", help="one JSON list of judge/strategy/set rows")
    ap.add_argument("--strategy", action="append", choices=STRATEGIES, help="only these strategies (repeatable)")
    args = ap.parse_args(argv)
    scores = score_all(strategies=tuple(args.strategy) if args.strategy else None)
    if args.json:
        print(json.dumps({"source": SOURCE_LABEL, "rows": [s.as_json() for s in scores]}, indent=1))
    else:
        print(_table_text(scores))
    return 0


def build_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m labkit.experiments.published build-llmbar",
        description="Rebuild data/published/llmbar from a local clone of princeton-nlp/LLMBar.",
    )
    ap.add_argument("--repo", type=Path, required=True, help="a clone (work tree) of princeton-nlp/LLMBar")
    ap.add_argument("--out", type=Path, default=build.OUT)
    ap.add_argument(
        "--record-digests",
        action="store_true",
        help="record the clone's digests instead of checking them (only when moving to a new commit)",
    )
    args = ap.parse_args(argv)
    commit = build.clone_commit(args.repo)
    if commit and commit != build.COMMIT:
        print(
            f"note: the clone is at {commit}, the tables record {build.COMMIT}; the digests decide",
            file=sys.stderr,
        )
    if args.record_digests:
        paths, digests = build.discover(args.repo), None
    else:
        digests = build.read_digests(args.out / build.DIGESTS)
        paths = list(digests)
    source = build.read_source(args.repo, paths, digests)
    for f in build.write_tables(source, args.out):
        print(f"wrote {f}")
    print(
        f"{len(source.digests)} original files, digests {'recorded' if digests is None else 'checked'}; "
        f"{len(source.instances)} instances, {len(source.verdicts)} verdict pairs, {len(source.published)} folders"
    )
    load.cache_clear()
    return 0
