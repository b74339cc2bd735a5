"""The repair experiment: the case suite, real validation, the ledger feeding accounting and stop rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from labkit.core import patch as patches
from labkit.experiments import repair
from labkit.experiments.repair import (
    CaseError,
    Checker,
    ModelRepairer,
    SimulatedRepairer,
    VerdictCache,
    load_cases,
)
from labkit.loop.engine.stopping import Cap, MarginalNet, Stop

ALL = load_cases()
BY_ID = {c.id: c for c in ALL}


# -- the case suite (static: no subprocess) ---------------------------------------------------


def test_the_suite_has_what_the_chapter_asks_for() -> None:
    assert len(ALL) >= 30
    correct = [c for c in ALL if c.initially_correct]
    assert len(correct) >= 3
    for c in ALL:
        kinds = [p.kind for p in c.patches]
        assert len(c.hidden.required) >= 2, c.id  # hidden tests exist and the repairer never gets them
        if c.initially_correct:
            assert kinds.count("tempt") >= 2 and not c.visible.fail_to_pass, c.id
            assert {"breaks_protective", "hidden_failure"} <= {p.effect for p in c.patches}, c.id
        else:
            assert kinds.count("fix") == 1 and kinds.count("wrong") >= 2, c.id
            assert c.visible.fail_to_pass and c.hidden.fail_to_pass, c.id
    effects = [p.effect for c in ALL for p in c.patches]
    assert effects.count("breaks_protective") >= 20 and effects.count("hidden_failure") >= 30
    assert [c.id for c in ALL if c.oscillates] == ["format_name"]
    assert [c.id for c in ALL if c.flaky] == ["pick_winner"]
    assert len({c.slice for c in ALL}) >= 4


def test_every_patch_is_a_real_diff_that_applies_to_its_base() -> None:
    for c in ALL:
        for p in c.patches:
            assert p.patch.diff.startswith(f"--- a/{c.module}\n+++ b/{c.module}\n@@"), (c.id, p.name)
            assert patches.touched(p.patch) == (c.module,)
            cand = c.candidate(p.name)
            assert cand.files[c.module] != c.candidate(p.base).files[c.module], (c.id, p.name)
            assert patches.revert(cand, p.patch).files == c.candidate(p.base).files


def test_a_broken_case_directory_gets_a_specific_error(tmp_path: Path) -> None:
    shutil.copytree(repair.CASES_DIR / "slugify", tmp_path / "slugify")
    (tmp_path / "slugify" / "slugify.py").unlink()
    with pytest.raises(CaseError, match=r"cannot read .*slugify\.py"):
        load_cases(tmp_path)
    meta = tmp_path / "slugify" / "case.json"
    meta.write_text(json.dumps({"id": "slugify"}))
    with pytest.raises(CaseError, match=r"slugify/case\.json: field 'code'"):  # the one loader names it
        load_cases(tmp_path)
    with pytest.raises(CaseError, match="no repair case 'nope'"):
        load_cases(ids=["nope"])


def test_simulated_choices_do_not_depend_on_which_other_cases_run() -> None:
    rep = SimulatedRepairer(fix=0.5, breaks=0.5, seed=3)
    case = BY_ID["median"]
    from labkit.core.types import Evidence, TestResult, Verdict
    from labkit.loop.engine.strategy import Situation

    failing = Verdict(
        Evidence(
            candidate="c", suite="s", validator="v", results=(TestResult("t", "failed"),), exit_code=1, wall_seconds=0.1
        ),
        (),
        ("t",),
        (),
        (),
    )

    def picks(rep: SimulatedRepairer, cases: list) -> list:
        bound = rep.bind(cases)
        out = []
        for r in range(1, 8):
            p = bound.propose(
                Situation(round=r, candidate=case.original, verdict=failing, case="median", state="original")
            )
            out.append(p.children[0].name if p.children else None)
        return out

    picks_alone = picks(rep, [case])
    assert picks_alone == picks(SimulatedRepairer(fix=0.5, breaks=0.5, seed=3), list(ALL))
    assert set(picks_alone) - {None} <= {p.name for p in case.patches}


# -- real validation (one cache shared by the module) -------------------------------------------


WARM = ("slugify", "safe_div", "format_name")


@pytest.fixture(scope="module")
def checker() -> Checker:
    """One cache for the module: every reachable state of three cases, validated for real up front."""
    checker = Checker(cache=VerdictCache())
    runs = repair.warm(checker, [BY_ID[c] for c in WARM], workers=2)
    assert runs == sum(2 * len(BY_ID[c].states) for c in WARM)
    return checker


def _expected_correct(case: repair.RepairCase, state: str) -> bool:
    if state == "original":
        return case.initially_correct
    return case.patch(state).effect == "resolves"


@pytest.mark.slow
def test_measured_patch_labels_hold_under_the_real_validator(checker: Checker) -> None:
    for cid in WARM:
        case = BY_ID[cid]
        for name, (cand, _) in case.states.items():
            hidden = checker.check(cand, case.hidden).verdict
            assert hidden.resolved == _expected_correct(case, name), (cid, name)
            visible = checker.check(cand, case.visible).verdict
            effect = None if name == "original" else case.patch(name).effect
            if effect == "breaks_protective":
                assert visible.pass_to_fail, (cid, name)
            elif effect in ("resolves", "hidden_failure"):
                assert visible.resolved, (cid, name)
            elif effect == "incomplete":
                assert visible.fail_to_fail and not visible.pass_to_fail, (cid, name)


@pytest.mark.slow
def test_the_ledger_feeds_per_round_accounting(checker: Checker) -> None:
    cases = [BY_ID["slugify"], BY_ID["safe_div"]]
    rep = SimulatedRepairer(fix=1.0, breaks=1.0, break_growth=1.0, seed=1)
    result = repair.run(cases, rep, rounds=2, checker=checker, rules=())
    events = result.events()
    details = [json.loads(d) for d in events["detail"]]
    for kind, d in zip(events["kind"], details, strict=True):
        if kind != "start" and not d.get("run"):  # run-level events: the start and the run's stop
            assert d["case"] in {"slugify", "safe_div"} and d["slice"] in {"text", "numeric"} and d["simulated"] is True

    # Replay the keep decisions with the cases' measured labels: the hidden scoring must agree.
    state = {c.id: "original" for c in cases}
    expected = {(c.id, 0): c.initially_correct for c in cases}
    for rnd in (1, 2):
        for kind, d, r in zip(events["kind"], details, events["round"], strict=True):
            if r == rnd and kind == "decide" and d["decision"] == "keep":
                state[d["case"]] = d["proposal"]
        for c in cases:
            expected[(c.id, rnd)] = _expected_correct(c, state[c.id])
    frame = result.correctness()
    got = {(row["case"], row["round"]): row["correct"] for row in frame.iter_rows(named=True)}
    assert got == expected
    assert result.final == state

    table = result.per_round(resamples=50)
    assert (table["net"] == table["fixed"] - table["broken"]).all()
    assert table["fixed"][1] == 1  # slugify's fix is always proposed (fix=1.0) and it resolves
    assert table["broken"][2] >= 1  # ...and in round 2 its tempting truncation silently breaks it
    moved = result.transitions().filter(
        (pl.col("round") == 1) & (pl.col("after") == "right") & (pl.col("before") == "wrong")
    )
    assert moved["cases"].to_list() == [["slugify"]]
    fixed = result.moves(1).filter(pl.col("move") == "fixed")
    assert fixed["case"].to_list() == ["slugify"] and fixed["now holds"].to_list() == ["fix"]
    assert fixed["effect"].to_list() == ["resolves"]
    assert table["cost"][1] == 2.0  # one nominal (simulated) cost unit per proposal


@pytest.mark.slow
def test_cached_validation_is_reused_and_rechecks_bypass_it(checker: Checker) -> None:
    cases = [BY_ID["slugify"], BY_ID["safe_div"]]
    rep = SimulatedRepairer(fix=1.0, breaks=1.0, break_growth=1.0, seed=1)
    first = repair.run(cases, rep, rounds=2, checker=checker, rules=())
    runs = checker.runs
    second = repair.run(cases, rep, rounds=2, checker=checker, rules=())
    assert checker.runs == runs  # every (candidate, suite) was already validated
    assert first.correctness().drop("seconds").equals(second.correctness().drop("seconds"))
    verdicts = checker.recheck(BY_ID["safe_div"].original, BY_ID["safe_div"].visible, 2, until_disagreement=False)
    assert len(verdicts) == 3 and checker.runs == runs + 2


@pytest.mark.slow
def test_run_rules_stop_the_run_and_the_trace_says_which(checker: Checker) -> None:
    cases = [BY_ID["slugify"], BY_ID["safe_div"]]
    rep = SimulatedRepairer(fix=1.0, breaks=1.0, break_growth=1.0, seed=1)
    capped = repair.run(cases, rep, rounds=2, checker=checker, rules=[Cap(cost=2)])
    assert capped.rounds_run == 1 and capped.rule_stop is not None and capped.rule_stop.rule == "cap"
    stops = capped.events().filter(pl.col("kind") == "stop")
    assert json.loads(stops["detail"][0])["rule"] == "cap"
    uncapped = repair.run(cases, rep, rounds=2, checker=checker, rules=[Cap(cost=100)])
    assert uncapped.rule_stop is None and uncapped.stop.rule == "round-cap" and uncapped.rounds_run == 2

    # Round 2 breaks slugify (a tempting truncation): net < 0, so the round is rolled back.
    only = [BY_ID["slugify"]]
    rolled = repair.run(only, rep, rounds=2, checker=checker, rules=[MarginalNet(project=False)])
    assert rolled.per_round(resamples=0)["net"].to_list() == [0, 1, -1]
    assert rolled.rule_stop is not None and rolled.rule_stop.outcome is Stop.ROLL_BACK
    assert rolled.final == {"slugify": "fix"}
    kept = repair.run(only, rep, rounds=1, checker=checker, rules=[MarginalNet(project=False)])
    assert kept.rule_stop is None and kept.final == {"slugify": "fix"}


@pytest.mark.slow
def test_two_patches_oscillating_fire_the_oscillation_rule(checker: Checker) -> None:
    case = BY_ID["format_name"]
    flipping = repair.run([case], SimulatedRepairer(fix=0.0), rounds=3, checker=checker, rules=())
    assert [s.rule for s in flipping.stops] == ["oscillation"] and flipping.stops[0].case == "format_name"
    assert flipping.stops[0].outcome is Stop.ESCALATE
    assert flipping.final["format_name"] in case.oscillates  # frozen where it stood
    fixing = repair.run([case], SimulatedRepairer(fix=1.0, breaks=0.0), rounds=3, checker=checker, rules=())
    assert fixing.stops == () and fixing.final == {"format_name": "fix"}


@pytest.mark.slow
def test_a_flaky_test_fires_the_unstable_validator_rule(checker: Checker) -> None:
    flaky = repair.run([BY_ID["pick_winner"]], SimulatedRepairer(), rounds=0, checker=checker, recheck=12)
    assert [(s.rule, s.case) for s in flaky.stops] == [("unstable_validator", "pick_winner")]
    assert "fix acceptance first" in flaky.stops[0].reason
    stable = repair.run([BY_ID["safe_div"]], SimulatedRepairer(), rounds=0, checker=checker, recheck=2)
    assert stable.stops == ()
    reruns = stable.events().filter(pl.col("kind") == "verify")
    assert reruns.height == 3  # the original and two uncached re-runs, all in the ledger


@pytest.mark.slow
def test_a_model_writes_the_patch_when_one_is_set(checker: Checker) -> None:
    from labkit.models.replay import script

    case = BY_ID["slugify"]
    fixed = case.candidate("fix").files[case.module]
    model = script(lambda messages, params: f"```python\n{fixed}```", name="repair-test")
    result = repair.run([case], ModelRepairer(model), rounds=1, checker=checker, rules=())
    assert result.simulated  # a scripted model is simulated, and says so
    assert result.final == {"slugify": "fix"}  # recognised as the case's known fix
    assert result.per_round(resamples=0)["fixed"].to_list() == [0, 1]
    generated = result.events().filter((pl.col("kind") == "generate") & (pl.col("round") > 0))
    assert generated.height == 1 and json.loads(generated["detail"][0])["source"] == "model"
    assert "simulated" in repair.label(result)


@pytest.mark.slow
def test_a_model_failure_is_recorded_and_the_case_keeps_its_state(checker: Checker) -> None:
    from labkit.core.errors import ModelTimeout
    from labkit.models.replay import script

    model = script([ModelTimeout("the model took too long")], name="repair-timeout")
    result = repair.run([BY_ID["slugify"]], ModelRepairer(model), rounds=1, checker=checker, rules=())
    errors = result.events().filter(pl.col("kind") == "error")
    assert errors.height == 1 and "ModelTimeout" in json.loads(errors["detail"][0])["error"]
    assert result.final == {"slugify": "original"}


def test_label_says_simulated_once() -> None:
    from types import SimpleNamespace

    from labkit.experiments.repair import label

    assert label(SimpleNamespace(strategy="simulated repairer", simulated=True)) == (
        "simulated repairer (validator and tests real)"
    )
    assert label(SimpleNamespace(strategy="scripted", simulated=True)).startswith("scripted (simulated; ")
    assert label(SimpleNamespace(strategy="labkit/smollm2", simulated=False)).startswith("labkit/smollm2 (model; ")
