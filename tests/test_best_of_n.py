"""Best-of-N: simulated (labelled), and on a real model through the engine."""

from __future__ import annotations

import pytest

from labkit.experiments.best_of_n import SIMULATED, BestOfNError, simulate


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
    # one engine round: each task's 4 samples are one proposal's children, each validated and decided
    from labkit.record.events import Kind, Role

    assert r.engine is not None and r.engine.rounds_run == 1
    events = r.engine.ledger.events(r.engine.run_id)
    for t in range(len(r.answers)):
        mine = [(e.round, e.role, e.kind) for e in events if e.detail.get("case") == f"add{t}"]
        assert mine[:3] == [
            (0, Role.DECISION, Kind.DEFINE),
            (0, Role.EXECUTOR, Kind.GENERATE),
            (0, Role.VALIDATOR, Kind.VERIFY),
        ]
        one = [(role, kind) for rnd, role, kind in mine if rnd == 1]
        assert one[0] == (Role.REFLECTOR, Kind.REFLECT) and one.count((Role.EXECUTOR, Kind.GENERATE)) == 4
        assert one.count((Role.VALIDATOR, Kind.VERIFY)) == 4 and one[-2:] == [
            (Role.DECISION, Kind.DECIDE),
            (Role.SCORER, Kind.SCORE),
        ]
        decided = next(e.detail for e in events if e.kind == Kind.DECIDE and e.detail.get("case") == f"add{t}")
        assert [c["decision"] for c in decided["children"]] == ["keep" if c else "roll back" for c in correct[t]]
        assert r.engine.traces[f"add{t}"].final_verdict.resolved == any(correct[t])  # the engine held a passing one
    assert events[-1].kind == Kind.STOP
