"""Same-budget arms (issue 13): hidden tests never reach a prompt, budgets hold, incomplete
jobs stay in the denominator, self-written tests' false positives are measured."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from labkit.core.types import Usage
from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.arms import ARMS
from labkit.experiments.arms.policy import CODE_SCHEMA
from labkit.experiments.arms.run import Plan, Workers, jobs_for, merge, run_job, sweep
from labkit.experiments.arms.suites import HIDDEN, humaneval_cases, repair_arm_cases
from labkit.record.ledger import Ledger

REPAIR = ["camel_to_snake", "pluralize"]
OUTCOME = ["suite", "case", "arm", "seed", "status", "start", "first", "correct", "visible", "rounds",
           "children", "rolled_back", "tokens", "calls", "cost", "scores"]  # fmt: skip


def _hidden_fragments(case: Any) -> list[str]:
    """Lines of a case's hidden test file that no visible text contains (so a leak is detectable)."""
    visible = "\n".join(str(t) for t in case.task.suite.tests.values()) + str(case.task.start.files)
    text = str(case.task.hidden.tests[next(iter(case.task.hidden.tests))])
    lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) > 12 and "assert" in ln]
    return [ln for ln in lines if ln not in visible] + [next(iter(case.task.hidden.tests)), "test_hidden"]


