"""The chapter's remaining lessons (issue 19), each asserted from its runs."""

from __future__ import annotations

import pytest

from labkit.core.error_classes import ErrorClass
from labkit.core.errors import InvalidRecord, PermissionRefused, TestChangeRefused
from labkit.experiments.lessons import bound_reflection, coverage
from labkit.experiments.lessons import free_shipping as test_change
from labkit.experiments.lessons import irreversible as effects
from labkit.experiments.lessons import layer_figures as metrics
from labkit.grading.cases import load_case
from labkit.grading.verdicts import Checker
from labkit.loop.control.bound import BoundReflection, check_bound
from labkit.loop.control.test_change import Requirement, change_test
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.vocabulary import shape, undeclared

MINE = {Kind.TEST_CHANGE, Kind.TOOL, Kind.EFFECT, Kind.ESCALATE, Kind.REFLECT, Kind.CHECKPOINT}


def _declared(led: Ledger) -> None:
    for e in led.events():
        if e.role == "budget":  # budget events carry the paid kind and BudgetDetail
            continue
        if e.kind in MINE or (e.kind == Kind.STOP and "unit" in e.detail and e.role != "search"):
            assert shape(e.role, e.kind) is not None and undeclared(e.role, e.kind, e.detail) == [], (
                e.kind,
                dict(e.detail),
            )


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker()


# -- 1. the coverage counterfactual ------------------------------------------------------------


def test_without_the_protective_tests_the_engine_keeps_disable_the_cache(checker: Checker) -> None:
    led = Ledger()
    covered, uncovered = coverage.counterfactual(checker, led)
    assert (covered.protective, uncovered.protective) == (2, 0) and covered.suite != uncovered.suite
    assert covered.decision == "roll back" and "breaks protective tests" in covered.reason
    assert covered.kept == "v1 single key (product_id)"
    assert uncovered.decision == "keep" and uncovered.kept == "alternative: disable the cache"
    assert uncovered.visible_green and not uncovered.full_green  # green for the loop, wrong for the chapter
    decided = {e.run_id: e.detail["decision"] for e in led.events() if e.kind == Kind.DECIDE and "offered" in e.detail}
    assert decided == {"coverage-covered": "roll back", "coverage-uncovered": "keep"}


# -- 2. changing a test legitimately ----------------------------------------------------------


@pytest.fixture(scope="module")
def walk(checker: Checker) -> test_change.Walkthrough:
    return test_change.walkthrough(checker)


def test_the_wrong_test_makes_the_engine_keep_the_wrong_fix_until_the_change(walk: test_change.Walkthrough) -> None:
    assert walk.kept(walk.before) == "free above 50 only (order_total > 50)"
    assert walk.kept(walk.after) == "free from 50 on (order_total >= 50)"


def test_a_test_change_without_independent_evidence_is_refused_and_recorded(walk: test_change.Walkthrough) -> None:
    assert [offered for offered, _ in walk.refusals] == ["none", "NOTE-1 by scripted: shipping rivals"]
    refused = [
        e.detail
        for e in walk.ledger.events("shipping-change")
        if e.kind == Kind.TEST_CHANGE and not e.detail["accepted"]
    ]
    assert len(refused) == 2 and "no requirement evidence" in refused[0]["why"] and "NOTE-1" in refused[1]["why"]
    _declared(walk.ledger)


def test_an_accepted_change_records_evidence_digests_and_revalidates_every_scored_candidate(
    walk: test_change.Walkthrough,
) -> None:
    out = walk.outcome
    ev = walk.accepted()
    assert ev.seq == out.seq and ev.detail["requirement"]["id"] == "REQ-7"
    assert (ev.detail["old_suite"], ev.detail["new_suite"]) == (out.old.digest, out.new.digest) != (out.old.digest,) * 2
    assert ev.detail["old_test"] != ev.detail["new_test"]
    scored_before = {e.detail["candidate"] for e in walk.ledger.events("shipping-before") if e.kind == Kind.VERIFY}
    assert {r.candidate for r in out.revalidated} == scored_before and len(scored_before) == 3
    flips = {r.label: (r.old_resolved, r.new_resolved) for r in out.revalidated}
    assert flips["free above 50 only (order_total > 50)"] == (True, False)
    assert flips["free from 50 on (order_total >= 50)"] == (False, True)


