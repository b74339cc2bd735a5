"""Reflexion on the repair cases (SIMULATED actor; real patches, real pytest verdicts, hidden
scoring): the buffer helps at the same trials; sparse reward gives it nothing; an entrenched
false belief stalls it and the revision rule recovers. Directions asserted with paired intervals.

The full run (every arm of `reflexion.ARMS`, 12 cases, 24 seeds, 5 trials) takes minutes of
real validation, so it is recorded once (data/memory/reflexion_repair.json, by
`python -m labkit.experiments.memory.repair_record`) and the intervals here are recomputed
from the recorded rows. A slice (every arm, the first cases, two seeds) is re-measured here
in-process, with real verdicts, and compared exactly with the recording, so the rows read here
are what labkit computes; the reflections checked are the slice's real ones."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import polars as pl
import pytest
from recordings import assert_as_recorded

from labkit.experiments.memory import recording as rec
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import repair_record
from labkit.grading.verdicts import Checker

TRIALS = 5
SLICE = (3, (0, 1))  # the first 3 cases, seeds 0 and 1


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    r = repair_record.load()
    assert r["command"] == "python -m labkit.experiments.memory.repair_record --out data/memory/reflexion_repair.json"
    assert r["setting"] == json.loads(json.dumps(asdict(repair_record.Setting())))
    assert r["setting"]["trials"] == TRIALS and r["cases"] == [c.id for c in rx.cases()[: r["setting"]["cases"]]]
    assert [a["name"] for a in r["arms"]] == [a.name for a in rx.ARMS]
    return r


@pytest.fixture(scope="module")
def result(record: dict[str, Any]) -> rx.Result:
    frame = rec.rows(record)
    return rx.Result(frame, rec.success(frame, [a.name for a in rx.ARMS], TRIALS))


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.mark.slow  # real pytest verdicts of the slice's patches
@pytest.mark.timeout(900)
def test_a_slice_measured_now_equals_the_recording(record: dict[str, Any], checker: Checker) -> None:
    n, seeds = SLICE
    cs = rx.cases()[:n]
    recorded = rec.rows(record)
    for arm in rx.ARMS:
        for seed in seeds:
            got, _ = rx.run_arm(arm, cs, checker, trials=TRIALS, seed=seed, p_fix=record["setting"]["p_fix"])
            want = recorded.filter(
                (pl.col("arm") == arm.name) & (pl.col("seed") == seed) & pl.col("case").is_in([c.id for c in cs])
            )
            assert_as_recorded(
                got.sort("case", "trial").to_dicts(),
                want.select("case", "trial", "correct").to_dicts(),
                record,
                f"repair rows of {arm.name}, seed {seed}",
            )


def test_every_recorded_interval_is_recomputed_exactly_from_the_recorded_rows(
    record: dict[str, Any], result: rx.Result
) -> None:
    got = [[*k, i.estimate, i.low, i.high] for k, i in result.success.items()]
    assert_as_recorded(got, record["success"], record, "the success intervals")


@pytest.mark.slow
def test_a_reflection_names_the_error_class_from_the_real_verdict(checker: Checker) -> None:
    cs = rx.cases()[: SLICE[0]]  # validated by the slice above when it ran first; real pytest otherwise
    _, strategy = rx.run_arm(rx.ARMS[1], cs, checker, trials=TRIALS, seed=0)
    texts = [w.text for _, _, w in strategy.windows if w.text]
    assert texts and all("TEST_FAILURE: " in t for t in texts)
    assert any("tests/test_visible.py::" in t for t in texts)  # the failing visible test, never a hidden one
    assert not any("test_hidden" in t for t in texts)
    sparse = rx.run_arm(rx.ARMS[2], cs, checker, trials=TRIALS, seed=0)[1]
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
