"""Reflexion's buffer on HumanEval (SIMULATED actor; real HumanEval problems, real validation of
every pick on the docstring examples, hidden scoring by the problem's `check`): at the same
trials the buffer lifts success once a failed answer has been reflected on; without the buffer
(or with the buffer ignored) there is no lift. Directions asserted with paired intervals.

The measurement is this module's setting exactly (`recording.HumanEvalSetting`: 12 problems
drawn with seed 15, up to 3 mutants each, 16 seeds, 4 trials) and takes minutes of real
validation, so it is recorded once (data/memory/simulated_reflexion.json, section
"humaneval") and the intervals here are recomputed from the recorded rows.
tests/test_memory_recording.py re-measures a slice of those rows in-process (real validation,
the buffer arm and the actor that ignores it) and compares them exactly, so the rows read here
are what labkit computes."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from labkit.experiments.memory import on_humaneval as he
from labkit.experiments.memory import recording as rec
from labkit.experiments.memory import reflexion_repair as rx
from labkit.views import memory_buffer as buf

TRIALS = 4


@pytest.fixture(scope="module")
def result() -> rx.Result:
    h = buf.load()["humaneval"]
    assert h["setting"] == json.loads(json.dumps(asdict(rec.HumanEvalSetting()))) and h["setting"]["trials"] == TRIALS
    assert h["cases"] == he.draw(12, 15)  # the seeded draw this module describes
    return rx.Result(rec.rows(h))


def test_the_draw_is_fixed_by_its_seed_and_every_option_is_labelled() -> None:
    assert he.draw(12, 15) == he.draw(12, 15) != he.draw(12, 16)
    case = he.load(["humaneval-0"])[0]
    assert {p.name: p.kind for p in case.patches} == {"canonical": "fix", "lookup": "wrong", "none": "wrong"}
    assert rx.SimActor(cases={}).simulated


def test_the_buffer_lifts_humaneval_success_at_the_same_trials(result: rx.Result) -> None:
    # trial 1 has nothing to remember: identical by construction (same seeded draws)
    assert result.difference("buffer", "no memory", 1).estimate == 0
    # after a reflected failure the buffer rules the failed answer out
    assert result.difference("buffer", "no memory", 2).low > 0
    assert result.difference("buffer", "no memory", TRIALS).low > 0


def test_a_sparse_reward_gives_the_buffer_nothing_on_humaneval_either(result: rx.Result) -> None:
    for t in range(1, TRIALS + 1):
        assert result.difference("buffer, sparse reward", "no memory", t).estimate == 0


def test_an_actor_that_ignores_the_buffer_gets_no_lift(result: rx.Result) -> None:
    # the buffer is written and prepended, the actor never reads it (SimActor.ignores_memory):
    # the same rows as no memory at every trial, where the buffer that is read differs
    ignored = (
        result.frame.filter(result.frame["arm"] == "buffer, actor ignores it").drop("arm").sort("seed", "case", "trial")
    )
    none = result.frame.filter(result.frame["arm"] == "no memory").drop("arm").sort("seed", "case", "trial")
    read = result.frame.filter(result.frame["arm"] == "buffer").drop("arm").sort("seed", "case", "trial")
    assert ignored.height == none.height > 0 and ignored.equals(none) and not read.equals(none)
    for t in range(1, TRIALS + 1):
        assert result.difference("buffer, actor ignores it", "no memory", t).estimate == 0
