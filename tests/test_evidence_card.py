"""The evidence card is derived from the ledger; a claim the ledger contradicts fails the check."""

from __future__ import annotations

from labkit.core.types import Candidate
from labkit.experiments import evidence_card as ec
from labkit.experiments.lessons import plan_state as ps
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.engine import Task, run
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger
from labkit.views.arms_page import real_ledgers
from labkit.views.evidence_card_table import card_frame


def _run(hidden: AcceptanceSuite, run_id: str, led: Ledger, checker: Checker) -> ec.Card:
    start = Candidate(ps.state("v0", "1.0", "v0").files, label="start")
    task = Task(id=run_id, start=start, suite=ps.SUITE, hidden=hidden)
    run([task], ps.Routes((ps.ROUTE_A,)), checker, rounds=1, ledger=led, run_id=run_id)
    return ec.derive(led, [run_id])


def test_a_run_that_leaks_its_sealed_suite_into_a_prompt_contradicts_the_isolation_claim() -> None:
    led, checker = Ledger(), Checker(Validator())
    extra = {
        "tests/test_sealed.py": "from shipping import fee\n\n\ndef test_free_above_50():\n    assert fee(80) == 0.0\n"
    }
    sealed = AcceptanceSuite(
        name="sealed final set",
        tests={**ps.SUITE.tests, **extra},
        fail_to_pass=ps.SUITE.fail_to_pass,
        pass_to_pass=(*ps.SUITE.pass_to_pass, "tests/test_sealed.py::test_free_above_50"),
        import_roots=("site",),
    )
    assert sealed.digest != ps.SUITE.digest
    honest = _run(sealed, "honest", led, checker)
    assert honest.facts.sealed_suites == (sealed.digest,) and honest.facts.prompted_suites == (ps.SUITE.digest,)
    assert "evaluation isolation" not in ec.check(honest)
    assert honest.fields["evaluation isolation"].endswith("no sealed suite reached a prompt")
    # the "sealed" suite is the one the reflector is shown: its verdicts reach the prompt
    leaky = _run(ps.SUITE, "leaky", led, checker)
    assert leaky.facts.leaked == (ps.SUITE.digest,)
    assert "reached the repair context" in ec.check(leaky)["evaluation isolation"]
    assert "test leakage" in leaky.fields["failure modes"]
    frame = card_frame(leaky)
    assert frame.height == 9 and frame["claim"][4].startswith("contradicted")
    assert ec.verdicts(honest)["evaluation isolation"] == "holds"
    assert ec.verdicts(honest)["rollback granularity"] == "nothing to check in this run"  # no checkpoint


def test_rollback_granularity_reads_the_checkpoints_actually_recorded() -> None:
    led = Ledger()
    c0 = ps.checkpoint("C0", ps.state("v0", "1.0", "v0"), led, "cp")
    card = ec.derive(led, ["cp"])
    assert "checkpoint recorded ×1" in card.fields["rollback granularity"]
    assert "rollback granularity" not in ec.check(card)
    led.record(
        "cp",
        0,
        str(Role.CONTROL),
        str(Kind.CHECKPOINT),
        detail={"code_version": c0.parts["code version"]},
    )
    card = ec.derive(led, ["cp"])
    assert "checkpoint recorded ×2" in card.fields["rollback granularity"]
    assert ec.check(card)["rollback granularity"] == "1 checkpoint(s) recorded no dependency image or environment"


def test_gate_criteria_are_contradicted_only_by_the_runs_kept_without_a_gate() -> None:
    ledger, _ = real_ledgers()["repair"]
    by_arm = {r.split("/")[3]: r for r in ledger.runs()}
    assert "gate criteria" in ec.check(ec.derive(ledger, [by_arm["self_refine"]]))  # Self-Refine keeps by itself
    direct = ec.derive(ledger, [by_arm["direct"]])
    assert direct.facts.keep_modes == ("progress",) and ec.check(direct) == {}
    assert set(direct.fields) == set(ec.FIELDS)


def test_the_reflection_page_card_reads_the_recorded_real_run_and_flags_the_ungated_arm() -> None:
    from labkit.views.evidence_card_table import recorded_real_card

    html = recorded_real_card("repair")
    assert html.count("<tr") == 10  # a header and the nine fields
    assert "contradicted: children were kept without a visible gate" in html
    assert "no sealed suite reached a prompt" in html
