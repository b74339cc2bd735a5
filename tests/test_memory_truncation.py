"""When the buffer's token budget binds (SIMULATED actor; real HumanEval problems with real
visible-failing mutants of their canonical solutions, real validation, hidden scoring): a tight
budget loses success against a generous one at the same trials, whichever end it keeps; folding
the dropped reflections into a one-line summary recovers it. Directions asserted with paired
intervals over (seed, problem) units.

The full measurement (`truncation.Setting()`: 6 drawn problems, up to 8 mutants, 8 trials, 12
seeds) takes minutes of real validation, so it is recorded once (data/memory/
simulated_reflexion.json, section "truncation") and the intervals here are recomputed from the
recorded rows. This module re-measures a slice in-process — the first two recorded problems,
loaded with their measured failing mutants, every state validated for real — checks the
truncation on real reflections there, and compares the slice's rows exactly with the
recording's, so the rows read here are what labkit computes."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import polars as pl
import pytest
from recordings import assert_as_recorded

from labkit.experiments.memory import on_humaneval as he
from labkit.experiments.memory import recording as rec
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import truncation as tr
from labkit.grading.verdicts import Checker
from labkit.views import memory_buffer as buf

SETTING = tr.Setting()  # 6 drawn problems, up to 8 mutants, 8 trials, 4000 vs 150 tokens, 12 seeds
LAST = SETTING.trials
NONE, GENEROUS, NEWEST, OLDEST, SUMMARY = (a.name for a in tr.arms(SETTING))


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    r = buf.load()
    assert r["truncation"]["setting"] == json.loads(json.dumps(asdict(SETTING)))
    return r


@pytest.fixture(scope="module")
def result(record: dict[str, Any]) -> rx.Result:
    return rx.Result(rec.rows(record["truncation"]))


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def sliced(record: dict[str, Any], checker: Checker) -> tuple[he.HumanEvalCase, ...]:
    # loaded as truncation.problems loads them: failing mutants measured, every state validated up front
    problems = he.load(record["truncation"]["cases"][:2], mutants=SETTING.mutants, checker=checker)
    checker.warm(
        [
            (st.candidate, s)
            for p in problems
            for st in p.states.values()
            for s in (p.task.suite, p.task.hidden)
            if s is not None
        ],
        workers=2,
    )
    return problems


@pytest.mark.slow  # real validation of two problems' states (their mutants included): under a minute
@pytest.mark.timeout(900)
def test_the_tight_budget_really_truncates_realistic_reflections(
    record: dict[str, Any], checker: Checker, sliced: tuple[he.HumanEvalCase, ...]
) -> None:
    t = record["truncation"]
    assert len(t["cases"]) >= 4  # kept by the measured filter, out of SETTING.problems drawn
    assert len(sliced) == 2 and all(sum(p.name.startswith("mutant") for p in c.patches) >= 6 for c in sliced)
    assert t["reflection_tokens"][1] > 50  # realistic length over every problem (recorded ~78)
    assert tr.reflection_tokens(sliced, checker, SETTING).low > 50  # and on the slice, measured now
    arm = tr.arms(SETTING)[2]  # tight, keep newest: the buffer is cut
    got, strategy = rx.run_arm(arm, sliced, checker, trials=LAST, seed=0, p_fix=SETTING.p_fix)
    windows = [w for _, _, w in strategy.windows]
    assert all(w.tokens <= SETTING.tight for w in windows)
    assert max(len(w.reflections) for w in windows) == 1 and max(w.dropped for w in windows) >= 3
    recorded = rec.rows(t)
    want = recorded.filter(
        (pl.col("arm") == arm.name) & (pl.col("seed") == 0) & pl.col("case").is_in([c.id for c in sliced])
    )
    assert_as_recorded(
        got.sort("case", "trial").to_dicts(),
        want.select("case", "trial", "correct").to_dicts(),
        record,
        f"truncation rows of {arm.name}, seed 0",
    )


def test_a_tight_budget_costs_success_whichever_end_it_keeps(result: rx.Result) -> None:
    assert result.difference(GENEROUS, NONE, LAST).estimate > 0
    assert result.difference(NEWEST, GENEROUS, LAST).high < 0
    assert result.difference(OLDEST, GENEROUS, LAST).high < 0
    # one reflection either way rules out exactly one wrong answer: for this actor the same
    # chance of the fix, so keeping the oldest or the newest gives identical success
    assert result.difference(OLDEST, NEWEST, LAST).estimate == 0


def test_summarising_what_was_dropped_recovers_the_generous_buffer(result: rx.Result) -> None:
    assert result.difference(SUMMARY, NEWEST, LAST).low > 0
    # the summary line keeps every ruled-out action, which is all this actor reads
    for t in range(1, LAST + 1):
        assert result.difference(SUMMARY, GENEROUS, t).estimate == 0
