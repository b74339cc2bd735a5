"""The one engine: strategies plug in, hidden tests never reach a prompt, rules fire in the loop,
accounting comes from the ledger whichever strategy ran. Real cases, real pytest runs."""

from __future__ import annotations

import json

import polars as pl
import pytest

from labkit.core.types import Candidate, Decision
from labkit.experiments import repair
from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, VerdictCache
from labkit.loop import engine
from labkit.loop.engine import accounting
from labkit.loop.engine.reflection import check_record
from labkit.loop.engine.stopping import NoNewEvidence
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.loop.strategies.rewrite import Rewrite
from labkit.models.replay import script
from labkit.record.ledger import Ledger

CASES = {c.id: c for c in repair.load_cases(ids=["slugify", "safe_div"])}
CACHE = load_case("cache_isolation")


@pytest.fixture(scope="module")
def checker() -> Checker:
    checker = Checker(cache=VerdictCache())
    repair.warm(checker, list(CASES.values()))
    return checker


class Recording:
    """Wraps a strategy and keeps every situation it was shown."""

    def __init__(self, inner) -> None:
        self.inner, self.seen = inner, []
        self.name, self.simulated = inner.name, inner.simulated

    def propose(self, situation: Situation) -> Proposal:
        self.seen.append(situation)
        return self.inner.propose(situation)


def test_hidden_tests_never_reach_a_strategy_or_a_prompt(checker: Checker) -> None:
    prompts: list[str] = []
    replies = {
        c.module: c.candidate("double_space" if c.id == "slugify" else "original").files[c.module]
        for c in CASES.values()
    }

    def reply(messages, params):
        prompts.extend(m["content"] for m in messages)
        module = next(m for m in replies if f"Module {m}" in messages[-1]["content"])
        return f"```python\n{replies[module]}```"

    strategy = Recording(repair.ModelRepairer(script(reply, name="hidden-probe")))
    result = repair.run(list(CASES.values()), strategy, rounds=2, checker=checker, rules=(), case_rules=())
    assert prompts and strategy.seen
    for case in CASES.values():
        hidden_text = case.hidden.tests["tests/test_hidden.py"]
        visible_text = case.visible.tests["tests/test_visible.py"]
        names = [n.split("::")[-1] for n in case.hidden.required if n.split("::")[-1] not in visible_text]
        assert names, case.id  # the hidden suite has tests the visible one lacks
        for text in prompts:
            assert hidden_text not in text and "test_hidden" not in text
            assert not any(n in text for n in names), (case.id, names)
    for s in strategy.seen:
        assert s.suite is not None and s.suite.name.endswith(":visible")
        assert s.verdict.evidence.suite == s.suite.digest
    # ...while the hidden scoring was recorded for every case and round.
    scored = result.events().filter(pl.col("kind") == "score")
    on = {json.loads(d)["scored_on"] for d in scored["detail"]}
    assert on == {"hidden"} and scored.height == 2 * 3
    # slugify's double_space patch passes the visible tests but fails a hidden one: the gap is measured.
    frame = result.correctness()
    both = result.correctness("visible").join(frame, on=["case", "round"], suffix="_hidden")
    assert both.filter((pl.col("case") == "slugify") & (pl.col("round") == 1))["correct"].to_list() == [True]
    assert both.filter((pl.col("case") == "slugify") & (pl.col("round") == 1))["correct_hidden"].to_list() == [False]


def test_resample_and_direct_strategies_see_no_feedback(checker: Checker) -> None:
    case = CASES["slugify"]
    fixed = case.candidate("fix").files[case.module]
    seen: list[str] = []

    def reply(messages, params):
        seen.append(messages[-1]["content"])
        return f"```python\n{fixed}```" if len(seen) > 1 else "```python\nbroken = True\n```"

    model = script(reply, name="resample")
    resampled = repair.run(
        [case], Rewrite(model=model, feedback=False), rounds=2, checker=checker, rules=(), case_rules=()
    )
    assert len(seen) == 2 and not any("These tests fail" in s for s in seen)
    assert resampled.final == {"slugify": "fix"} and resampled.per_round(resamples=0)["fixed"].to_list() == [0, 0, 1]
    seen.clear()
    direct = repair.run(
        [case],
        Rewrite(model=script(reply, name="direct"), feedback=False, once=True),
        rounds=3,
        checker=checker,
        rules=(),
        case_rules=(),
    )
    assert len(seen) == 1 and direct.final == {"slugify": "original"}  # one sample, no second chance
    idle = direct.events().filter(pl.col("kind") == "idle")
    assert idle["round"].to_list() == [2, 3]
    seen.clear()
    reflected = repair.run(
        [case],
        Rewrite(model=script(reply, name="reflect"), feedback=True),
        rounds=1,
        checker=checker,
        rules=(),
        case_rules=(),
    )
    assert "These tests fail" in seen[0] and reflected.final == {"slugify": "original"}


