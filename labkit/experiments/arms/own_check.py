"""An intrinsic arm's own check, on the engine: its own tests as an observation, its stop as a rule.

- `own_tests_probe(text)`: the model's own tests as a discriminating experiment. The engine
  runs it (step 3's observation, `labkit.loop.engine.probe.observe`: contained like a
  validation, on a throwaway copy of the candidate) and asks the arm again with the output; the
  probe writes the tests to a temporary folder and runs pytest on them with the candidate importable, printing one `OWN {json}`
  line per test (id, outcome, pytest's crash message).
- `own_tests_seen(situation, suite)`: what those lines say about the situation's candidate
  (None until the engine has run the probe on it).
- `OwnCheckAccepts(arm)`: the case rule that stops a case once the arm's own check (its own
  tests, its self-critique, its critic) accepted the code. The visible verdict never gates an
  intrinsic arm: the gap between what its own check accepts and what the visible and hidden
  tests say is the measurement.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit.core.types import Decision
from labkit.grading.acceptance import AcceptanceSuite, SuiteError
from labkit.loop.engine.probe import Experiment
from labkit.loop.engine.stopping import History, Stop, StopRecord
from labkit.loop.engine.strategy import Situation

if TYPE_CHECKING:
    from collections.abc import Set

__all__ = [
    "QUESTION",
    "SELF_TESTS",
    "OwnCheckAccepts",
    "OwnTests",
    "own_tests_probe",
    "own_tests_seen",
    "self_test_suite",
]

SELF_TESTS = "tests/test_self.py"
QUESTION = "do its own tests pass on this candidate?"
_MESSAGE = 300  # characters of each failing test's message the arm reads

_PROBE = """\
import json
import pathlib
import tempfile

import pytest

root = pathlib.Path(tempfile.mkdtemp())  # the candidate's copy is read-only: the tests go beside it
(root / {path!r}).parent.mkdir(parents=True)
(root / {path!r}).write_text({text!r})


class Own:
    def pytest_collectreport(self, report):
        if report.failed:
            print("OWN " + json.dumps({{"id": report.nodeid, "outcome": "error", "msg": str(report.longrepr)[-{n}:]}}))

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and report.passed:
            return
        outcome = report.outcome if report.when == "call" else "error" if report.failed else report.outcome
        crash = getattr(report.longrepr, "reprcrash", None)
        msg = crash.message if crash is not None else str(report.longrepr or "")
        print("OWN " + json.dumps({{"id": report.nodeid, "outcome": outcome, "msg": msg[:{n}]}}))


pytest.main(["-p", "no:cacheprovider", "-p", "no:terminal", "--rootdir", str(root), str(root / {path!r})],
            plugins=[Own()])
"""


def self_test_suite(text: str) -> AcceptanceSuite | None:
    """The model's own tests as a suite (every top-level test_* function), or None if unusable."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    if not names:
        return None
    try:
        return AcceptanceSuite(
            name="self-written",
            tests={SELF_TESTS: text},
            fail_to_pass=tuple(f"{SELF_TESTS}::{n}" for n in names),
            pass_to_pass=(),
        )
    except SuiteError:
        return None


def own_tests_probe(text: str) -> Experiment:
    """The model's own tests (`text`) as a probe the engine runs against the candidate."""
    return Experiment(QUESTION, _PROBE.format(path=SELF_TESTS, text=text, n=_MESSAGE))


@dataclass(frozen=True)
class OwnTests:
    """What the model's own tests said about one candidate."""

    passed: bool
    failing: str  # one line per required test that did not pass: "- id: outcome: message"


def own_tests_seen(s: Situation, suite: AcceptanceSuite) -> OwnTests | None:
    """The own tests' outcome on the situation's candidate, from the engine's observation (None:
    not observed yet). Passed only if every required test ran and passed."""
    obs = next(
        (
            o
            for o in reversed(s.observations)
            if o.experiment.question == QUESTION and o.candidate == s.candidate.digest
        ),
        None,
    )
    if obs is None:
        return None
    ran: dict[str, tuple[str, str]] = {}
    for line in obs.output.splitlines():
        if line.startswith("OWN {"):
            r = json.loads(line[4:])
            ran.setdefault(r["id"], (r["outcome"], r["msg"]))
    if obs.timed_out:
        ran = {k: v for k, v in ran.items() if v[0] == "passed"}
    bad = [(k, *v) for k, v in ran.items() if v[0] != "passed"]
    bad += [
        (k, "missing", "did not run" + (" (timed out)" if obs.timed_out else ""))
        for k in suite.required
        if k not in ran
    ]
    failing = "\n".join(f"- {k}: {outcome}: {msg[:_MESSAGE]}" for k, outcome, msg in bad)
    return OwnTests(not bad, failing)


@dataclass(frozen=True)
class OwnCheckAccepts:
    """A case rule: stop a case once the arm's own check accepted its code (`accepted` is the
    arm's set of such cases, filled as it proposes)."""

    accepted: Set[str]
    name: str = "own-check-accepts"

    def __call__(self, history: History) -> StopRecord | None:
        case = next((s.case for s in history.steps), "")
        if case not in self.accepted:
            return None
        why = (
            f"{Stop.REPORT_UNKNOWNS}: case {case}: its own check accepted the code (the lab's tests were not its check)"
        )
        return StopRecord(Decision.STOP, why, self.name, Stop.REPORT_UNKNOWNS, case)
