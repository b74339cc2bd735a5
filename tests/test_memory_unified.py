"""Seed 001's reflective_agent on the engine (SIMULATED actor and critic; real patches and
verdicts): the external oracle stops when the tests pass and stores only verified wins;
self-critique stores nothing and its no-progress guard cuts its rounds."""

from __future__ import annotations

import pytest

from labkit.core.errors import MemoryRefused
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import unified as un
from labkit.grading.verdicts import Checker
from labkit.loop.strategies.memory.agent import ReflectiveAgent, commit
from labkit.loop.strategies.memory.skills import SkillLibrary

CASES = rx.cases()[:6]


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def result(checker: Checker) -> un.Unified:
    return un.compare(seeds=range(4), among=CASES, checker=checker)


def test_external_oracle_stores_only_wins_the_oracle_verified(checker: Checker) -> None:
    _, agent, ledger, run_id = un.run_arm("external oracle", CASES, checker, seed=0)
    skills = commit(
        agent, ledger, run_id, {c.id: [s.candidate for s in c.states.values()] for c in CASES}, SkillLibrary()
    )
    assert skills
    by_id = {c.id: c for c in CASES}
    for s in skills:
        case = by_id[s.name.removeprefix("repair_")]
        cand = case.original.with_files({**case.original.files, case.module: s.code})
        assert checker.check(cand, case.visible).verdict.resolved  # verified by the (visible) oracle
        assert s.verified.startswith(f"run {run_id}, round ")


def test_self_critique_has_nothing_verified_to_store(checker: Checker) -> None:
    _, agent, ledger, run_id = un.run_arm("self-critique + guard", CASES, checker, seed=0)
    with pytest.raises(MemoryRefused, match="no external oracle"):
        commit(agent, ledger, run_id, {c.id: [s.candidate for s in c.states.values()] for c in CASES}, SkillLibrary())
    with pytest.raises(ValueError, match="needs a critique"):
        ReflectiveAgent(actor=agent.actor, checker=checker, oracle=None)


def test_the_external_oracle_converges_and_the_guard_cuts_self_critique(result: un.Unified) -> None:
    # the external loop stops proposing once the tests pass; unguarded self-critique never stops
    assert result.proposals["external oracle"] < result.proposals["self-critique, no guard"]
    assert result.proposals["self-critique, no guard"] == 5 * len(CASES)
    assert result.proposals["self-critique + guard"] < result.proposals["self-critique, no guard"]
    assert result.stored["self-critique + guard"] == result.stored["self-critique, no guard"] == 0


def test_the_library_inherits_the_visible_oracles_blind_spot(result: un.Unified) -> None:
    # wrong patches that pass the visible tests are "verified wins" too: hidden tests catch some
    assert result.stored_hidden_correct["external oracle"] < result.stored["external oracle"]
