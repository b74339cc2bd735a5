"""Dependency-aware merge (issue 24, seed 002 §6): the graph, the merge policies, the recording.

The graph tests are pure. The merge tests run the naive, repair-only and dependency-aware
policies once (module fixture, every check in the sandboxed validator, ~15 s) and compare
them with the committed recording exactly; `recheck_all` is only in the recording
(`python -m labkit.experiments.long_projects.merge --record`)."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import CaseError
from labkit.experiments.long_projects.merge import COMMAND, Refuter, measure, read_recorded
from labkit.experiments.long_projects.merge_case import load_merge_case
from labkit.experiments.long_projects.merge_graph import Dag, Edge
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

CASE = load_merge_case()
DAG = CASE.dag
MEASURED = ("naive", "repair_only", "dependency_aware")


def test_a_premise_change_invalidates_exactly_its_dependents() -> None:
    # units' output premise is read by discount and format: those conclusions, and units' own, go stale
    assert DAG.consumers("units") == ("discount", "format")
    assert DAG.stale("units") == (
        "local:units",
        "edge:parse->units",
        "edge:units->discount",
        "edge:units->format",
    )
    # nothing downstream of the edges it feeds: discount->tax and tax->format assumed the plan's premise
    assert DAG.downstream("units") == ("discount", "tax", "format")
    assert not {"edge:discount->tax", "edge:tax->format", "local:discount", "local:parse"} & set(DAG.stale("units"))
    assert DAG.stale("discount") == ("local:discount", "edge:units->discount", "edge:discount->tax")
    assert DAG.stale("format") == ("local:format", "edge:units->format", "edge:tax->format")
    # every conclusion goes stale for some change, and each names the parts it executed
    assert set().union(*(DAG.stale(p) for p in DAG.parts)) == set(DAG.checks())
    for check in DAG.checks():
        assert {p for p in DAG.parts if check in DAG.stale(p)} == DAG.executes(check)


def test_a_graph_refuses_unknown_parts_and_backward_edges() -> None:
    with pytest.raises(ValueError, match="unknown part"):
        Dag(("a", "b"), (Edge("a", "c", "x", "t.py"),))
    with pytest.raises(ValueError, match="backwards"):
        Dag(("a", "b"), (Edge("b", "a", "x", "t.py"),))
    with pytest.raises(ValueError, match="no part 'z'"):
        DAG.stale("z")


def test_a_case_without_dag_json_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(CaseError, match="no dag.json"):
        load_merge_case(tmp_path)
    (tmp_path / "dag.json").write_text('{"name": "x"}')
    with pytest.raises(CaseError, match="field 'parts' is missing"):
        load_merge_case(tmp_path)


def test_the_refuter_repairs_only_a_refuted_edge_and_only_once() -> None:
    r = Refuter(CASE, dict(CASE.parts))
    assert r.repair_for("edge:units->discount") is not None
    assert r.repair_for("local:units") is None and r.repair_for("edge:tax->format") is None
    repaired = Refuter(CASE, {**CASE.parts, "units": CASE.repairs[0].variant})
    assert repaired.repair_for("edge:units->discount") is None


@pytest.fixture(scope="module")
def merged() -> tuple[dict, Ledger]:
    ledger = Ledger()
    return measure(CASE, MEASURED, ledger=ledger), ledger


def test_naive_merge_fails_integration_and_dependency_aware_passes_on_the_same_parts(
    merged,
) -> None:
    results, _ = merged
    naive, aware = results["naive"], results["dependency_aware"]
    assert all(r.held for r in naive.runs)  # every part passes its own local tests ...
    assert naive.integration == (0, 4) and not naive.integration_pass  # ... and the merge fails
    assert aware.integration == (4, 4) and aware.hidden == (40, 40)
    assert dict(aware.variants) == {
        "parse": "as generated",
        "units": "repaired",
        "discount": "as generated",
        "tax": "as generated",
        "format": "repaired",
    }


def test_without_the_recheck_a_stale_conclusion_slips_past_integration(merged) -> None:
    results, _ = merged
    only, aware = results["repair_only"], results["dependency_aware"]
    assert only.integration == (4, 4) and only.hidden == (0, 40) and only.stale_caught == 0
    assert aware.stale_caught == 1
    caught = [r for r in aware.runs if r.recheck and not r.held]
    assert [(r.check, r.repaired) for r in caught] == [("edge:units->format", "format")]
    # the re-checks are exactly what the graph made stale, less the edge the repair was kept on
    stage3 = [r.check for r in aware.runs if r.stage == 3]
    assert stage3 == [c for c in DAG.stale("units") if c != "edge:units->discount"]
    assert [r.check for r in aware.runs if r.stage == 4] == [
        c for c in DAG.stale("format") if c != "edge:units->format"
    ]


def test_critiques_are_kept_in_the_ledger(merged) -> None:
    results, ledger = merged
    events = [e for e in ledger.events("merge/dependency_aware") if e.kind == Kind.CRITIQUE]
    assert [(e.detail["check"], e.detail["part"], e.detail["kept"]) for e in events] == [
        ("edge:units->discount", "units", True),
        ("edge:units->format", "format", True),
    ]
    assert "smallest: [apple | 1 pcs | 0.45] gave net 45" in events[0].detail["counterexample"]
    assert [c.check for c in results["dependency_aware"].critiques] == [e.detail["check"] for e in events]
    # every validation the policy made was paid through its budget and recorded by the engine
    budget = [
        e for e in ledger.events("merge/dependency_aware") if e.role == Role.BUDGET and e.detail["status"] == "settled"
    ]
    assert sum(e.usage.cost_units for e in budget) == results["dependency_aware"].cost_units == 17
    verified = [
        e
        for r in ledger.runs()
        if r.startswith("merge/dependency_aware/stage-")
        for e in ledger.events(r)
        if e.kind == Kind.VERIFY and e.usage.cost_units
    ]
    assert len(verified) == 17  # 5 local + 5 edges + 1 repair, then 4 + 2 for the stale (one of them a repair)


def test_the_recording_is_what_labkit_measures_now(merged) -> None:
    results, _ = merged
    recorded = read_recorded()
    assert recorded["command"] == COMMAND and recorded["label"] == "scripted"
    for policy in MEASURED:
        now = json.loads(json.dumps(results[policy].as_dict()))
        assert_as_recorded(now, recorded["policies"][policy], recorded, f"the {policy} merge")
    assert (
        recorded["policies"]["recheck_all"]["recheck_cost"] > recorded["policies"]["dependency_aware"]["recheck_cost"]
    )