def test_a_change_is_refused_for_evidence_about_another_test_or_candidates_it_cannot_recheck(checker: Checker) -> None:
    c = load_case("free_shipping")
    led = Ledger()
    from labkit.loop.engine import Task

    test_change.engine_round(c, Task(id="free_shipping", start=c.start, suite=c.suite), led, checker, "r")
    other = Requirement("REQ-9", "finance", "policy", "fees are in EUR", ("tests/test_other.py::test_x",))
    good = test_change.requirements(c)["REQ-7"]
    with pytest.raises(TestChangeRefused, match="does not concern"):
        change_test(c.suite, test_change.change(c), other, pool={}, checker=checker, ledger=led, run_id="x")
    with pytest.raises(TestChangeRefused, match="cannot be re-validated"):
        change_test(c.suite, test_change.change(c), good, pool={}, checker=checker, ledger=led, run_id="x")
    assert [e.detail["accepted"] for e in led.events("x")] == [False, False]


# -- 3. observation-bound reflection ----------------------------------------------------------


def test_unbound_reflection_burns_the_budget_bound_reflection_escalates_after_one_action() -> None:
    led = Ledger()
    unbound, bound = bound_reflection.compare(led)
    assert unbound.outcome == "budget_exhausted" and unbound.actions == bound_reflection.BUDGET
    assert len({o.command for o in unbound.history}) == unbound.actions  # ever-different commands
    assert {o.error_class for o in unbound.history} == {ErrorClass.POLICY_DENIED} and unbound.new_evidence == 0
    assert bound.outcome == "escalated" and bound.actions == 1
    spend = {
        r: sum(
            e.cost_units for e in led.events(r) if e.role == "budget" and e.detail["status"] in ("settled", "unknown")
        )
        for r in ("deploy-unbound", "deploy-bound")
    }
    assert (
        spend
        == {"deploy-unbound": unbound.spent, "deploy-bound": bound.spent}
        == {"deploy-unbound": 6.0, "deploy-bound": 1.0}
    )
    reflections = [e.detail for e in led.events("deploy-bound") if e.kind == Kind.REFLECT]
    assert reflections[0]["error_class"] == "POLICY_DENIED" and reflections[0]["action"] == 1 and reflections[0]["open"]
    assert [e.kind for e in led.events("deploy-bound")][-2:] == [Kind.ESCALATE, Kind.STOP]
    assert not any(e.kind == Kind.ESCALATE for e in led.events("deploy-unbound"))
    _declared(led)


def test_a_reflection_that_misreads_the_recorded_class_or_cites_another_action_is_rejected() -> None:
    led = Ledger()
    bound_reflection.compare(led)
    ok = BoundReflection(
        action=1,
        error_class=ErrorClass.POLICY_DENIED,
        artifact=bound_reflection.TARGET,
        open=("no write permission",),
        observation="denied",
        hypothesis="authorisation",
        next_trial="ask the operator",
    )
    assert check_bound(ok, led, "deploy-bound") is ok
    from dataclasses import replace

    with pytest.raises(InvalidRecord, match="classified POLICY_DENIED"):
        check_bound(replace(ok, error_class=ErrorClass.INVALID_ARGUMENT), led, "deploy-bound")
    with pytest.raises(InvalidRecord, match="never recorded"):
        check_bound(replace(ok, action=7), led, "deploy-bound")
    with pytest.raises(InvalidRecord, match="open explanations"):
        check_bound(replace(ok, open=()), led, "deploy-bound")
    with pytest.raises(InvalidRecord, match="unbound"):
        check_bound(None, led, "deploy-bound")


def test_the_bound_controller_refuses_an_unbound_reflector() -> None:
    from labkit.loop.control.bound import run_tool_task
    from labkit.record.budget import Budget, limits

    led = Ledger()
    br = bound_reflection
    with pytest.raises(InvalidRecord, match="unbound"):
        run_tool_task(
            br.SimulatedShell(),
            br.artifact_of,
            br.Unbound(),
            br.FIRST,
            run_id="r",
            unit="r",
            ledger=led,
            budget=Budget(limits(cost_units=6), ledger=led, run_id="r"),
            require_bound=True,
        )