def test_no_hidden_test_text_or_result_reaches_a_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every arm, on a model policy whose every request is captured: no hidden line, path or id."""
    prompts: list[str] = []

    def fake_complete(model: str, messages: list[dict[str, str]], json_schema: Any = None, **kw: Any) -> Any:
        prompts.append("\n".join(m["content"] for m in messages))
        review = "review" in messages[0]["content"]
        text = "BUG: it is wrong" if review else "```python\ndef nothing():\n    return None\n```"
        if json_schema is not None:  # the constrained policy asks for a record
            field = next(iter(json_schema["properties"]))
            text = json.dumps(
                {"verdict": "BUG", "reason": "it is wrong"}
                if review
                else {field: ["def nothing():", "    return None"]}
            )
        return SimpleNamespace(text=text, usage=Usage(tokens=50, calls=1, cost_units=1.0))

    import labkit.models.gateway as gateway

    monkeypatch.setattr(gateway, "complete", fake_complete)
    plan = Plan(
        model="fake/model", stronger="fake/strong", limit=Usage(tokens=8192, calls=6, wall_seconds=900, cost_units=30)
    )
    cases = [*humaneval_cases(["HumanEval/0"]), *repair_arm_cases(["pluralize"])]
    fragments = {c.id: _hidden_fragments(c) for c in cases}
    assert all(len(f) > 2 for f in fragments.values())  # the detector has something to find
    for c in cases:
        hidden_text = str(
            c.task.hidden.tests[HIDDEN if HIDDEN in c.task.hidden.tests else next(iter(c.task.hidden.tests))]
        )
        assert any(f in hidden_text for f in fragments[c.id])  # and finds it where it is
        for arm in ARMS:
            before = len(prompts)
            suite = "repair" if c.id == "pluralize" else "humaneval"
            r = run_job(plan, jobs_for(suite, [c.id], [arm], [0])[0])
            assert len(prompts) > before, f"{arm} on {c.id} asked nothing"
            assert r.status in ("complete", "incomplete")
            for p in prompts[before:]:
                leaked = [f for f in fragments[c.id] if f in p]
                assert not leaked, f"{arm} on {c.id}: hidden text in a prompt: {leaked[:2]}"
    # the evidence-driven arm did show visible failures (so the check above saw real evidence prompts)
    assert any("These visible tests fail" in p and "test_example" in p for p in prompts)


def _sim_sweep(
    plan: Plan, arms: list[str], seeds: list[int], workers: int = 1, backend: str = "local", pool: Workers | None = None
) -> Ledger:
    ledger = Ledger()
    jobs = jobs_for("repair", REPAIR, arms, seeds)
    merge(ledger, sweep(plan, jobs, workers=workers, backend=backend, pool=pool))  # type: ignore[arg-type]
    return ledger


def test_budgets_never_exceeded_and_incomplete_jobs_stay_in_the_denominator() -> None:
    limit = Usage(tokens=3 * 1024, calls=3, wall_seconds=600.0, cost_units=9.0)
    plan = Plan(limit=limit, n=4, stronger="sim")  # best-of-4 cannot reserve 4 calls in a 3-call budget
    ledger = _sim_sweep(plan, ["best_of_n", "reflect", "self_refine", "self_tests"], [0, 1])
    frame = metrics.runs(ledger)
    for run_id in frame["run"]:
        spent = ledger.usage(run_id, role="budget")
        assert spent.fits_in(limit), f"{run_id} spent {spent} over {limit}"
    bon = frame.filter(pl.col("arm") == "best_of_n")
    assert (bon["status"] == "incomplete").all() and (bon["calls"] == 0).all()
    row = next(r for r in metrics.table(frame) if r.arm == "best_of_n")
    assert row.jobs == bon.height == 4  # counted, not dropped
    assert row.success is not None and row.success.estimate == 0.0 and row.incomplete.estimate == 1.0  # type: ignore[union-attr]
    # some arm really ran out mid-way (not only the one that could not start)
    assert frame.filter((pl.col("status") == "incomplete") & (pl.col("calls") > 0)).height > 0


def test_self_written_tests_false_positive_rate_is_measured() -> None:
    limit = Usage(tokens=6 * 1024, calls=6, wall_seconds=600.0, cost_units=20.0)
    rates = {}
    for weak in (0.0, 1.0):
        plan = Plan(limit=limit, sim={"weak_tests": weak, "p_fix_blind": 0.2, "p_fix_evidence": 0.3})
        j = metrics.self_test_judgements(_sim_sweep(plan, ["self_tests"], [0, 1, 2]))
        wrong = j.filter(~pl.col("hidden_pass"))
        assert wrong.height > 0, "no wrong code was judged: nothing to measure"
        rates[weak] = wrong["own_pass"].mean()
    assert rates[1.0] == 1.0  # tests that only import the module pass every wrong answer
    assert rates[0.0] < 1.0  # the visible tests as own tests catch some of them (not all: overfit patches pass)


def test_same_seeds_same_results_on_one_and_two_workers_and_a_killed_worker_reruns_once(tmp_path: Any) -> None:
    plan = Plan(stronger="sim")
    arms = ["direct", "reflect", "self_refine"]
    one = metrics.runs(_sim_sweep(plan, arms, [0, 1], workers=1)).select(OUTCOME)
    two = metrics.runs(_sim_sweep(plan, arms, [0, 1], workers=2)).select(OUTCOME)
    assert one.equals(two)
    marker = tmp_path / "killed"
    killed = Plan(stronger="sim", kill_once=str(marker))
    ledger = _sim_sweep(killed, arms, [0, 1], workers=2)
    assert marker.exists()  # a worker did die
    frame = metrics.runs(ledger)
    assert frame.height == len(REPAIR) * len(arms) * 2 and frame["run"].n_unique() == frame.height
    assert frame.select(OUTCOME).equals(one)
    # merging the same results again adds nothing
    before = len(ledger)
    merge(ledger, sweep(plan, jobs_for("repair", REPAIR[:1], arms[:1], [0])))
    assert len(ledger) == before


def test_ray_backend_gives_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray  # a dependency: an ImportError fails this test, never skips it

    def environment() -> dict[str, str | None]:  # nested: Ray ships it by value, not by module name
        import os

        return {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "PYTHONPATH")}

    plan = Plan(stronger="sim")
    arms = ["direct", "reflect"]
    local = metrics.runs(_sim_sweep(plan, arms, [0], workers=1)).select(OUTCOME)
    monkeypatch.setenv("PYTHONPATH", "/labkit-test-path")  # a local cluster's workers get ours
    with Workers("ray", 2) as pool:
        ledger = _sim_sweep(plan, arms, [0], pool=pool)
        # litellm in a Ray worker never fetches its price list (the cost map is local), and
        # the worker sees this process's PYTHONPATH
        on_worker = ray.get(ray.remote(environment).remote())
    assert on_worker == {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": "/labkit-test-path"}
    assert metrics.runs(ledger).select(OUTCOME).equals(local)


def test_stronger_arm_without_a_second_model_is_not_available_never_stood_in_for() -> None:
    ledger = _sim_sweep(Plan(), ["stronger"], [0])
    frame = metrics.runs(ledger)
    assert (frame["status"] == "not available").all() and (frame["calls"] == 0).all()
    (row,) = metrics.table(frame)
    assert row.status == "not available" and row.success is None


def test_humaneval_visible_examples_by_value_and_cases_the_canonical_fails_are_reported() -> None:
    from labkit.grading.validator import Validator

    v = Validator()
    cases = {c.id: c for c in humaneval_cases(["HumanEval/0", "HumanEval/47", "HumanEval/116"])}
    c0 = cases["humaneval-0"]
    assert len(c0.task.suite.fail_to_pass) == 2
    verdict = {
        name: (v.run(cand, c0.task.suite).resolved, v.run(cand, c0.task.hidden).resolved)  # type: ignore[arg-type]
        for name, (cand, _) in c0.states.items()
    }
    assert verdict == {"canonical": (True, True), "lookup": (True, False), "none": (False, False)}
    for cid in ("humaneval-47", "humaneval-116"):
        canon = cases[cid].states["canonical"][0]
        assert v.run(canon, cases[cid].task.hidden).resolved  # type: ignore[arg-type]
        assert not v.run(canon, cases[cid].task.suite).resolved  # the prompt's own example is wrong
    assert cases["humaneval-116"].unparsed  # and the example that is not `call == value` is listed


def test_metrics_flip_matrix_counts_every_job_once_per_round() -> None:
    frame = metrics.runs(_sim_sweep(Plan(), ["reflect"], [0, 1]))
    flips = metrics.flips(frame, "reflect")
    assert set(flips.group_by("round").agg(pl.col("count").sum())["count"]) == {frame.height}
    assert json.dumps(metrics.table(frame)[0].spend)  # spend is reported beside the limit


def _events(r: Any, kind: str) -> list[dict[str, Any]]:
    return [e for e in r.events if e["kind"] == kind]


def test_a_model_policy_asks_for_a_schema_and_a_reply_that_is_not_the_record_is_a_recorded_failure() -> None:
    """Through the real gateway (scripted model): each call carries the schema as litellm's
    response_format; a JSON record's lines become the module; a reply that is not the record
    asked for is that round's explained failure, and the job still finishes."""
    from labkit.models import replay

    case = repair_arm_cases(["pluralize"])[0]
    correct = next(c for c, kind in case.states.values() if kind == "correct")
    module = next(p for p in correct.files if not p.startswith("tests/"))
    seen: list[dict[str, Any]] = []

    def reply(good: bool) -> Any:
        def fn(messages: Any, params: Any) -> str:
            seen.append(dict(params))
            return json.dumps({"code": correct.files[module].splitlines()}) if good else "Sure! Here is the code."

        return fn

    limit = Usage(tokens=4096, calls=2, wall_seconds=600.0, cost_units=10.0)
    job = jobs_for("repair", ["pluralize"], ["direct"], [0])[0]
    bad = run_job(Plan(model=replay.script(reply(False), name="arms-bad"), limit=limit), job)
    (proposal,) = [e for e in _events(bad, "reflect") if e["role"] == "reflector"]
    assert proposal["detail"]["failure"].startswith("reply is not the record asked for: reply is not JSON")
    assert proposal["calls"] == 1 and proposal["tokens"] > 0  # paid for, recorded
    assert bad.status == "complete"
    fmt = seen[-1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == CODE_SCHEMA
    good = run_job(Plan(model=replay.script(reply(True), name="arms-good"), limit=limit), job)
    row = metrics.runs(_ledger_of(good)).row(0, named=True)
    assert row["correct"] and not metrics.runs(_ledger_of(bad)).row(0, named=True)["correct"]


def test_an_unconstrained_model_policy_reads_a_python_block_and_sends_no_schema() -> None:
    from labkit.experiments.arms.policy import ModelPolicy
    from labkit.models import replay

    seen: list[dict[str, Any]] = []

    def fn(messages: Any, params: Any) -> str:
        seen.append(dict(params))
        return "no block here"

    case = repair_arm_cases(["pluralize"])[0]
    model = replay.script(fn, name="arms-free")
    policy = ModelPolicy(model=model, records=False)
    from labkit.loop.engine.strategy import Situation

    s = Situation(round=1, candidate=case.task.start, verdict=None, case="pluralize", suite=case.task.suite)  # type: ignore[arg-type]
    act = policy.draft(s, 0)
    assert act.candidate is None and act.error == "reply has no ```python block"
    assert "response_format" not in seen[-1]


def _ledger_of(r: Any) -> Ledger:
    ledger = Ledger()
    merge(ledger, [r])
    return ledger


class _FlakyRay:
    """Stands in for the `ray` module: ray.init fails `failures` times, then starts."""

    def __init__(self, failures: int) -> None:
        self.failures, self.inits, self.shutdowns = failures, 0, 0

    def init(self, **_: object) -> None:
        self.inits += 1
        if self.inits <= self.failures:
            raise Exception("The current node timed out during startup.")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_local_ray_cluster_that_fails_to_start_once_is_started_again_and_twice_is_named():
    from labkit.core.errors import BackendUnavailable
    from labkit.experiments.arms.run import Workers

    once = _FlakyRay(failures=1)
    Workers(backend="ray")._start_local_ray(once)
    assert (once.inits, once.shutdowns) == (2, 1)

    twice = _FlakyRay(failures=2)
    with pytest.raises(BackendUnavailable, match=r"Ray cluster did not start \(2 attempts\).*timed out during startup"):
        Workers(backend="ray")._start_local_ray(twice)
    assert (twice.inits, twice.shutdowns) == (2, 2)


def test_self_tests_run_as_the_engines_observation_and_a_rule_stops_an_accepted_case() -> None:
    # the arm asks the engine to run its own tests (a probe between two asks of one round), reads
    # the probe's output, and once they pass its case stops by the case rule, not by idling
    from labkit.record.events import Kind

    plan = Plan(sim={"weak_tests": 1.0})  # tests that only import the module: they pass at once
    r = run_job(plan, jobs_for("repair", ["pluralize"], ["self_tests"], [0])[0])
    kinds = [(e["role"], e["kind"]) for e in r.events if e["round"] == 1 and e["role"] != "budget"]
    assert kinds[:3] == [("reflector", Kind.REFLECT), ("reflector", Kind.EXPERIMENT), ("reflector", Kind.IDLE)]
    probe = next(e for e in r.events if e["kind"] == Kind.EXPERIMENT)
    assert "test_self.py::test_self_runs" in probe["outputs"] and '"outcome": "passed"' in probe["outputs"]
    idle = next(e for e in r.events if e["kind"] == Kind.IDLE)
    assert json.loads(idle["detail"]["note"])["self_tests"] == "pass"
    stop = [e for e in r.events if e["kind"] == Kind.STOP]
    assert [e["detail"]["rule"] for e in stop] == ["own-check-accepts"] and stop[0]["round"] == 1
