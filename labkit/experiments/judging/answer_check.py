"""A question's answer as an engine candidate, and the validator that reads it.

An answer is a candidate with one file, `answer.md`: the model's whole reply. It is text, not
code, so judging it runs nothing: `AnswerCheck` is a `Validator` that reads the reply instead of
starting pytest. Each suite's test file declares what is checked (a `CHECK = ...` line the check
reads, and the test's name), so the suite digest still names what grades:

- the *visible* suite (`visible_suite`) checks only that an answer file is there: every answer
  passes it, so it gives the loop no evidence at all (what "intrinsic" self-correction means);
- the *hidden* suite (`hidden_suite`) checks the reply's final number against the computed
  answer (`Question.is_correct`); the engine scores every round with it, for accounting only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from labkit.core.errors import SuiteError
from labkit.core.types import Candidate, Evidence, TestResult, Verdict, digest
from labkit.experiments.judging.questions import Question
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.validator import Validator
from labkit.loop.engine import Task

__all__ = [
    "ANSWER_FILE",
    "AnswerCheck",
    "answer_of",
    "answer_tasks",
    "hidden_suite",
    "visible_suite",
]

ANSWER_FILE = "answer.md"
_PROTOCOL = "labkit-answer-check/1"
_TEST = "test_answer.py"
_CHECK = re.compile(r"^CHECK = (.*)$", re.M)
_TEXT = '''"""Read, never run, by labkit.experiments.judging.answer_check.AnswerCheck."""
CHECK = {check}


def {name}(): ...
'''


def _suite(name: str, test: str, check: dict[str, str], *, protective: bool) -> AcceptanceSuite:
    text = _TEXT.format(check=json.dumps(check, sort_keys=True), name=test)
    nodeid = (f"{_TEST}::{test}",)
    return AcceptanceSuite(
        name=name,
        tests={_TEST: text},
        fail_to_pass=() if protective else nodeid,
        pass_to_pass=nodeid if protective else (),
    )


def visible_suite() -> AcceptanceSuite:
    """What the loop may see: only that there is an answer (every answer passes)."""
    return _suite(
        "intrinsic: no external check",
        "test_there_is_an_answer",
        {"kind": "answered"},
        protective=True,
    )


def hidden_suite(q: Question) -> AcceptanceSuite:
    """The computed answer, for scoring only: the reply's final number must equal it."""
    return _suite(
        f"gold {q.id}",
        "test_final_number_is_the_computed_answer",
        {"kind": "gold", "question": q.id, "answer": q.answer},
        protective=False,
    )


def answer_of(candidate: Candidate) -> str:
    return candidate.files.get(ANSWER_FILE, "")


def answer_tasks(questions: Sequence[Question], answers: Sequence[str]) -> list[Task]:
    """One engine task per question: its first answer as the start, the two suites above."""
    visible = visible_suite()
    return [
        Task(
            id=q.id,
            start=Candidate({ANSWER_FILE: a}, label=f"{q.id}:answer"),
            suite=visible,
            hidden=hidden_suite(q),
            slice=q.kind,
        )
        for q, a in zip(questions, answers, strict=True)
    ]


class AnswerCheck(Validator):
    """Judges a text answer against a suite declared above; nothing is executed."""

    @property
    def id(self) -> str:
        return digest(_PROTOCOL)

    def run(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        text = suite.tests.get(_TEST)
        found = _CHECK.search(text) if isinstance(text, str) else None
        if found is None:
            raise SuiteError(f"suite {suite.name!r} is not an answer check (no {_TEST} with a CHECK line)")
        check = json.loads(found.group(1))
        (nodeid,) = suite.required
        reply = candidate.files.get(ANSWER_FILE)
        if check["kind"] == "answered":
            ok, why = reply is not None, "there is no answer file"
        else:
            q = Question(
                id=check["question"],
                kind="",
                text="",
                answer=check["answer"],
                working="",
                wrong_answer="",
                wrong_working="",
            )
            ok, why = (
                reply is not None and q.is_correct(reply),
                f"the final number is not {check['answer']}",
            )
        result = TestResult(nodeid, "passed" if ok else "failed", "" if ok else why)
        evidence = Evidence(
            candidate=candidate.digest,
            suite=suite.digest,
            validator=self.id,
            results=(result,),
            exit_code=0 if ok else 1,
            wall_seconds=0.0,
            isolation="not run: a text answer is read, not executed",
        )
        passed = (nodeid,) if ok else ()
        failed = () if ok else (nodeid,)
        if nodeid in suite.fail_to_pass:
            return Verdict(evidence, passed, failed, (), ())
        return Verdict(evidence, (), (), passed, failed)