def test_a_tool_task_records_through_the_engine_recorder_and_stops_by_the_engine_rule() -> None:
    from labkit.loop.control.bound import run_tool_task
    from labkit.loop.engine.stopping import NoNewEvidence
    from labkit.record.budget import Budget, limits

    br, led = bound_reflection, Ledger()

    def capped(k: int | None) -> list:
        run_id = f"capped-{k}"
        rules = (NoNewEvidence(k),) if k else ()
        run = run_tool_task(
            br.SimulatedShell(),
            br.artifact_of,
            br.Unbound(),
            br.FIRST,
            run_id=run_id,
            unit=run_id,
            ledger=led,
            budget=Budget(limits(cost_units=br.BUDGET), ledger=led, run_id=run_id),
            rules=rules,
        )
        return [run, led.events(run_id)]

    (run, events), (free, _) = capped(3), capped(None)
    # the guard is the engine's NoNewEvidence rule: action 1 is the start, actions 2-4 add nothing new
    assert (run.outcome, run.actions, free.outcome, free.actions) == ("no_progress", 4, "budget_exhausted", 6)
    assert events[-1].kind == Kind.STOP and events[-1].detail["rule"] == "no_new_evidence"
    # the engine's Recorder wrote and paid: every event says whether it is simulated, each action
    # was reserved and settled by the budget (under its kind; "unknown": a raising tool measured nothing)
    # before its TOOL event
    mine = [e for e in events if e.role != "budget"]
    assert all(e.detail["simulated"] is True for e in mine)
    shapes = [(e.role, e.kind, e.detail.get("status")) for e in events if e.kind == Kind.TOOL]
    assert shapes[:3] == [
        ("budget", Kind.TOOL, "reserved"),
        ("budget", Kind.TOOL, "unknown"),
        (Role.TOOL, Kind.TOOL, None),
    ]
    assert [e.detail["action"] for e in mine if e.kind == Kind.TOOL] == [1, 2, 3, 4]
    _declared(led)


# -- 4. side effects a rollback cannot undo ---------------------------------------------------


def test_rollback_restores_code_but_neither_refunds_nor_unsends() -> None:
    s = effects.gated()
    c = load_case("cache_isolation")
    assert [o for _, o in s.steps][:2] == ["planned", "unknown"]
    assert s.steps[2][1].startswith("refused: UNKNOWN_EFFECT") and s.steps[3][1] == "found"
    assert s.steps[4][1] == "deduplicated"
    assert s.delivered == 1 and s.duplicates == 0
    assert s.code_after_rollback == c.start.digest != s.checkpoints[1].code_version
    assert s.spent_before_rollback == s.spent_after_rollback == 2.0  # the live send and the reconciliation
    c0, c1, _ = s.checkpoints
    assert c0.pending == () and [p["state"] for p in c1.pending] == ["planned"] and c1.position > c0.position
    cp = [e.detail for e in s.ledger.events(s.run_id) if e.kind == Kind.CHECKPOINT]
    assert {"code_version", "dependency_image", "environment", "pending", "position"} <= set(cp[1])
    _declared(s.ledger)


def test_a_naive_retry_duplicates_the_send_and_the_ledger_shows_it() -> None:
    s = effects.naive()
    assert s.delivered == 2 and s.duplicates == 1


def test_an_unreconciled_effect_keeps_its_unit_incomplete() -> None:
    from labkit.loop.control.effects import EffectGate
    from labkit.record.budget import Budget, limits

    led = Ledger()
    gate = EffectGate(
        outbox=effects.LocalOutbox(),
        budget=Budget(limits(cost_units=5), ledger=led, run_id="u"),
        ledger=led,
        run_id="u",
        unit="u",
    )
    assert gate.send("k", "t", "b") == "unknown"
    with pytest.raises(PermissionRefused, match="reconcile"):
        gate.send("k2", "t", "b")  # same payload under a new key: still a repeat
    gate.finish("success", "claimed")
    assert [e.detail["status"] for e in led.events("u") if e.kind == Kind.STOP] == ["incomplete"]


# -- 5. layer metrics -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def portfolio(checker: Checker) -> metrics.Portfolio:
    return metrics.portfolio(checker)


def test_the_page_shows_the_recorded_layer_metrics_and_they_are_what_the_runs_give_now(
    portfolio: metrics.Portfolio,
) -> None:
    import json
    from dataclasses import asdict

    from recordings import assert_as_recorded

    from labkit.views import lessons as page

    record = metrics.record()
    now = json.loads(json.dumps(asdict(portfolio.metrics)))  # as stored: rows a list, not a tuple
    assert_as_recorded(now, record["metrics"], record, "the lessons page's layer metrics")
    assert metrics.recorded() == portfolio.metrics  # read back into the same typed rows
    assert record["command"] in page.recorded_source(record) and "recorded real runs" in page.recorded_source(record)


