"""A run's validation cost depends on the run alone, never on what the shared verdict cache holds.

The verdict cache is shared by every run in a process (issue 13 follow-up): before, a run that
found a verdict already cached (another arm's, or an earlier run's) paid 0 for it, so an arm's
cost units, and whether it could afford its next step, depended on job order and on which jobs
shared a process. Now a run pays a validation the first time it validates a (candidate, suite,
validator), cached or not; `cached` stays in the ledger as wall time saved.
"""

from __future__ import annotations

import random
from typing import Any

from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms import run
from labkit.experiments.arms.run import Job, JobResult, Plan, jobs_for, merge, run_job, sweep
from labkit.record.ledger import Ledger

SETTLED = ("settled", "unknown", "overrun")
PLAN = Plan()  # the simulated policy; every candidate is validated for real


def _costs(events: list[dict[str, Any]]) -> tuple[float, float, int]:
    """(cost units on the run's VERIFY events, cost units its budget settled as verify, cached hits)."""
    verify = [e for e in events if e["kind"] == "verify" and e["role"] == "validator"]
    settled = [
        e for e in events if e["kind"] == "verify" and e["role"] == "budget" and e["detail"].get("status") in SETTLED
    ]
    return (
        sum(e["cost_units"] for e in verify),
        sum(e["cost_units"] for e in settled),
        sum(bool(e["detail"].get("cached")) for e in verify),
    )


def _cold(job: Job) -> JobResult:
    run._checker.cache_clear()  # a new Checker: an empty verdict cache
    return run_job(PLAN, job)


def test_the_same_job_pays_the_same_whether_the_cache_is_cold_or_warm() -> None:
    job = jobs_for("repair", ["pluralize"], ["reflect"], [0])[0]
    cold = _cold(job)
    warm = run_job(PLAN, job)  # same process, same cache: every verdict is now cached
    c, w = _costs(cold.events), _costs(warm.events)
    assert w[2] > 0 and w[2] > c[2], "the second run did not hit the cache: nothing was tested"
    assert c[0] > 0 and c[0] == c[1]  # the ledger's VERIFY costs are what the budget settled
    assert w[:2] == c[:2], f"cold run paid {c[:2]}, the same run on a warm cache {w[:2]}"


def test_two_arms_sharing_the_start_pay_the_same_in_either_order() -> None:
    a, b = (jobs_for("repair", ["camel_to_snake"], [arm], [1])[0] for arm in ("direct", "best_of_n"))
    a_first, b_second = _cold(a), run_job(PLAN, b)
    b_first, a_second = _cold(b), run_job(PLAN, a)
    assert _costs(b_second.events)[2] > 0 and _costs(a_second.events)[2] > 0  # the start came from the cache
    assert _costs(a_first.events)[:2] == _costs(a_second.events)[:2]
    assert _costs(b_first.events)[:2] == _costs(b_second.events)[:2]


def test_a_sweeps_arm_costs_do_not_depend_on_job_order() -> None:
    jobs = jobs_for("repair", ["camel_to_snake", "pluralize"], ["direct", "best_of_n", "reflect"], [0])
    shuffled = list(jobs)
    random.Random(13).shuffle(shuffled)
    frames = []
    for order in (jobs, shuffled, jobs[::-1]):  # reversed: each case's first job is another arm
        run._checker.cache_clear()
        ledger = Ledger()
        merge(ledger, sweep(PLAN, order, workers=1))  # one process: later jobs find earlier verdicts
        frames.append(metrics.runs(ledger).sort("run"))
    cols = ["run", "status", "rounds", "calls", "tokens", "cost", "correct"]
    for other in frames[1:]:
        assert frames[0].select(cols).equals(other.select(cols)), "an arm's spend depends on job order"


def test_within_a_run_a_repeat_is_free_a_fresh_rerun_is_paid_and_a_resumed_run_keeps_what_it_paid() -> None:
    from labkit.grading.cases import load_case
    from labkit.grading.verdicts import Checker
    from labkit.loop.engine.steps import Recorder
    from labkit.loop.engine.trace import Task

    case = load_case("cache_isolation")
    task = Task(id="iso", start=case.start, suite=case.suite)
    checker, ledger = Checker(), Ledger()
    rec = Recorder(run_id="r", ledger=ledger, checker=checker, budget=None, validation_cost=2.0, simulated=True)

    def paid(r: Recorder, **kw: bool) -> float:
        ch = r.check(task, 0, case.start, **kw)
        r.verified(task, 0, case.start, ch, None, "t")
        return ch.cost_units

    assert [paid(rec), paid(rec), paid(rec, fresh=True)] == [2.0, 0.0, 2.0]
    assert rec.usage.cost_units == 4.0 and checker.runs == 2  # the second was a cache hit
    other = Recorder(
        run_id="s", ledger=ledger, checker=checker, budget=None, validation_cost=2.0, simulated=True
    )  # another run, same cache: pays its own
    assert paid(other) == 2.0 and checker.runs == 2
    verify = [e.cost_units for e in ledger.events("r") if e.kind == "verify"]
    assert verify == [2.0, 0.0, 2.0]  # the ledger holds what was charged


def test_a_resumed_run_keeps_what_it_paid_for_before() -> None:
    from labkit.grading.cases import load_case
    from labkit.grading.verdicts import Checker
    from labkit.loop.engine import resume
    from labkit.loop.engine import run as run_engine
    from labkit.loop.engine.steps import Recorder
    from labkit.loop.engine.trace import Task

    case = load_case("cache_isolation")
    task = Task(id="iso", start=case.start, suite=case.suite)
    checker, ledger = Checker(), Ledger()
    run_engine([task], _Idle(), checker, rounds=0, ledger=ledger, run_id="r", validation_cost=2.0)
    recorded = resume.read(ledger, "r")
    assert recorded is not None
    assert recorded.paid == {(case.start.digest, case.suite.digest, checker.id)}
    again = Recorder(run_id="r", ledger=ledger, checker=checker, budget=None, validation_cost=2.0, simulated=True)
    assert again.check(task, 1, case.start).cost_units == 2.0  # a new run (nothing seeded) pays
    resumed = Recorder(run_id="r", ledger=ledger, checker=checker, budget=None, validation_cost=2.0, simulated=True)
    resumed.paid_before(recorded.paid)
    assert resumed.check(task, 1, case.start).cost_units == 0.0  # the same run, resumed: already paid


class _Idle:
    name = "idle"
    simulated = True

    def propose(self, situation: Any) -> Any:
        from labkit.loop.engine.strategy import Proposal

        return Proposal()
