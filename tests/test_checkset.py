"""ΔF within one check set: resolved, new, not run, changed — and no credit for skipping."""

from __future__ import annotations

import pytest

from labkit.core.errors import ValidatorMismatch
from labkit.core.types import Evidence, TestResult
from labkit.grading.checkset import Check, CheckSet, CheckSetError, compare

TESTS_V1 = {
    "tests/test_a.py": (
        "def test_one():\n    assert f(1) == 2\n\n"
        "def test_two():\n    assert f(2) == 3\n\n"
        "class TestGroup:\n    def test_three(self):\n        assert f(3) == 4\n"
    )
}
IDS = ("tests/test_a.py::test_one", "tests/test_a.py::test_two", "tests/test_a.py::TestGroup::test_three")
ONE, TWO, THREE = IDS


def suite(tests: dict[str, str] = TESTS_V1) -> CheckSet:
    return CheckSet.from_tests("visible", tests, IDS, severity={THREE: "high"})


def test_delta_f_counts_resolved_and_new_with_severity() -> None:
    s = suite()
    before = s.record({ONE: "failed", TWO: "failed", THREE: "passed"})
    after = s.record({ONE: "passed", TWO: "failed", THREE: "failed"})
    report = compare(before, after)
    assert report.failures_before == 2 and report.failures_after == 2 and report.delta_f == 0
    assert [e.check for e in report.resolved] == [ONE]
    assert [(e.check, e.severity) for e in report.new] == [(THREE, "high")]
    assert [e.check for e in report.still_failing] == [TWO]
    assert report.worst_new() == "high"
    assert set(report.frame()["status"]) == {"resolved", "new", "still failing"}


def test_a_skipped_or_missing_failure_is_never_resolved() -> None:
    s = suite()
    before = s.record({ONE: "failed", TWO: "failed", THREE: "passed"})
    after = s.record({ONE: "skipped", THREE: "passed"})  # TWO not reported at all
    report = compare(before, after)
    assert report.resolved == ()
    assert {e.check for e in report.not_run} == {ONE, TWO}
    assert report.delta_f == 0  # fewer reported failures, but nothing was fixed


def test_a_changed_test_version_is_never_resolved() -> None:
    loosened = {"tests/test_a.py": TESTS_V1["tests/test_a.py"].replace("f(1) == 2", "f(1) is not None")}
    before = suite().record({ONE: "failed", TWO: "passed", THREE: "passed"})
    after = suite(loosened).record({ONE: "passed", TWO: "passed", THREE: "passed"})
    report = compare(before, after)
    assert [e.check for e in report.changed] == [ONE] and report.resolved == ()
    assert report.delta_f == 0
    # Only the edited test's version moved: the others are still comparable.
    assert [c.version for c in suite(loosened).checks][1:] == [c.version for c in suite().checks][1:]


def test_real_resolution_counts() -> None:
    s = suite()
    report = compare(
        s.record({ONE: "failed", TWO: "error", THREE: "passed"}),
        s.record({ONE: "passed", TWO: "passed", THREE: "passed"}),
    )
    assert report.delta_f == 2 and len(report.resolved) == 2 and report.new == ()
    assert "ΔF = 2 - 0 = +2" in str(report)


def test_different_check_sets_are_not_subtracted() -> None:
    hidden = CheckSet("hidden", suite().checks)
    with pytest.raises(ValidatorMismatch, match="within one check set"):
        compare(suite().record({ONE: "failed"}), hidden.record({ONE: "passed"}))


def test_check_added_or_removed_between_runs() -> None:
    v1 = CheckSet("s", (Check("t::a"), Check("t::b")))
    v2 = CheckSet("s", (Check("t::a"), Check("t::c")))
    report = compare(v1.record({"t::a": "passed", "t::b": "failed"}), v2.record({"t::a": "passed", "t::c": "failed"}))
    assert [e.check for e in report.not_run] == ["t::b"] and [e.check for e in report.new] == ["t::c"]
    assert report.failures_after == 2 and report.delta_f == -1


def test_read_takes_outcomes_from_evidence() -> None:
    ev = Evidence(
        candidate="cand",
        suite="suite",
        validator="val",
        results=(TestResult(ONE, "passed"), TestResult("other::x", "failed")),
        exit_code=0,
        wall_seconds=0.1,
    )
    run = suite().read(ev)
    assert run.outcomes[ONE] == "passed" and run.outcomes[TWO] == "missing" and run.failures == ()


def test_bad_check_sets_are_refused() -> None:
    with pytest.raises(CheckSetError, match="more than once"):
        CheckSet("s", (Check("a"), Check("a")))
    with pytest.raises(CheckSetError, match="severity"):
        Check("a", severity="urgent")  # type: ignore[arg-type]
    with pytest.raises(CheckSetError, match="not in check set"):
        suite().record({"nope::x": "passed"})
    with pytest.raises(CheckSetError, match="not among the tests"):
        CheckSet.from_tests("s", TESTS_V1, ["tests/test_b.py::test_x"])
