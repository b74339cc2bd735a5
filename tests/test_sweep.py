"""The arms sweep's workers (issue 13): a case's jobs share one worker's verdict cache, so 2
workers validate exactly what 1 does; warm workers are each warmed once and give the same
results as one in-process worker."""

from __future__ import annotations

from collections import Counter
from typing import Any

from labkit.experiments.arms import arm_metrics as metrics
from labkit.experiments.arms.run import (
    Job,
    JobResult,
    Plan,
    Workers,
    _checker,
    batches,
    jobs_for,
    merge,
    sweep,
)
from labkit.record.ledger import Ledger

CASES = ["camel_to_snake", "chunks", "flatten", "median"]
OUTCOME = ["suite", "case", "arm", "seed", "status", "correct", "visible", "rounds", "calls", "scores"]


def _fresh_validations(results: list[JobResult]) -> Counter[Any]:
    """Sandboxed pytest runs actually made (a verdict from the worker's cache is not one)."""
    return Counter(
        (r.job.case, e["kind"])
        for r in results
        for e in r.events
        if e["kind"] in ("verify", "score") and e["role"] != "budget" and e["detail"].get("cached") is False
    )


def _cold_in_process(jobs: list[Job]) -> list[JobResult]:
    """The jobs on one worker in this process, from an empty verdict cache."""
    _checker.cache_clear()
    return sweep(Plan(), jobs, workers=1)


def _outcomes(results: list[JobResult]) -> Any:
    ledger = Ledger()
    merge(ledger, results)
    return metrics.runs(ledger).select(OUTCOME)


def test_batches_keep_a_case_on_one_worker_and_split_only_to_feed_every_worker() -> None:
    jobs = jobs_for("repair", CASES, ["direct", "reflect"], [0, 1])
    got = batches(jobs, 2)
    assert [len(b) for b in got] == [4, 4, 4, 4] and all(len({j.case for j in b}) == 1 for b in got)
    assert [j for b in got for j in b] == jobs  # every job once, in order
    few = batches(jobs_for("repair", CASES[:1], ["direct", "reflect"], [0, 1]), 2)
    assert sorted(len(b) for b in few) == [1, 1, 1, 1]  # one case: split so 2 workers both work
    assert batches([], 2) == []


def test_two_workers_validate_what_one_does_and_give_the_same_results() -> None:
    jobs = jobs_for("repair", CASES, ["direct", "reflect"], [0, 1])
    one = _cold_in_process(jobs)
    two = sweep(Plan(), jobs, workers=2)
    assert _outcomes(two).equals(_outcomes(one))
    assert sum(_fresh_validations(one).values()) > 0
    assert _fresh_validations(two) == _fresh_validations(one)  # spread over workers, cases were validated twice


def test_warm_workers_are_each_warmed_once_and_forget_the_warm_up() -> None:
    jobs = jobs_for("repair", CASES, ["direct"], [0, 1])  # 4 cases: 4 batches, none split
    warm: Job = jobs[0]  # the warm-up job is also timed: its verdicts must not be reused
    with Workers("local", 2) as w:
        warmed = w.warm(Plan(), warm)
        assert len({pid for pid, _ in warmed}) == 2
        results = w.run(Plan(), jobs)
    one = _cold_in_process(jobs)
    assert _outcomes(results).equals(_outcomes(one))
    assert _fresh_validations(results) == _fresh_validations(one)  # nothing reused from the warm-up's cache
