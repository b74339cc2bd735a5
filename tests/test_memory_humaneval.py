"""Reflexion's buffer on HumanEval (SIMULATED actor; real HumanEval problems, real validation of
every pick on the docstring examples, hidden scoring by the problem's `check`): at the same
trials the buffer lifts success once a failed answer has been reflected on; without the buffer
(or with the buffer ignored) there is no lift. Directions asserted with paired intervals."""

from __future__ import annotations

import pytest

from labkit.experiments.memory import on_humaneval as he
from labkit.experiments.memory import reflexion_repair as rx
from labkit.grading.verdicts import Checker
from labkit.loop.strategies.memory.episodic import Window

# real validation of every state (a few hundred pytest runs through the sandbox): minutes on a shared CPU
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

TRIALS = 4


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def problems(checker: Checker) -> tuple[he.HumanEvalCase, ...]:
    # a seeded draw of 12 problems (fixed before the run), each with up to 3 mutants of its
    # canonical solution that its visible examples reject
    return he.load(he.draw(12, 15), mutants=3, checker=checker)


@pytest.fixture(scope="module")
def result(problems: tuple[he.HumanEvalCase, ...], checker: Checker) -> rx.Result:
    # no memory, buffer, buffer on a sparse reward (pass/fail only)
    return rx.compare(rx.ARMS[:3], seeds=range(16), trials=TRIALS, among=problems, checker=checker)


def test_the_draw_is_fixed_by_its_seed_and_every_option_is_labelled() -> None:
    assert he.draw(12, 15) == he.draw(12, 15) != he.draw(12, 16)
    case = he.load(["humaneval-0"])[0]
    assert {p.name: p.kind for p in case.patches} == {"canonical": "fix", "lookup": "wrong", "none": "wrong"}
    assert rx.SimActor({}).simulated


def test_the_buffer_lifts_humaneval_success_at_the_same_trials(result: rx.Result) -> None:
    # trial 1 has nothing to remember: identical by construction (same seeded draws)
    assert result.difference("buffer", "no memory", 1).estimate == 0
    # after a reflected failure the buffer rules the failed answer out
    assert result.difference("buffer", "no memory", 2).low > 0
    assert result.difference("buffer", "no memory", TRIALS).low > 0


def test_a_sparse_reward_gives_the_buffer_nothing_on_humaneval_either(result: rx.Result) -> None:
    for t in range(1, TRIALS + 1):
        assert result.difference("buffer, sparse reward", "no memory", t).estimate == 0


def test_an_actor_that_ignores_the_buffer_gets_no_lift(problems: tuple[he.HumanEvalCase, ...], checker: Checker,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    act = rx.SimActor.act
    monkeypatch.setattr(rx.SimActor, "act", lambda self, s, memory: act(self, s, Window((), "", 0, 0)))
    ignored = rx.compare(rx.ARMS[:2], seeds=range(4), trials=TRIALS, among=problems, checker=checker)
    for t in range(1, TRIALS + 1):
        assert ignored.difference("buffer", "no memory", t).estimate == 0
