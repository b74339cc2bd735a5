"""When the buffer's token budget binds (SIMULATED actor; real HumanEval problems with real
visible-failing mutants of their canonical solutions, real validation, hidden scoring): a tight
budget loses success against a generous one at the same trials, whichever end it keeps; folding
the dropped reflections into a one-line summary recovers it. Directions asserted with paired
intervals over (seed, problem) units."""

from __future__ import annotations

import pytest

from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import truncation as tr
from labkit.grading.verdicts import Checker

# real validation of every state (a few hundred pytest runs through the sandbox): minutes on a shared CPU
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

SETTING = tr.Setting()  # 6 drawn problems, up to 8 mutants, 8 trials, 4000 vs 150 tokens, 12 seeds
LAST = SETTING.trials
NONE, GENEROUS, NEWEST, OLDEST, SUMMARY = (a.name for a in tr.arms(SETTING))


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def run(checker: Checker) -> tuple[tuple, rx.Result]:  # type: ignore[type-arg]
    return tr.measure(SETTING, checker)


def test_the_tight_budget_really_truncates_realistic_reflections(run: tuple, checker: Checker) -> None:  # type: ignore[type-arg]
    problems, _ = run
    assert len(problems) >= 4 and all(sum(p.name.startswith("mutant") for p in c.patches) >= 6 for c in problems)
    assert tr.reflection_tokens(problems, checker, SETTING).low > 50  # realistic length (measured ~78)
    _, strategy = rx.run_arm(tr.arms(SETTING)[2], problems, checker, trials=LAST, seed=0, p_fix=SETTING.p_fix)
    windows = [w for _, _, w in strategy.windows]
    assert all(w.tokens <= SETTING.tight for w in windows)
    assert max(len(w.reflections) for w in windows) == 1 and max(w.dropped for w in windows) >= 3


def test_a_tight_budget_costs_success_whichever_end_it_keeps(run: tuple) -> None:  # type: ignore[type-arg]
    _, result = run
    assert result.difference(GENEROUS, NONE, LAST).estimate > 0
    assert result.difference(NEWEST, GENEROUS, LAST).high < 0
    assert result.difference(OLDEST, GENEROUS, LAST).high < 0
    # one reflection either way rules out exactly one wrong answer: for this actor the same
    # chance of the fix, so keeping the oldest or the newest gives identical success
    assert result.difference(OLDEST, NEWEST, LAST).estimate == 0


def test_summarising_what_was_dropped_recovers_the_generous_buffer(run: tuple) -> None:  # type: ignore[type-arg]
    _, result = run
    assert result.difference(SUMMARY, NEWEST, LAST).low > 0
    # the summary line keeps every ruled-out action, which is all this actor reads
    for t in range(1, LAST + 1):
        assert result.difference(SUMMARY, GENEROUS, t).estimate == 0
