"""Mutants of a canonical HumanEval solution: single-site, distinct, and kept as wrong answers
only when a real validation of the visible examples rejects them."""

from __future__ import annotations

from labkit.experiments.memory.mutants import mutants

SRC = '''def f(xs, k):
    """doc"""
    out = 0
    for x in xs:
        if x > k and x % 2 == 0:
            out = out + x
    return out
'''


def test_each_mutant_changes_one_site_and_no_two_are_the_same() -> None:
    got = mutants(SRC, "f")
    whats = [w for w, _ in got]
    assert {"> → >=", "== → !=", "and → or", "+ → -", "% → //", "0 → 1", "condition negated"} <= set(whats)
    texts = [t for _, t in got]
    assert SRC not in texts and all(t.startswith("def f(xs, k):") for t in texts)
    assert mutants(SRC, "g") == []  # no such function: nothing to mutate


def test_only_visible_failing_mutants_are_kept_as_wrong_answers() -> None:
    from labkit.experiments.arms.suites import humaneval_cases
    from labkit.experiments.memory.mutants import failing_mutants
    from labkit.grading.verdicts import Checker

    case = humaneval_cases(["HumanEval/57"])[0]
    checker = Checker()
    kept = failing_mutants(case, checker, limit=3)
    assert 0 < len(kept) <= 3
    for _, cand in kept:  # each one really fails the visible examples
        assert not checker.check(cand, case.task.suite).verdict.resolved
    assert checker.check(case.states["canonical"][0], case.task.suite).verdict.resolved


def test_a_quarantined_or_hung_mutant_is_left_out_and_nothing_is_validated_twice() -> None:
    """A verdict with an alarm or a timeout is not a clean rejection (and the verdict cache does not
    keep it, so every later pick would re-run the sandbox): such mutants are left out, each mutant
    is validated once, and only as many as still wanted. A scripted validator stands in for the
    sandbox here; the real one runs in the test above."""
    import sys
    from dataclasses import dataclass, field

    from labkit.core.types import Candidate, Evidence, TestResult, Verdict
    from labkit.experiments.arms.suites import humaneval_cases
    from labkit.experiments.memory.mutants import MODULE, failing_mutants
    from labkit.grading.verdicts import Checker

    @dataclass
    class Scripted:
        """mutant1 quarantined, mutant2 killed at the wall limit, every other mutant cleanly rejected."""

        order: list[str]
        id: str = "scripted"
        python: str = sys.executable
        seen: list[str] = field(default_factory=list)

        def run(self, candidate: Candidate, suite: object) -> Verdict:
            k = self.order.index(candidate.files[MODULE])
            self.seen.append(candidate.digest)
            fail = (TestResult("tests/test_visible.py::test_example_1", "failed", "assert 1 == 2"),)
            alarms, timed_out = (("integrity: the process exited 71",), False) if k == 0 else ((), k == 1)
            ev = Evidence(
                candidate=candidate.digest,
                suite="s",
                validator=self.id,
                results=fail,
                exit_code=1,
                wall_seconds=0.1,
                alarms=alarms,
                stderr_tail="",
                timed_out=timed_out,
            )
            return Verdict(ev, (), ("tests/test_visible.py::test_example_1",), (), ())

    case = humaneval_cases(["HumanEval/39"])[0]
    texts = list(dict.fromkeys(t for _, t in mutants(str(case.states["canonical"][0].files[MODULE]), "prime_fib")))
    assert len(texts) >= 6
    validator = Scripted(texts)
    kept = failing_mutants(case, Checker(validator), limit=3)  # type: ignore[arg-type]
    assert [c.files[MODULE] for _, c in kept] == texts[2:5]
    assert len(validator.seen) == len(set(validator.seen)) == 5  # the first five, each once


def test_the_entry_point_is_read_from_the_hidden_suite() -> None:
    from labkit.experiments.arms.suites import humaneval_cases
    from labkit.experiments.memory.mutants import entry_point

    assert [entry_point(c) for c in humaneval_cases(["HumanEval/39", "HumanEval/57"])] == ["prime_fib", "monotonic"]
