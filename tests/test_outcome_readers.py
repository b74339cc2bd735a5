"""A run's outcome is read through the run's own accessors, never re-read by hand (issue 26).

The engine records one SCORE (who was right after the round) and one DECIDE (what was kept)
per case per round. `labkit.record.outcomes` is the one reader of those events' detail, and
`EngineRun.scores()` / `EngineRun.decisions()` call it for a run in hand. The scan below fails
when a module anywhere else in labkit compares an event's kind with SCORE or DECIDE (or with
"score" / "decide"), or names those kinds in any way other than writing them. Allowed: the
engine (labkit/loop/engine, which writes them and reads its own for resume and accounting),
the reader itself, and the two modules that declare the kinds and their detail shapes.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.core.types import Candidate, Evidence, TestResult, Verdict
from labkit.grading.acceptance import AcceptanceSuite
from labkit.loop import engine
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.engine.trace import Task
from labkit.record import outcomes
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

LABKIT = Path(__file__).resolve().parents[1] / "labkit"
RECORD = LABKIT / "record"
ALLOWED = (RECORD / "outcomes.py", RECORD / "events.py", RECORD / "vocabulary.py", LABKIT / "loop" / "engine")
OUTCOME_KINDS = {"SCORE", "DECIDE"}
OUTCOME_VALUES = {"score", "decide"}
WRITERS = {"log", "record"}  # rec.log(task, r, Role.DECISION, Kind.DECIDE, ...), ledger.record(...)
# Readers in modules another helper owns this session (s33-loops); each must still read by hand
# (test_every_exemption_is_still_needed), so an entry goes as soon as its module is moved over.
KNOWN = {
    "experiments/judging/cascade.py": "the first candidate event of a run: GENERATE, VERIFY or SCORE",
    "experiments/arms/jobs.py": "a job's validation seconds: VERIFY and SCORE events' wall time",
    "loop/search/readback.py": "replays the engine's whole event stream in order (every kind) to rebuild a search's "
    "steps, as resume does; a decision is one step among the others there",
    "experiments/long_projects/roles.py": "a role's view leaves out the scorer's SCORE events",
}


def reads_by_hand(source: str) -> list[int]:
    """Lines that name Kind.SCORE / Kind.DECIDE other than as an argument of a writer's call, or
    compare anything with the strings "score" / "decide"."""
    tree = ast.parse(source)
    written = {
        id(arg)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in WRITERS
        for arg in (*call.args, *(k.value for k in call.keywords))
    }
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in OUTCOME_KINDS
            and isinstance(node.value, ast.Name)
            and node.value.id == "Kind"
            and id(node) not in written
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(n, ast.Constant) and n.value in OUTCOME_VALUES for o in operands for n in ast.walk(o)):
                lines.append(node.lineno)
    return sorted(set(lines))


@pytest.fixture(scope="module")
def scan() -> dict[str, list[int]]:
    found = {}
    for path in sorted(LABKIT.rglob("*.py")):
        if any(path.is_relative_to(a) for a in ALLOWED):
            continue
        lines = reads_by_hand(path.read_text(encoding="utf-8"))
        if lines:
            found[path.relative_to(LABKIT).as_posix()] = lines
    return found


def test_no_module_reads_scores_or_decisions_by_hand(scan: dict[str, list[int]]) -> None:
    bad = {p: lines for p, lines in scan.items() if p not in KNOWN}
    assert not bad, f"read SCORE/DECIDE through EngineRun.scores()/decisions() or labkit.record.outcomes: {bad}"


def test_every_exemption_is_still_needed(scan: dict[str, list[int]]) -> None:
    stale = sorted(set(KNOWN) - set(scan))
    assert not stale, f"no longer read by hand, drop from KNOWN: {stale}"


def test_the_scan_finds_reads_and_not_writes() -> None:
    assert reads_by_hand("x = [e for e in ev if e.kind == Kind.SCORE][-1]\n") == [1]
    assert reads_by_hand("n = sum(e.kind in (Kind.VERIFY, Kind.DECIDE) for e in ev)\n") == [1]
    assert reads_by_hand("K = {str(Kind.SCORE)}\n") == [1]
    assert reads_by_hand("n = sum(1 for e in ev if e['kind'] in ('verify', 'score'))\n") == [1]
    assert reads_by_hand("f = frame.filter(pl.col('kind') == 'decide')\n") == [1]
    assert reads_by_hand("rec.log(task, r, Role.DECISION, Kind.DECIDE, detail={})\n") == []
    assert reads_by_hand("ledger.record(rid, 0, 'scorer', kind=Kind.SCORE)\n") == []
    assert reads_by_hand("x = outcomes.scores(ledger.events(rid))\n") == []


# -- the accessors, on a scripted run -----------------------------------------------------------

VISIBLE = AcceptanceSuite(name="outcome:visible", tests={"t.py": "a = 0\n"}, fail_to_pass=("t.py::a",), pass_to_pass=())
HIDDEN = AcceptanceSuite(
    name="outcome:hidden", tests={"t_hidden.py": "h = 0\n"}, fail_to_pass=("t_hidden.py::h",), pass_to_pass=()
)
PASSES = {"visible": {"fix", "tempt"}, "hidden": {"fix"}}  # "tempt" fools the visible test only
PROPOSES = {"a": "fix", "b": "tempt"}


def state(name: str) -> Candidate:
    return Candidate({"m.py": name}, label=name)


@dataclass
class Scripted:
    """Each state's verdict from the table above (simulated: no pytest runs)."""

    id: str = "scripted-outcomes"
    python: str = sys.executable
    limits: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(wall_seconds=1.0))

    def run(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        test = suite.fail_to_pass[0]
        ok = str(candidate.files["m.py"]) in PASSES["hidden" if suite is HIDDEN else "visible"]
        result = TestResult(test, "passed" if ok else "failed")
        ev = Evidence(
            candidate=candidate.digest,
            suite=suite.digest,
            validator=self.id,
            results=(result,),
            exit_code=0 if ok else 1,
            wall_seconds=0.0,
        )
        return Verdict(ev, (test,) if ok else (), () if ok else (test,), (), ())


class Propose:
    name = "scripted: one named child per case"
    simulated = True

    def propose(self, situation: Situation) -> Proposal:
        named = PROPOSES[situation.case]
        return Proposal(children=(Child(target=state(named), name=named, source="fix"),), note=named)


def test_the_run_reads_its_own_scores_and_decisions() -> None:
    tasks = [Task(id=case, start=state("start"), suite=VISIBLE, hidden=HIDDEN) for case in PROPOSES]
    ledger = Ledger()
    out = engine.run(tasks, Propose(), Scripted(), rounds=1, ledger=ledger, run_id="outcomes")
    # a budget charge recorded under the scorer's kind is not a score
    ledger.record("outcomes", 1, Role.BUDGET, Kind.SCORE, detail={"status": "settled"})

    got = {(s.case, s.round): (s.correct, s.visible, s.state, s.scored_on) for s in out.scores()}
    assert got == {
        ("a", 0): (False, False, "start", "hidden"),
        ("b", 0): (False, False, "start", "hidden"),
        ("a", 1): (True, True, "fix", "hidden"),
        ("b", 1): (False, True, "tempt", "hidden"),  # kept on the visible test, wrong on the hidden one
    }
    frame = out.correctness()
    assert {(r["case"], r["round"]): r["correct"] for r in frame.iter_rows(named=True)} == {
        k: v[0] for k, v in got.items()
    }
    assert [s.round for s in out.scores("b")] == [0, 1]
    assert out.scores("b")[-1].candidate == state("tempt").digest
    assert out.scores("b")[0].failing == ("t_hidden.py::h",) and out.scores("b")[0].scored_suite == HIDDEN.digest
    assert out.scores("a")[-1].failing == ()

    decided = {d.case: d for d in out.decisions()}
    assert set(decided) == {"a", "b"}
    for case, named in PROPOSES.items():
        d = decided[case]
        assert (d.round, d.decision, d.proposal, d.offered) == (1, "keep", named, named)
        assert [(c.name, c.decision) for c in d.each] == [(named, "keep")]
        assert d.candidate == state(named).digest
    assert outcomes.scores(ledger.events("outcomes"), "a") == out.scores("a")  # one reader, ledger or run
