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
