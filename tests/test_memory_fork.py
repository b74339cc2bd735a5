"""A sub-task forked into a fresh context vs continued in the polluted one (seed 001 §06.3;
SIMULATED actor, real verdicts): the recording equals a re-measured session prefix, a fork's calls
read the same whatever came before while the polluted context's grow, and only verified
results count."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.experiments.memory import fork
from labkit.experiments.memory import reflexion_repair as rx
from labkit.grading.verdicts import Checker
from labkit.views import memory_loops as page


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


@pytest.fixture(scope="module")
def rec() -> dict:
    return json.loads(fork.RECORD.read_text(encoding="utf-8"))


def test_a_session_prefix_measured_now_equals_the_recording(rec: dict, checker: Checker) -> None:
    assert rec["command"] == "python -m labkit.experiments.memory.fork --out data/memory/fork.json"
    s = rec["setting"]
    now = fork.measure(fork.Setting(2, (0, 1), s["trials"], tuple(s["capacities"])), checker)
    recorded = [r for r in rec["rows"] if r[3] <= 2 and r[2] in (0, 1)]  # position, seed
    assert_as_recorded(now["rows"], recorded, rec, "fork rows")


def test_the_fork_reads_only_its_sub_task_and_the_polluted_context_grows(rec: dict) -> None:
    t = {(r["context capacity (tokens)"], r["arm"]): r for r in page.fork_summary(rec).iter_rows(named=True)}
    big, small = rec["setting"]["capacities"]
    fresh, polluted = t[big, "fresh fork"], t[big, "polluted context"]
    assert polluted["tokens per session"] > 2 * fresh["tokens per session"]
    assert polluted["largest call"] > 2 * fresh["largest call"]
    assert fresh["calls per session"] == polluted["calls per session"]  # same actor, same draws: same work
    # a fresh fork does not depend on the capacity of the parent's context; the polluted one is cut by it
    assert t[small, "fresh fork"]["tokens per session"] == fresh["tokens per session"]
    assert t[small, "polluted context"]["largest call"] < polluted["largest call"]


def test_a_fork_reads_the_same_whatever_came_before_the_polluted_context_does_not(rec: dict, checker: Checker) -> None:
    big = rec["setting"]["capacities"][0]
    second = rx.cases()[1]  # position 2 of the recorded session
    recorded = {
        r[0]: r[6] for r in rec["rows"] if r[1] == big and r[2] == 1 and r[3] == 2
    }  # seed 1: sub-task 1 failed twice
    for arm in fork.ARMS:
        alone = fork.session(arm, [second], checker, seed=1, trials=rec["setting"]["trials"], capacity=big)[0]
        assert (alone.tokens == recorded[arm]) is (arm == "fresh fork"), arm
    assert recorded["polluted context"] > recorded["fresh fork"]


def test_only_verified_results_count_as_success(rec: dict) -> None:
    assert all(r[8] >= r[9] for r in rec["rows"])  # correct implies verified
    assert any(r[9] for r in rec["rows"]) and "SIMULATED" in page.FORK and "SIMULATED" in page.fork_html(rec)


def test_an_unknown_arm_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown arm"):
        fork.session("shared", [], None)  # type: ignore[arg-type]
