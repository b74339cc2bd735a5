"""The selector cascade (seed 002 §2): hard checks gate, the reviewer is blinded, the rule comes first."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import SelectionError
from labkit.experiments.judging import cascade as cc
from labkit.grading.cases import load_case
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger


@dataclass
class Seeing:
    """The scripted reviewer, remembering every diff it was shown."""

    inner: cc.ScriptedReviewer = field(default_factory=cc.ScriptedReviewer)
    seen: list[str] = field(default_factory=list)
    simulated: bool = True

    @property
    def name(self) -> str:
        return self.inner.name

    def score(self, diff: str, slot: int) -> Mapping[str, float]:
        self.seen.append(diff)
        return self.inner.score(diff, slot)


@pytest.fixture(scope="module")
def run() -> tuple[cc.CascadeResult, str, Seeing, Ledger]:
    ledger, reviewer = Ledger(), Seeing()
    result, ungated = cc.measure(ledger, "t", reviewer)
    return result, ungated, reviewer, ledger


def test_the_run_reproduces_its_recording_exactly(
    run: tuple[cc.CascadeResult, str, Seeing, Ledger],
) -> None:
    result, ungated, _, _ = run
    record = cc.recorded()
    assert_as_recorded(cc.as_json(result, ungated), record, record, "the selector cascade's run")
    assert result.winner == "composite key, bounded" and result.decided_by == "owner"
    failed = {t.name: t.failed for t in result.tiers}
    assert failed == {
        "composite key": "",
        "disable the cache": "tests",
        "five changes at once": "constraints",
        "composite key, bounded": "",
        "composite key, unbalanced paren": "compile",
    }
    assert result.cost_units == 4.0  # four validations paid; the uncompilable one never reached the validator


def test_a_reviewer_score_never_brings_back_a_failed_hard_check(
    run: tuple[cc.CascadeResult, str, Seeing, Ledger],
) -> None:
    result, ungated, reviewer, _ = run
    case = load_case("cache_isolation")
    diffs = {e.name: e.patch.diff for e in cc.load_entries(case)}
    survivors = {t.name for t in result.tiers if not t.failed}
    cascade_saw = reviewer.seen[: 2 * len(survivors)]  # both orders; the ungated counterfactual came after
    assert set(cascade_saw) == {diffs[n] for n in survivors}  # it never saw a hard failure
    # Without the gate the reviewer (verbosity) and owner (bounded memory) would pick the
    # five-change patch that failed the size constraint: the gate is what keeps it out.
    assert ungated == "five changes at once" != result.winner
    with pytest.raises(SelectionError, match="failed the hard check"):
        cc._winner([next(t for t in result.tiers if t.failed)])


def test_order_flips_are_kept_as_disagreements_and_go_to_the_owner(
    run: tuple[cc.CascadeResult, str, Seeing, Ledger],
) -> None:
    result, _, _, ledger = run
    assert result.disagreements == ("composite key vs composite key, bounded",)
    both = {t.name: t.reviewer for t in result.tiers if t.reviewer}
    a, b = both["composite key"], both["composite key, bounded"]
    assert (a[0] > b[0]) != (a[1] > b[1])  # the verdict flips with the order shown
    owner = [e.detail for e in ledger.events("t") if e.kind == Kind.SELECT and e.detail.get("tier") == "owner"]
    assert [d["name"] for d in owner if d["passed"]] == ["composite key, bounded"]
    no_bias = cc.ScriptedReviewer(position=0.0)
    entries = cc.load_entries(load_case("cache_isolation"))
    rows = [(cc.Tiered(name=e.name, candidate="", failed="", reason="", lines=0, claims=()), e) for e in entries]
    assert cc._review(no_bias, cc.SelectionRule(), rows)[1] == []  # no position bias, nothing flips


def test_the_rule_is_the_first_event_and_cannot_change_after(
    run: tuple[cc.CascadeResult, str, Seeing, Ledger],
) -> None:
    _, _, _, ledger = run
    events = ledger.events("t")
    assert events[0].kind == Kind.SELECT and events[0].detail["tier"] == "rule"
    assert json.loads(events[0].detail["reason"]) == json.loads(json.dumps(cc.SelectionRule().__dict__))
    case = load_case("cache_isolation")
    entries = cc.load_entries(case)
    late = Ledger()
    late.record("r", 0, Role.EXECUTOR, Kind.GENERATE, detail={"candidate": "x"})
    with pytest.raises(SelectionError, match="before any candidate"):
        cc.register(cc.SelectionRule(), late, "r")
    fresh = Ledger()
    reg = cc.register(cc.SelectionRule(), fresh, "r")
    with pytest.raises(SelectionError, match="not the one registered"):
        cc.run_cascade(entries, case, cc.SelectionRule(owner=("smallest_change",)), reg, fresh)


def test_the_hard_checks_are_one_engine_run_with_a_frontier(
    run: tuple[cc.CascadeResult, str, Seeing, Ledger],
) -> None:
    # the hard tier runs on engine.run (run id "<run>/hard"): the start expanded once, each
    # compiling entry a child validated and decided by the engine; the uncompilable one never
    # reaches the validator, and only the four children's validations are paid
    result, _, _, ledger = run
    events = ledger.events("t/hard")
    start = next(e for e in events if e.kind == Kind.START)
    assert start.detail["expand"] == "breadth" and start.detail["keep"] == "resolved"
    checked = [
        e.detail["candidate"]
        for e in events
        if e.kind == Kind.VERIFY and e.role == Role.VALIDATOR and e.detail["retest"]
    ]
    assert checked == [t.candidate for t in result.tiers if t.failed != "compile"]
    (decide,) = [e for e in events if e.kind == Kind.DECIDE]
    kept = {c["name"] for c in decide.detail["children"] if c["decision"] == "keep"}
    assert kept == {t.name for t in result.tiers if not t.failed}
    assert not [
        e for e in ledger.events("t") if e.kind in (Kind.GENERATE, Kind.VERIFY)
    ]  # the rule's run: selection only


def test_reading_the_recording_imports_no_engine() -> None:
    # judge_bias shows the cascade from its recording on open: the engine, the cases and the
    # grader load only when a cascade runs (they were ~0.3 s of that notebook's imports)
    import subprocess
    import sys

    code = (
        "import sys; from labkit.views import cascade_page; cascade_page.summary_md(); "
        "print(sorted(m for m in ('labkit.loop.engine', 'labkit.grading.cases', 'labkit.grading.verdicts') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["[]"], out.stdout
