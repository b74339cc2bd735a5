"""Reflexion on the repair cases (SIMULATED actor; real patches, real pytest verdicts, hidden
scoring): the buffer helps at the same trials; sparse reward gives it nothing; an entrenched
false belief stalls it and the revision rule recovers. Directions asserted with paired intervals."""

from __future__ import annotations

import pytest

from labkit.experiments.memory import reflexion_repair as rx
from labkit.grading.verdicts import Checker

TRIALS = 5


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def result(checker: Checker) -> rx.Result:
    # 12 of the cases (their 8 verdicts each are real pytest runs), 24 seeds of the simulated actor
    return rx.compare(trials=TRIALS, seeds=range(24), among=rx.cases()[:12], checker=checker)


def test_a_reflection_names_the_error_class_from_the_real_verdict(result: rx.Result, checker: Checker) -> None:
    _, strategy = rx.run_arm(rx.ARMS[1], rx.cases()[:12], checker, trials=TRIALS, seed=0)
    texts = [w.text for _, _, w in strategy.windows if w.text]
    assert texts and all("TEST_FAILURE: " in t for t in texts)
    assert any("tests/test_visible.py::" in t for t in texts)  # the failing visible test, never a hidden one
    assert not any("test_hidden" in t for t in texts)
    sparse = rx.run_arm(rx.ARMS[2], rx.cases()[:12], checker, trials=TRIALS, seed=0)[1]
    assert all("TEST_FAILURE" not in w.text for _, _, w in sparse.windows)


def test_the_buffer_raises_success_by_trial_at_the_same_budget(result: rx.Result) -> None:
    # the trial after a reflected failure: the buffer has ruled the failed patch out
    assert result.difference("buffer", "no memory", 2).low > 0
    # but the visible oracle accepts a wrong patch that only hidden tests catch, in both arms
    # alike: by the last trial memory has not lifted that ceiling
    d = result.difference("buffer", "no memory", TRIALS)
    assert d.low <= 0 <= d.high, d
    # trial 1 has nothing to remember: identical by construction (same seeded draws)
    assert result.difference("buffer", "no memory", 1).estimate == 0


def test_sparse_reward_leaves_nothing_to_reflect_on(result: rx.Result) -> None:
    for t in range(1, TRIALS + 1):  # a reflection without a message rules nothing out
        assert result.difference("buffer, sparse reward", "no memory", t).estimate == 0
    assert result.difference("buffer", "buffer, sparse reward", 2).low > 0


def test_an_entrenched_false_belief_stalls_and_the_revision_rule_recovers(result: rx.Result) -> None:
    stuck = "buffer, false belief"
    assert result.difference(stuck, "buffer", TRIALS).high < 0
    # never revised, it gains (almost) nothing after trial 1; the plain buffer does
    gain = result.success[stuck, TRIALS].estimate - result.success[stuck, 1].estimate
    assert gain < result.success["buffer", TRIALS].estimate - result.success["buffer", 1].estimate
    assert result.difference("buffer, false belief + revision", stuck, TRIALS).low > 0


def test_every_arm_had_the_same_trials(result: rx.Result) -> None:
    counts = result.frame.group_by("arm").len()["len"].to_list()
    assert len(set(counts)) == 1 and result.frame["trial"].max() == TRIALS