def test_layer_metrics_from_the_ledgers_of_the_runs(portfolio: metrics.Portfolio) -> None:
    p = portfolio
    m = p.metrics
    rows = {r.unit: r for r in m.rows}
    assert m.units == len(metrics.ASSIGNED) == 9  # invalid_environment stays in the denominator
    assert rows["search-wrong-env"].status == "invalid_environment" and not rows["search-wrong-env"].trusted
    assert {u for u, r in rows.items() if r.trusted} == {"search-14", "search-22", "effects-gated"}
    assert m.trusted == 3 and m.trusted_rate == pytest.approx(3 / 9)
    # a candidate is a branch that was executed: a route the budget could not also verify is
    # recorded "not run" and never built (it was paid for and counted before issue 29)
    from labkit.grading.sealed import load_search_case
    from labkit.loop.search.readback import read_search

    checks = load_search_case("api_change").checks  # each search read back from its engine events
    searched = {u: read_search(p.ledger, u, checks).result.branches for u in metrics.SEARCH_UNITS}
    branches = {u: sum(1 for b in bs if b.candidate) for u, bs in searched.items()}
    assert {u: rows[u].candidates for u in metrics.SEARCH_UNITS} == branches and min(branches.values()) >= 1
    unpaid = [b for b in searched["search-10"] if not b.candidate]
    assert [(b.outcome, b.spent) for b in unpaid] == [("not run", 0)]
    assert m.candidates_per_task == pytest.approx(sum(r.candidates for r in m.rows) / 9)
    assert m.cost == pytest.approx(
        sum(
            e.cost_units
            for e in p.ledger.events()
            if e.role == "budget" and e.detail["status"] in ("settled", "unknown", "overrun")
        )
    )
    assert m.cost_per_trusted == pytest.approx(m.cost / 3)
    assert (m.duplicated_side_effects, m.no_progress_stops, m.human_takeovers) == (1, 1, 1)
    assert rows["effects-naive"].status == "success" and not rows["effects-naive"].trusted  # a duplicate is not trusted


def test_branches_are_not_units_and_a_silent_unit_counts_as_not_returned() -> None:
    from labkit.loop.control.layer_metrics import layer_metrics

    led = Ledger()
    for branch in range(3):  # what a search writes per branch: the branch, and the child step 4 built
        led.record("r1", 1, Role.SEARCH, Kind.BRANCH, detail={"unit": "task-1", "name": f"b{branch}"})
        led.record("r1", 1, Role.EXECUTOR, Kind.GENERATE, detail={"candidate": f"c{branch}", "parent": "c"})
    led.record("r1", 1, Role.SEARCH, Kind.STOP, detail={"unit": "task-1", "status": "success", "confirmed": True})
    m = layer_metrics(led, ["task-1", "task-2"])
    assert (m.trusted, m.units, m.candidates_per_task) == (1, 2, 1.5)
    assert [r.status for r in m.rows] == ["success", "not_returned"]
    assert m.cost_per_trusted == 0.0


def test_the_effect_steps_read_spend_and_deliveries_from_the_ledger() -> None:
    from labkit.loop.control.effects import effect_steps
    from labkit.views.lessons import effect_browser

    s = effects.gated()
    steps = effect_steps(s.ledger, s.run_id)
    outcomes = [st.detail.get("outcome") for st in steps if st.kind == Kind.EFFECT]
    assert outcomes == ["planned", "unknown", "refused", "found", "deduplicated"]
    unknown = next(st for st in steps if st.detail.get("outcome") == "unknown")
    assert unknown.delivered == () and unknown.pending == ("notice-1 (unknown)",) and unknown.spent == 1.0
    assert steps[-1].kind == Kind.CHECKPOINT and steps[-1].spent == s.spent_after_rollback
    assert steps[-1].delivered == ("notice-1",)  # rolled back, still delivered
    w = effect_browser(steps)
    assert w.count == len(steps) and "notice-1" in w.pages[-1]


def test_the_new_kinds_refuse_an_undeclared_detail_field_before_writing() -> None:
    from labkit.core.errors import LedgerError

    led = Ledger()
    assert led.record("r", 1, Role.TOOL, Kind.EFFECT, detail={"key": "k", "outcome": "sent"}).detail["key"] == "k"
    with pytest.raises(LedgerError, match="'effect' events by role 'tool'.*idempotency"):
        led.record("r", 1, Role.TOOL, Kind.EFFECT, detail={"idempotency": "k"})
    assert len(led) == 1