def test_no_new_evidence_fires_inside_the_loop_and_not_before(checker: Checker) -> None:
    case = CASES["slugify"]
    stuck = repair.SimulatedRepairer(fix=0.0, breaks=0.0)
    fired = repair.run([case], stuck, rounds=4, checker=checker, rules=[NoNewEvidence()], case_rules=())
    assert fired.rule_stop is not None and fired.rule_stop.rule == "no_new_evidence" and fired.rounds_run == 3
    stops = fired.events().filter(pl.col("kind") == "stop")
    assert stops["round"].to_list() == [3] and json.loads(stops["detail"][0])["rule"] == "no_new_evidence"
    short = repair.run([case], stuck, rounds=2, checker=checker, rules=[NoNewEvidence()], case_rules=())
    assert short.rule_stop is None and short.stop.rule == "round-cap"


class Arms:
    """Proposes every named patch of the cache case at once (several children in one round)."""

    name, simulated = "arms", True

    def propose(self, situation: Situation) -> Proposal:
        iso = list(CACHE.suite.groups["isolation"])
        record = check_record(
            {
                "phenomenon": "B gets A's price",
                "evidence_ref": iso[0],
                "environment": CACHE.environment,
                "hypothesis": {"cause": "cache key lacks the user", "refuted_if": "B still gets A's price"},
                "action": "try each",
                "expected": {"acceptance": iso, "protective": list(CACHE.suite.groups["same-user hit"])},
            }
        )
        kids = tuple(Child(patch=CACHE.patch(n), name=n) for n in ("disable_cache", "five_changes", "composite_key"))
        return Proposal(children=kids, record=record)


def test_a_strategy_may_propose_several_children_and_the_engine_decides_each() -> None:
    ledger = Ledger()
    task = Task(id="cache", start=CACHE.start, suite=CACHE.suite, patch_cap=dict(CACHE.patch_cap))
    out = engine.run([task], Arms(), Validator(), ledger=ledger, run_id="arms")
    trace = out.traces["cache"]
    (rnd,) = trace.rounds
    assert [a.decision.decision for a in rnd.attempts] == [Decision.ROLL_BACK, Decision.ROLL_BACK, Decision.KEEP]
    assert [a.decision.rule for a in rnd.attempts] == ["protective", "patch-size", "resolved"]
    assert (
        rnd.decision.decision is Decision.KEEP
        and trace.final_verdict.resolved
        and out.final == {"cache": "composite_key"}
    )
    frame = ledger.frame("arms")
    assert frame.filter((pl.col("kind") == "verify") & (pl.col("round") == 1)).height == 3
    decide = json.loads(frame.filter(pl.col("kind") == "decide")["detail"][0])
    assert [c["name"] for c in decide["children"]] == ["disable_cache", "five_changes", "composite_key"]
    # Accounting comes from the same ledger events whichever strategy ran (visible scoring here).
    table = accounting.per_round(accounting.from_ledger(frame), resamples=0)
    assert table["correct"].to_list() == [0, 1] and table["fixed"].to_list() == [0, 1]


def test_the_verdict_cache_key_names_validator_python_and_pytest(monkeypatch) -> None:
    import platform

    import pytest as pt

    from labkit.grading import verdicts

    v = Validator()
    c, s = CACHE.start, CACHE.suite
    assert verdicts.runtime(v.python) == f"{platform.python_version()}/{pt.__version__}"
    key = VerdictCache.key(c, s, v)
    assert key.startswith(f"{c.digest}:{s.digest}:{v.id}:")
    monkeypatch.setattr(verdicts, "runtime", lambda python: "3.99.0/9.9")
    assert VerdictCache.key(c, s, v) != key  # another pytest or Python: another verdict
    other = Validator(limits=type(v.limits)(wall_seconds=v.limits.wall_seconds + 1))
    assert VerdictCache.key(c, s, other).split(":")[2] != v.id


