"""Best-of-N (simulated, labelled) and the selector cascade."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from labkit.experiments.best_of_n import SIMULATED, BestOfNError, cascade, simulate


def test_the_simulation_matches_the_independent_case_in_closed_form() -> None:
    r = simulate(p=0.3, rho=0.0, signal=3.0, tasks=20000, seed=1)
    for n, ceiling in zip(r.ns, r.ceiling, strict=True):
        assert ceiling == pytest.approx(1 - 0.7**n, abs=0.015)
    assert r.label == SIMULATED


def test_fully_correlated_candidates_gain_nothing_from_n() -> None:
    r = simulate(rho=1.0, signal=10.0, seed=2)
    assert max(r.ceiling) - min(r.ceiling) == 0  # all N candidates are the same draw
    assert abs(r.gain()) < 1e-12


def test_an_unreliable_selector_gains_nothing_from_n() -> None:
    for rho in (0.0, 0.5):
        r = simulate(rho=rho, signal=0.0, seed=3)
        assert abs(r.gain()) < 0.03  # a coin picks a correct one at the base rate, whatever N
        assert r.ceiling[-1] - r.ceiling[0] > 0.4  # ... although good candidates were there


def test_correlation_shrinks_what_n_buys_and_raises_the_cost_per_correct() -> None:
    free, tied = simulate(rho=0.0, seed=4), simulate(rho=0.9, seed=4)
    assert free.gain() > 0.6 and tied.gain() < 0.3
    assert tied.cost_per_correct[-1] > 1.5 * free.cost_per_correct[-1]  # ~64 vs ~32 units at N=16


def test_an_oracle_selector_reaches_the_ceiling() -> None:
    r = simulate(rho=0.5, signal=12.0, seed=5)
    assert r.selected == pytest.approx(r.ceiling, abs=0.005)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(BestOfNError, match="rho must be in"):
        simulate(rho=1.5)
    with pytest.raises(BestOfNError, match="p must be in"):
        simulate(p=0.0)


# -- the cascade -------------------------------------------------------------------------

CANDIDATES = [("fails tests, looks great", False), ("passes, plain", True), ("passes, tidy", True)]


def text(c: tuple[str, bool]) -> str:
    return c[0]


def test_a_reviewer_score_never_overrides_a_hard_check_failure() -> None:
    def reviewer(texts: Sequence[str]) -> list[float]:
        return [100.0 if "looks great" in t else 1.0 for t in texts]

    sel = cascade(CANDIDATES, lambda c: c[1], reviewer, text)
    assert sel.chosen is not None and sel.chosen[1] is True
    assert 0 not in sel.passed and all(i != 0 for i, _ in sel.scores)  # never even reviewed


def test_nothing_passing_means_nothing_selected() -> None:
    sel = cascade(CANDIDATES, lambda c: False, lambda ts: [1.0] * len(ts), text)
    assert sel.chosen is None and "nothing selected" in sel.reason


def test_the_reviewer_sees_a_blinded_order_so_position_bias_cannot_pick() -> None:
    def first_wins(texts: Sequence[str]) -> list[float]:  # a reviewer with pure position bias
        return [1.0] + [0.0] * (len(texts) - 1)

    passing = [(f"candidate {i}", True) for i in range(4)]
    picks = {cascade(passing, lambda c: c[1], first_wins, text, seed=s).chosen for s in range(40)}
    assert len(picks) == 4  # the input's first candidate does not always win
    sel = cascade(passing, lambda c: c[1], first_wins, text, seed=7)
    assert sel.chosen == passing[sel.shown_order[0]]
    assert len(sel.scores) == 4  # every score is kept


def test_a_reviewer_returning_the_wrong_number_of_scores_is_refused() -> None:
    with pytest.raises(BestOfNError, match="returned 1 scores for 2"):
        cascade(CANDIDATES, lambda c: c[1], lambda ts: [1.0], text)


def test_the_cascade_on_the_api_change_routes_uses_real_hard_checks() -> None:
    from labkit.core.patch import apply
    from labkit.core.types import Candidate
    from labkit.grading.sealed import load_search_case
    from labkit.grading.validator import Validator

    case = load_search_case("api_change")
    validator = Validator()
    routes = [apply(case.case.start, p) for p in case.case.patches.values()]  # A, B, C

    def longest_wins(texts: Sequence[str]) -> list[float]:  # scripted reviewer: "more is better"
        return [float(len(t)) for t in texts]

    def show(c: Candidate) -> str:
        return "\n".join(c.files.values())

    sel = cascade(routes, lambda c: validator.run(c, case.suite).resolved, longest_wins, show)
    assert sel.passed == (2,) and sel.chosen is routes[2]  # only C passes the dev checks
    scores = dict(sel.scores)
    assert set(scores) == {2}  # A and B, however long, never reach the reviewer


def test_best_of_n_on_the_real_model_is_scored_from_its_replies() -> None:
    from labkit.experiments.best_of_n_model import run_model

    r = run_model(tasks=5, n=4, seed=1)  # SmolLM2-135M in-process: real, offline
    assert "simulated" not in r.label and r.usage.calls == 20
    assert all(a.isdigit() for row in r.answers for a in row)  # the grammar held
    correct = [[a == str(x + y) for a in row] for (x, y), row in zip(r.tasks, r.answers, strict=True)]
    assert r.hard_check[-1] == sum(any(c) for c in correct) / 5  # recomputed from the replies
    assert r.random[0] == r.majority[0] == r.hard_check[0] == sum(c[0] for c in correct) / 5
    assert list(r.hard_check) == sorted(r.hard_check)  # an external check only gains with N
    assert all(m <= h for m, h in zip(r.majority, r.hard_check, strict=True))
    assert 0.0 <= r.rho <= 1.0
