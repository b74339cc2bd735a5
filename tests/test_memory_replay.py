"""SIMULATED memory effects, asserted with intervals: a raw transcript pollutes the next task
where the distilled, re-checked lesson does not; an irrelevant replayed example pulls success
below no replay; hindsight relabelling raises success at the same episodes."""

from __future__ import annotations

import pytest

from labkit.experiments.cache_isolation import case
from labkit.experiments.memory import counterexample as ce
from labkit.experiments.memory import simulated_effects as rp


@pytest.fixture(scope="module")
def polluted() -> rp.Pollution:
    small = ce.Mix(users=30, products=40, requests=2000, seeds=(0, 1))
    run = ce.run(small)  # the lesson is written only from the real run's kept correction
    return rp.pollution(run.store, case().environment)


def test_the_raw_transcript_carries_rejected_actions_into_the_next_task(polluted: rp.Pollution) -> None:
    kinds = {k for k, _ in rp.transcript_actions("tempting")}
    assert {"disable", "composite"} <= kinds  # the real replies: a rolled-back action and the kept one
    assert polluted.rejected_copied["raw transcript"].low > 0.1
    assert polluted.rejected_copied["distilled"].high == 0 and polluted.rejected_copied["no memory"].high == 0


def test_distilled_beats_raw_and_raw_is_worse_than_no_memory(polluted: rp.Pollution) -> None:
    s = polluted.success
    assert s["distilled"].low > s["no memory"].high
    assert s["raw transcript"].high < s["no memory"].low
    # the distilled lesson is never applied to a public-catalogue task (precondition fails)
    f = polluted.frame
    cat = f.filter((f["arm"] == "distilled") & ~f["tenant"])
    assert cat.filter(cat["action"] == "composite").height == cat.filter(cat["correct"] == False).height  # noqa: E712
    assert cat["correct"].mean() == pytest.approx(f.filter((f["arm"] == "no memory") & ~f["tenant"])["correct"].mean())


def test_experience_following_irrelevant_examples_mislead() -> None:
    fr = rp.experience_following()
    low_q, high_q = fr.row(0, named=True), fr.row(-1, named=True)
    assert low_q["quality"] == 0 and low_q["diff high"] < 0  # irrelevant example: worse than none
    assert high_q["quality"] == 1 and high_q["diff low"] > 0
    assert fr["replay"].is_sorted()


def test_hindsight_relabelling_turns_failures_into_examples() -> None:
    out = rp.hindsight()
    assert out["with hindsight relabelling"].low > out["successes only"].high
    t = rp.Trajectory("goal-1", "goal-2", ("step",))
    assert not t.success and rp.relabel(t).success and rp.relabel(t).goal == "goal-2"
