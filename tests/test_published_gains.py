"""The gain decomposition and the simulations' calibration, computed from the committed tables of the
Reflexion authors' logs (data/published/reflexion), and on small fixture ladders built here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.arms.policy import SimulatedPolicy
from labkit.experiments.memory.reflexion_repair import SimActor
from labkit.experiments.published import calibration, gains
from labkit.experiments.published.reflexion_logs import load_runs, tables_dir

ROOT = Path(__file__).resolve().parents[1]


def _cells(w: gains.Wins) -> tuple[int, ...]:
    return tuple(int(v.estimate) for v in w.cells())


@pytest.mark.parametrize(
    ("bench", "cells"),
    [("humaneval", (140, 7, 3, 1, 13, 9)), ("mbpp", (289, 15, 2, 29, 62, -12))],
)
def test_wins_as_logged(bench: str, cells: tuple[int, ...]) -> None:
    w = gains.wins(gains.outcomes(bench))
    assert _cells(w) == cells
    assert w.problems == sum(cells[:5])
    for iv in w.cells():
        assert iv.low <= iv.estimate <= iv.high
    # recount from the raw table, independently of outcomes(): a Reflexion-only win after >= 1 reflection
    runs = load_runs()
    single = {t: s for r, t, s in runs.select("run", "task_id", "is_solved").iter_rows() if r == f"simple-{bench}"}
    refl = [
        (t, s, len(x))
        for r, t, s, x in runs.select("run", "task_id", "is_solved", "reflections").iter_rows()
        if r == f"reflexion-{bench}"
    ]
    assert sum(s and not single[t] and k > 0 for t, s, k in refl) == cells[1]
    assert sum(s and not single[t] and k == 0 for t, s, k in refl) == cells[2]


def test_a_win_with_zero_reflections_is_never_self_correction() -> None:
    # three problems Reflexion alone solved, none with a reflection: all luck, no self-correction
    o = gains.Outcomes(
        benchmark="humaneval",
        grader="logged",
        task_ids=("a", "b", "c", "d"),
        reflexion=np.array([True, True, True, False]),
        single=np.array([False, False, False, False]),
        reflections=np.array([0, 0, 0, 5]),
    )
    w = gains.wins(o)
    assert w.self_correction.estimate == 0 and w.self_correction.high == 0
    assert w.reflexion_only_unreflected.estimate == 3
    # the same wins reached after reflecting are counted as self-correction
    w2 = gains.wins(
        gains.Outcomes(
            benchmark="humaneval",
            grader="logged",
            task_ids=o.task_ids,
            reflexion=o.reflexion,
            single=o.single,
            reflections=np.array([1, 2, 0, 5]),
        )
    )
    assert (w2.self_correction.estimate, w2.reflexion_only_unreflected.estimate) == (2, 1)


def test_pass_rate_by_reflections_as_logged() -> None:
    got = {
        b: [(int(r.group), r.problems, r.passed) for r in gains.by_reflections(gains.outcomes(b))]
        for b in gains.BENCHMARKS
    }
    assert got["humaneval"] == [(0, 134, 134), (1, 7, 6), (2, 2, 2), (3, 1, 0), (9, 20, 8)]
    assert got["mbpp"] == [(0, 248, 221), (1, 38, 21), (2, 1, 0), (3, 2, 0), (4, 108, 64)]


def test_self_tests_accuracy_from_the_testacc_log() -> None:
    r = gains.self_test_accuracy()
    assert (r.passed, r.problems) == (96, 164)
    assert r.rate.low < 96 / 164 < r.rate.high


def test_published_figures_beside_the_logs_without_a_ladder() -> None:
    rows = {p.run: p for p in gains.published_beside(None)}
    assert {r: p.paper for r, p in rows.items()} == {
        "reflexion-humaneval": 91.0,
        "simple-humaneval": 80.1,
        "reflexion-mbpp": 77.1,
        "simple-mbpp": 80.1,
    }
    assert {r: p.logged.passed for r, p in rows.items()} == {
        "reflexion-humaneval": 150,
        "simple-humaneval": 141,
        "reflexion-mbpp": 306,
        "simple-mbpp": 318,
    }
    assert all(p.check is None and p.differential is None for p in rows.values())  # not computed, never zero


def test_false_beliefs_quote_the_logs_verbatim(tmp_path: Path) -> None:
    beliefs = gains.false_beliefs()
    assert len(beliefs) >= 5 and all(b.task_id.startswith("HumanEval/") for b in beliefs)
    data = json.loads((tables_dir() / "false_beliefs.json").read_text())
    assert data["label"] == "selected by reading, from the authors' logs"
    assert next(b for b in beliefs if b.task_id == "HumanEval/127").repeated == 3
    # every belief is on a problem the mechanical candidate list names
    named = {c.task_id for c in gains.belief_candidates("humaneval")}
    assert {b.task_id for b in beliefs} <= named
    data["beliefs"][0]["reflection_quote"] += " (not in the log)"
    bad = tmp_path / "false_beliefs.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ReferenceDataMissing, match="does not contain the quote"):
        gains.false_beliefs(bad)


def _fixture_ladder(path: Path) -> list[gains.LadderRow]:
    """check = logged is_solved except every 17th row flipped; visible/own_tests on HumanEval only."""
    out = []
    runs = load_runs().select("run", "benchmark", "task_id", "is_solved").iter_rows()
    for i, (run, bench, task, ok) in enumerate(runs):
        for rung in ["check"] + (["visible", "own_tests"] if bench == "humaneval" else []):
            passed = (not ok if i % 17 == 0 else ok) if rung == "check" else (ok or i % 3 == 0)
            out.append(
                {
                    "run": run,
                    "task_id": task,
                    "rung": rung,
                    "passed": passed,
                    "reason": "" if passed else f"assert f(1) == 2 ({rung})",
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    path.with_suffix(".meta.json").write_text("{}")
    return gains.read_ladder(path)


def test_ladder_reader_and_check_graded_wins(tmp_path: Path) -> None:
    with pytest.raises(ReferenceDataMissing, match="regrade"):
        gains.read_ladder(tmp_path / "ladder.jsonl")
    assert gains.ladder_or_none(tmp_path / "ladder.jsonl") is None
    (tmp_path / "bad.jsonl").write_text('{"run": "x"\n')
    (tmp_path / "bad.meta.json").write_text("{}")
    with pytest.raises(ReferenceDataMissing, match="cannot be read"):
        gains.ladder_or_none(tmp_path / "bad.jsonl")
    rows = _fixture_ladder(tmp_path / "ladder.jsonl")
    o = gains.outcomes("humaneval", "check", rows)
    verdict = {(r.run, r.task_id): r.passed for r in rows if r.rung == "check"}
    assert o.reflexion.tolist() == [verdict[("reflexion-humaneval", t)] for t in o.task_ids]
    w = gains.wins(o)
    expect = sum(
        verdict[("reflexion-humaneval", t)] and not verdict[("simple-humaneval", t)] and k > 0
        for t, k in zip(o.task_ids, o.reflections, strict=True)
    )
    assert w.self_correction.estimate == expect
    assert gains.rung_rate(rows, "reflexion-mbpp", "visible") is None  # not computed: None, never 0
    with pytest.raises(ReferenceDataMissing, match="differential_raw"):
        gains.outcomes(
            "humaneval",
            "differential_raw",
            rows[:3] + [gains.LadderRow("simple-humaneval", "HumanEval/0", "differential_raw", True, "")],
        )


def test_tetrachoric_known_values() -> None:
    assert calibration.tetrachoric([40, 10, 10, 40]).estimate == pytest.approx(math.cos(math.pi / 5), abs=1e-3)
    assert calibration.tetrachoric([25, 25, 25, 25]).estimate == pytest.approx(0.0, abs=1e-3)
    assert calibration.tetrachoric([10, 40, 40, 10]).estimate == pytest.approx(-math.cos(math.pi / 5), abs=1e-3)


def test_calibration_from_the_logs(tmp_path: Path) -> None:
    est = {e.parameter: e for e in calibration.calibrate(None)}
    policy = SimulatedPolicy()
    for name, e in est.items():
        cls, attr = name.split(".")
        assert e.default == getattr(policy if cls == "SimulatedPolicy" else SimActor(cases={}), attr)
    assert est["SimulatedPolicy.p_fix_evidence"].counts == "16 of 30 problems"
    assert est["SimActor.p_fix"].counts == "6 of 30 problems"
    assert est["SimulatedPolicy.p_break"].counts == "29 of 99 problems"
    assert est["SimulatedPolicy.rho"].counts == "both pass 131, first attempt only 3, single-shot only 10, neither 20"
    rho = est["SimulatedPolicy.rho"].estimate
    assert rho is not None and rho.low < rho.estimate < rho.high and rho.estimate > 0.8
    for unknown in ("SimulatedPolicy.p_fix_blind", "SimulatedPolicy.critic_accuracy"):
        assert est[unknown].estimate is None and "not identifiable" in est[unknown].note
    assert est["SimulatedPolicy.overfit"].estimate is None  # needs the ladder
    rows = _fixture_ladder(tmp_path / "ladder.jsonl")
    with_ladder = {e.parameter: e for e in calibration.calibrate(rows)}
    he = {(r.run, r.task_id, r.rung): r.passed for r in rows if r.run.endswith("humaneval")}
    empty = {(r, t) for r, t, x in load_runs().select("run", "task_id", "solution").iter_rows() if not x.strip()}
    assert len(empty) == 14  # the unsolved rows of the March-2023 Reflexion log keep no answer: left out
    wrong = [k for k, ok in he.items() if k[2] == "check" and not ok and k[:2] not in empty]
    assert (
        with_ladder["SimulatedPolicy.overfit"].counts
        == f"{sum(he[(r, t, 'visible')] for r, t, _ in wrong)} of {len(wrong)} wrong solutions"
    )


def test_real_ladder_recording_feeds_the_decomposition() -> None:
    # the recording of the other half of issue 23; absent on a branch without it, this fails clearly
    path = tables_dir() / "ladder.jsonl"
    if not path.is_file():
        pytest.fail(f"{path} is not recorded: `{gains.REGRADE}` records it (this test needs the real recording)")
    rows = gains.read_ladder(path)
    for bench, (refl, single) in gains.BENCHMARKS.items():
        o = gains.outcomes(bench, "check", rows)
        check = {(r.run, r.task_id): r.passed for r in rows if r.rung == "check"}
        assert int(o.reflexion.sum()) == sum(check[(refl, t)] for t in o.task_ids)
        assert int(o.single.sum()) == sum(check[(single, t)] for t in o.task_ids)
    # labkit's check, as recorded. HumanEval/133: the single-shot log says solved, labkit's check
    # fails it, so Reflexion's zero-reflection pass becomes one more "luck" win (3 -> 4). MBPP's two
    # logged luck wins both go: labkit passes the single-shot answers of mbpp_67 and mbpp_798 (the
    # log failed both after mbpp_126's `def sum` shadowed the builtin), so both runs solved them;
    # labkit also passes five Reflexion answers the log failed (each after 4 reflections), four of
    # them where it passes the single-shot answer the log failed too.
    got = {b: _cells(gains.wins(gains.outcomes(b, "check", rows))) for b in gains.BENCHMARKS}
    assert got == {"humaneval": (139, 7, 4, 1, 13, 10), "mbpp": (296, 15, 0, 28, 58, -13)}
    est = {e.parameter: e.counts for e in calibration.calibrate(rows)}
    assert (est["SimulatedPolicy.overfit"], est["SimulatedPolicy.weak_tests"]) == (
        "17 of 24 wrong solutions",
        "3 of 24 wrong solutions",
    )


def test_every_default_respects_what_the_logs_say() -> None:
    # A simulated default may be typed in only where no log identifies it; where one does, the
    # default lies inside the estimate's interval (p_fix_evidence, and the three taken from the
    # logs), or on the right side of a bound (SimActor.p_fix: a lower bound; p_break: an upper one).
    rows = gains.ladder_or_none()
    assert rows, "needs data/published/reflexion/ladder.jsonl (python -m labkit.experiments.published regrade)"
    est = {e.parameter: e for e in calibration.calibrate(rows)}
    bounds = {"SimActor.p_fix": "lower", "SimulatedPolicy.p_break": "upper"}
    for name, e in est.items():
        if e.estimate is None:
            assert "not identifiable" in e.note, name
        elif name in bounds:
            limit = e.estimate.low if bounds[name] == "lower" else e.estimate.high
            assert (e.default >= limit) if bounds[name] == "lower" else (e.default <= limit), name
        else:
            assert e.estimate.low <= e.default <= e.estimate.high, (name, e.default, e.estimate)
    for name, (now, was) in calibration.DEFAULTS_FROM_LOGS.items():
        assert est[name].default == now != was