def _shown(check: Checker) -> list[str]:
    """Every table and text of the lessons page that reads a verdict, as the page renders it."""
    from labkit.experiments.lessons import plan_state
    from labkit.views import diagnosis
    from labkit.views import lessons as page
    from labkit.views.tables import frame_html

    arms = coverage.counterfactual(check)
    walk = test_change.walkthrough(check)
    led = Ledger()
    story = plan_state.story(check, led)
    check.cache.save()
    return [
        frame_html(page.coverage_frame(arms)),
        page.test_change_md(walk),
        frame_html(page.revalidation_frame(walk)),
        frame_html(diagnosis.plan_frame(story)),
        diagnosis.plan_state_md(story),
        frame_html(diagnosis.restores_frame(story)),
        diagnosis.restores_caption(story),
        frame_html(diagnosis.checkpoints_frame(led, story.run_id)),
    ]


def test_the_recorded_verdicts_are_what_the_validator_gives_now(checker: Checker) -> None:
    """data/lessons/verdicts.json (what the page opens on): every candidate validated again for
    real, same outcomes (the module's checker holds only this session's real runs)."""
    from recordings import assert_as_recorded

    from labkit.experiments.lessons import verdicts

    record = verdicts.record()
    now = verdicts._entries(verdicts.measure(checker))
    assert set(record["verdicts"]) <= set(now)
    now = {k: v for k, v in now.items() if k in record["verdicts"]}
    assert_as_recorded(
        verdicts.outcomes(now), verdicts.outcomes(record["verdicts"]), record, "the lessons page's verdicts"
    )


def test_the_notebook_opens_on_its_recorded_verdicts_and_reopens_from_build_with_a_fresh_runs_tables(
    checker: Checker, tmp_path, monkeypatch
) -> None:
    """notebooks/lessons opens on the recorded verdicts plus build/'s (experiments.lessons.verdicts),
    so it runs no pytest (its layer metrics are a recording too); a reopen reads build/ alone. Both show exactly what a run that
    validated every candidate for real shows."""
    from labkit.experiments.lessons import verdicts
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import build_checker

    fresh = _shown(checker)  # every verdict from a real pytest run of this session
    assert verdicts.why_not(checker) is None  # the recording applies here (else the page validates for real)

    def never(self: Validator, candidate, suite, **kw):  # type: ignore[no-untyped-def]
        raise AssertionError(f"{suite.name} validated again on opening")

    monkeypatch.setattr(Validator, "run", never)
    assert _shown(verdicts.checker(tmp_path)) == fresh  # first open: the recording, saved into build/
    assert _shown(build_checker("lessons", tmp_path)) == fresh  # reopen: build/ alone


def test_the_recorded_verdicts_apply_only_to_the_validator_settings_and_interpreter_that_made_them(monkeypatch) -> None:
    from labkit.experiments.lessons import verdicts
    from labkit.grading.sandbox_facts import Limits
    from labkit.grading.validator import Validator

    other = Checker(Validator(Limits(wall_seconds=59.0)))
    assert "validator settings" in str(verdicts.why_not(other))
    here = Checker()
    assert verdicts.why_not(here) is None
    record = verdicts.record()
    monkeypatch.setattr(verdicts, "record", lambda: {**record, "runtime": "3.10.0/" + record["runtime"].split("/")[1]})
    assert "3.10.0" in str(verdicts.why_not(here))
    monkeypatch.setattr(verdicts, "record", lambda: {**record, "runtime": record["runtime"].split("/")[0] + "/0.1"})
    assert "/0.1" in str(verdicts.why_not(here))


def test_the_bound_reflection_chart_plots_the_ledgers_charges_labelled_by_source() -> None:
    from labkit.experiments.lessons import bound_reflection
    from labkit.record.ledger import Ledger
    from labkit.views import lessons as page

    ledger = Ledger()
    unbound, bound = bound_reflection.compare(ledger)
    frame = page.spend_frame([unbound, bound], ledger)
    last = {r["reflector"]: r for r in frame.group_by("reflector").last().iter_rows(named=True)}
    assert last[unbound.reflector]["spent (cost units)"] == unbound.spent == bound_reflection.BUDGET
    assert (
        last[unbound.reflector]["action"] == unbound.actions and last[bound.reflector]["action"] == bound.actions == 1
    )
    assert last[bound.reflector]["how it ended"] == "escalated"
    title = page.spend_chart(frame, bound_reflection.BUDGET).to_dict()["title"]
    assert "scripted reflectors, simulated shell" in title and "budget 6 units" in title
