"""Worked example D (issue 24): the plan -> develop -> QA harness on the shop project.

One short real run (three iterations, three items each: about 20 s of sandboxed validations) is
shared by the tests below; it also re-measures a slice of the committed recording exactly."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import DigestMismatch
from labkit.experiments.long_projects import study
from labkit.experiments.long_projects.items import WorkItems
from labkit.experiments.long_projects.iterations import run_project
from labkit.experiments.long_projects.project import load_project
from labkit.experiments.long_projects.roles import Snapshots, role_view
from labkit.record.events import Kind, Role


@pytest.fixture(scope="module")
def shop():
    return load_project("shop")


@pytest.fixture(scope="module")
def recording():
    from labkit.views import long_projects as page

    return page.load()


@pytest.fixture(scope="module")
def short_run(shop):
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker, VerdictCache
    from labkit.record.ledger import Ledger

    ledger = Ledger()
    run = run_project(
        shop,
        Checker(Validator(), VerdictCache()),
        ledger,
        policy=study.POLICIES[1],
        qa=study.QA_SOURCES[0],
        seed=0,
        iterations=3,
        run_id="short",
    )
    return run, ledger


def test_a_reopened_item_is_counted_once_as_reopened_never_as_new():
    items = WorkItems()
    assert items.file("R3", "discount", "dev", ("t::a",), 1, "planner") == "added"
    assert items.file("R3", "discount", "qa", ("q::b",), 1, "qa") == ""  # already open: evidence only
    assert items.close("R3", 2, "planner")
    assert items.file("R3", "discount", "qa", ("q::b",), 3, "qa") == "reopened"
    assert items.file("R3", "discount", "qa", ("q::b",), 3, "qa") == ""
    assert (items.tally(1).added, items.tally(2).closed) == (1, 1)
    t = items.tally(3)
    assert (t.added, t.reopened, t.open) == (0, 1, 1)
    assert [c.kind for c in items.changes] == ["added", "closed", "reopened"]


def _hidden_fragments(shop) -> list[str]:
    text = shop.hidden.text("hidden/test_hidden.py")
    names = [n.split("::")[-1] for n in shop.hidden.required]
    body = [line.strip() for line in text.splitlines() if line.strip().startswith("assert")]
    return [*names, *body, shop.hidden.digest, "hidden/test_hidden.py"]


def test_no_hidden_name_text_or_result_reaches_any_role(shop, short_run):
    run, ledger = short_run
    fragments = _hidden_fragments(shop)
    seen = list(run.role_inputs)
    for e in role_view(ledger, run.run_id):  # the ledger rows a role may read, blobs included
        seen += [e.evidence, json.dumps(dict(e.detail))]
        seen += [ledger.get(h) for h in (e.input_hash, e.output_hash) if h]
    assert len(run.role_inputs) >= 3 * 3  # planner, developer and QA were each handed something
    leaks = [(f, s[:80]) for s in seen for f in fragments if f in s]
    assert not leaks
    # the control: the hidden results are in the ledger, in the scorer's events only
    scores = [e for e in ledger.events(run.run_id) if e.kind == Kind.SCORE]
    assert scores and all(e.role == Role.SCORER for e in scores)
    assert any(n.split("::")[-1] in e.evidence for e in scores for n in shop.hidden.required)


def test_qa_checks_the_frozen_snapshot_by_digest(short_run):
    run, ledger = short_run
    events = ledger.events(run.run_id)
    qa = [e for e in events if e.kind == Kind.QA and e.detail.get("snapshot")]
    assert [e.detail["snapshot"] for e in qa] == [it.snapshot for it in run.iterations]
    for e in qa:  # QA's validation (the iteration's engine step "qa") ran on exactly the snapshot's bytes
        step = f"shop/it{e.round}/qa"
        ran = [v for v in events if v.kind == Kind.VERIFY and v.role == Role.VALIDATOR and v.detail.get("case") == step]
        assert [v.detail["candidate"] for v in ran] == [e.detail["snapshot"]]


def test_a_frozen_candidate_cannot_change_under_its_digest(shop):
    snaps = Snapshots()
    digest = snaps.freeze(shop.start)
    assert snaps.get(digest) is shop.start
    with pytest.raises(TypeError):
        shop.start.files["shop/parse.py"] = "x = 1"  # type: ignore[index]
    snaps._held[digest] = replace(shop.start, files={**shop.start.files, "shop/parse.py": "x = 1\n"})
    with pytest.raises(DigestMismatch):
        snaps.get(digest)


def test_qa_of_one_digest_revalidates_the_same_bytes(shop, short_run):
    from labkit.grading.validator import Validator

    run, _ = short_run
    snap = run.iterations[-1].snapshot
    suite = shop.qa_suite(run.qa_checks)
    v = Validator()
    candidate = _rebuild(shop, run)
    assert candidate.digest == snap
    a, b = v.run(candidate, suite), v.run(candidate, suite)
    assert a.evidence.candidate == b.evidence.candidate == snap
    assert a.fail_to_fail == b.fail_to_fail == run.iterations[-1].qa_failing


def _rebuild(shop, run):
    """The held candidate after the run, rebuilt from the recorded variants (kept changes only)."""
    files = dict(shop.start.files)
    for it in run.iterations:
        if it.decision == "keep":
            for rid, label in it.variants:
                files.update(shop.variants[rid][label])
    return shop.start.with_files(files)


def test_the_recording_reproduces_exactly(short_run, recording):
    run, _ = short_run
    now = study.run_row(run)
    recorded = next(r for r in recording["runs"] if r["run_id"] == "3x-independent-0")
    assert_as_recorded(now["qa_checks"], recorded["qa_checks"], recording, "QA's checks (seed 0)")
    assert_as_recorded(
        now["iterations"],
        recorded["iterations"][:3],
        recording,
        "iterations 1-3 (three items, seed 0)",
    )
    assert_as_recorded(now["hidden"], recorded["hidden"][:4], recording, "the hidden scores, start to iteration 3")


def test_matched_iterations_and_matched_cost_rank_the_policies_differently(recording):
    # from the committed recording (python -m labkit.experiments.long_projects record); the
    # slice re-measured above reproduces it exactly
    s = study.summary(recording)
    one, three = study.POLICIES[0].name, study.POLICIES[1].name
    by_it = {r["amount"]: r for r in s["at_iterations"]}
    by_cost = {r["amount"]: r for r in s["at_cost_units"]}
    assert by_it[2]["scores"] == [0.197, 0.2879] and by_it[2]["ahead"] == three
    assert by_it[10]["scores"] == [0.7121, 0.7576] and by_it[10]["ahead"] == three
    assert by_cost[20.0]["scores"] == [0.197, 0.1364] and by_cost[20.0]["ahead"] == one
    assert by_cost[60.0]["scores"] == [0.6667, 0.5303] and by_cost[60.0]["ahead"] == one
    assert s["first_flip"] == [[2, three], [20.0, one]]
    assert [r["ahead"] for r in s["at_tokens"]] == [one] * 4 and [r["ahead"] for r in s["at_calls"]] == [one] * 5
    # matched iterations are not matched calls: per iteration the batch makes more calls
    for seed in recording["seeds"]:
        a = study.runs_of(recording, one, "independent")[seed]["iterations"][1]
        b = study.runs_of(recording, three, "independent")[seed]["iterations"][1]
        assert b["calls"] > a["calls"] and b["tokens"] > a["tokens"]


def test_same_source_qa_misses_what_independent_qa_catches(recording):
    rows = {(r["QA source"], r["correlation with the developer"]): r for r in study.qa_table(recording)}
    assert list(rows) == [
        ("independent", None),
        ("same-source", 0.0),
        ("same-source", 0.5),
        ("same-source", 0.9),
    ]

    def col(name):  # noqa: ANN001, ANN202
        return [r[name] for r in rows.values()]

    assert col("QA checks written (mean)") == [10.0, 10.0, 6.5, 3.67]
    assert col("missed by QA's last review (total)") == [6, 6, 16, 29]
    assert col("bugs shipped (hidden, total)") == [15, 15, 23, 30]
    assert col("items reopened (total)") == [7, 7, 10, 1]
    assert col("final hidden score (mean)") == [0.7121, 0.7121, 0.6061, 0.5]
    # correlation 0 draws the same luck as the independent QA: the same runs, bug for bug
    same0 = study.runs_of(recording, study.POLICIES[0].name, "same-source, correlation 0")
    ind = study.runs_of(recording, study.POLICIES[0].name, "independent")
    assert [r["iterations"] for r in same0] == [r["iterations"] for r in ind]


def test_progress_counts_follow_the_items(recording):
    for run in recording["runs"]:
        opened = 0
        for it in run["iterations"]:
            opened += it["added"] + it["reopened"] - it["closed"]
            assert it["open"] == opened == sum(1 for i in it["items"] if i["open"])


def test_a_model_developer_by_name_goes_through_the_same_engine(shop):
    # a stand-in for a real model, injected where the gateway would be called: it writes the
    # requirement's good module; everything else (payment, ledger, validation) is the harness's
    from labkit.core.types import Reply, Usage
    from labkit.experiments.long_projects.model_developer import ModelDeveloper
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker, VerdictCache
    from labkit.record.ledger import Ledger

    asked: list[str] = []

    def fake(model, messages, **kwargs):  # noqa: ANN001, ANN003, ANN202
        text = messages[-1]["content"]
        asked.append(text)
        rid = text.split(":", 1)[0].removeprefix("Requirement ")
        path = text.split("The module ", 1)[1].split(" now:", 1)[0]
        return Reply(
            text=f"```python\n{shop.variants[rid]['good'][path]}```", model=model, usage=Usage(700, 1, 0.0, 0.0)
        )

    ledger = Ledger()
    dev = ModelDeveloper(model="stand-in/model", project=shop, complete=fake)
    run = run_project(
        shop,
        Checker(Validator(), VerdictCache()),
        ledger,
        policy=study.POLICIES[1],
        qa=study.QA_SOURCES[0],
        iterations=1,
        run_id="model",
        strategy=dev,
    )
    (it,) = run.iterations
    assert it.variants == (("R2", "model"), ("R3", "model"), ("R4", "model")) and it.decision == "keep"
    assert len(asked) == 3 and not [f for f in _hidden_fragments(shop) for a in asked if f in a]
    (reflect,) = [e for e in ledger.events("model") if e.kind == Kind.REFLECT and e.role == Role.REFLECTOR]
    # the replies' usage, paid by the engine's step 3; calls: QA writing its checks, the planner,
    # the developer's three, QA's review
    assert (reflect.calls, reflect.tokens) == (3, 2100)
    assert it.usage.calls == 1 + 1 + 3 + 1


def test_each_iteration_develops_through_the_engine(short_run):
    # the develop step is one engine round (case shop/it<i>/develop): the engine validates the held
    # candidate, records the developer's proposal, re-tests the change and decides it, and that
    # decision is the iteration's; the status check of the held candidate is an engine step too
    run, ledger = short_run
    events = ledger.events(run.run_id)
    for it in run.iterations:
        step = [e for e in events if e.detail.get("case") == f"shop/it{it.index}/develop"]
        kinds = [e.kind for e in step if e.role != Role.BUDGET]
        assert kinds[0] == Kind.DEFINE and Kind.REFLECT in kinds and kinds[-1] == Kind.STOP
        (decide,) = [e for e in step if e.kind == Kind.DECIDE]
        assert (decide.detail["decision"], decide.detail["reason"]) == (it.decision, it.reason)
        retest = [e for e in step if e.kind == Kind.VERIFY and e.detail["retest"]]
        assert len(retest) == 1 and retest[0].detail["why"].startswith("proposal")
        status = [e for e in events if e.kind == Kind.VERIFY and e.detail.get("case") == f"shop/it{it.index}/status"]
        assert [e.detail["candidate"] for e in status] == [it.snapshot]