def test_a_target_candidate_equal_to_the_held_one_is_not_validated() -> None:
    class Same:
        name, simulated = "same", True

        def propose(self, situation: Situation) -> Proposal:
            return Proposal(children=(Child(target=Candidate(dict(situation.candidate.files))),))

    ledger = Ledger()
    out = engine.run(
        [Task(id="c", start=CACHE.start, suite=CACHE.suite)],
        Same(),
        Validator(),
        rounds=1,
        ledger=ledger,
        run_id="same",
    )
    (rnd,) = out.traces["c"].rounds
    assert rnd.decision.rule == "no-change" and ledger.frame("same").filter(pl.col("kind") == "verify").height == 1


def test_an_interrupted_suite_resumes_to_the_same_accounting(checker: Checker) -> None:
    from labkit.core.errors import RunInterrupted

    cases = list(CASES.values())
    rep = repair.SimulatedRepairer(fix=1.0, breaks=1.0, break_growth=1.0, seed=1)

    class DiesInRound2:
        name, simulated = "dies", True

        def __init__(self) -> None:
            self.inner = rep.bind(cases)

        def propose(self, situation: Situation) -> Proposal:
            if situation.round == 2 and situation.case == "safe_div":
                raise RuntimeError("repairer process died")
            return self.inner.propose(situation)

    ledger = Ledger()
    with pytest.raises(RunInterrupted):
        repair.run(cases, DiesInRound2(), rounds=3, checker=checker, ledger=ledger, run_id="s", rules=())
    resumed = repair.run(cases, rep, rounds=3, checker=checker, ledger=ledger, run_id="s", rules=(), resume=True)
    straight = repair.run(cases, rep, rounds=3, checker=checker, run_id="t", rules=())
    cols = ["case", "round", "correct"]
    assert resumed.correctness().select(cols).equals(straight.correctness().select(cols))
    assert resumed.final == straight.final and resumed.rounds_run == 3
    kinds = resumed.events()["kind"].to_list()
    assert kinds.count("resume") == 2 and kinds.count("start") == 1


def test_every_engine_event_kind_and_detail_is_declared() -> None:
    from labkit.record.events import Kind
    from labkit.record.vocabulary import shape, undeclared

    ledger = Ledger()
    engine.run(
        [Task(id="c", start=CACHE.start, suite=CACHE.suite, patch_cap=dict(CACHE.patch_cap))],
        Arms(),
        Validator(),
        ledger=ledger,
        run_id="vocab",
    )
    events = ledger.events("vocab")
    assert {e.kind for e in events} >= {"start", "define", "generate", "verify", "score", "reflect", "decide", "stop"}
    for e in events:
        assert shape(e.role, e.kind) is not None and undeclared(e.role, e.kind, e.detail) == [], (e.kind, e.detail)
    from labkit.core.errors import LedgerError
    from labkit.loop.engine.steps import Recorder

    rec = Recorder(run_id="x", ledger=ledger, checker=Checker(), budget=None, validation_cost=0.0, simulated=True)
    with pytest.raises(LedgerError, match="declare no detail field"):
        rec.log(None, 0, "decision", Kind.DECIDE, detail={"verdict_of_the_hidden_tests": True})
    assert ledger.events("x") == []


def test_a_stored_verdict_round_trips_with_its_containment(tmp_path) -> None:
    from labkit.core.types import Evidence, TestResult, Verdict
    from labkit.grading.verdicts import verdict_from_json, verdict_json

    e = Evidence(
        candidate="c",
        suite="s",
        validator="v",
        results=(TestResult("t::a", "failed", "boom", 0.1),),
        exit_code=1,
        wall_seconds=0.2,
        alarms=("x",),
        stderr_tail="tail",
        timed_out=False,
        isolation="isolated (bubblewrap)",
    )
    v = Verdict(e, (), ("t::a",), (), ())
    assert verdict_from_json(json.loads(json.dumps(verdict_json(v)))) == v
    cache = VerdictCache(tmp_path / "v.json")
    clean = Verdict(
        Evidence(
            candidate="c",
            suite="s",
            validator="v",
            results=(TestResult("t::a", "passed"),),
            exit_code=0,
            wall_seconds=0.2,
            alarms=(),
            stderr_tail="",
            timed_out=False,
            isolation="process",
        ),
        ("t::a",),
        (),
        (),
        (),
    )
    cache.put("k", clean)
    cache.put("q", v)  # an alarmed verdict is never cached
    cache.save()
    again = VerdictCache(tmp_path / "v.json")
    assert len(again) == 1 and again.get("k") == clean and again.get("k").evidence.isolation == "process"
