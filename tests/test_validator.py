"""Validator: buckets, resolution, same-grader re-tests, cache, static alarms, run-time alarms."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from labkit.core.errors import ValidatorMismatch
from labkit.core.types import Candidate, Outcome, TestResult, Verdict, digest
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.sandbox import Limits, SandboxRun
from labkit.grading.validator import Validator, to_verdict, touches_protected
from labkit.grading.verdicts import Checker

TEST_CACHE = """\
from cache import Cache


def test_isolation():
    c = Cache()
    c.put("alice", "k", 1)
    assert c.get("bob", "k") is None


def test_same_user_hit():
    c = Cache()
    c.put("alice", "k", 1)
    assert c.get("alice", "k") == 1
"""
ISO = "tests/test_cache.py::test_isolation"
HIT = "tests/test_cache.py::test_same_user_hit"
SUITE = AcceptanceSuite(
    name="cache", tests={"tests/test_cache.py": TEST_CACHE}, fail_to_pass=(ISO,), pass_to_pass=(HIT,)
)

GOOD = """\
class Cache:
    def __init__(self):
        self._d = {}

    def put(self, user, key, value):
        self._d[(user, key)] = value

    def get(self, user, key):
        return self._d.get((user, key))
"""
LEAKY = GOOD.replace("(user, key)", "key")  # the chapter's bug: one user's entry served to another
COLD = GOOD.replace("return self._d.get((user, key))", "return None")  # isolated, but never hits

LIMITS = Limits(wall_seconds=30, memory_mb=512)


def _cand(code: str, **extra: str) -> Candidate:
    return Candidate({"cache.py": code, **extra})


# -- real runs ---------------------------------------------------------------------------


@pytest.mark.slow
def test_buckets_follow_swe_bench() -> None:
    v = Validator(LIMITS)
    leaky = v.run(_cand(LEAKY), SUITE)
    assert (leaky.fail_to_fail, leaky.pass_to_pass) == ((ISO,), (HIT,))
    assert not leaky.resolved and not leaky.quarantined
    assert leaky.evidence.outcome(ISO) == "failed"

    good = v.run(_cand(GOOD), SUITE)
    assert (good.fail_to_pass, good.pass_to_pass) == ((ISO,), (HIT,))
    assert good.resolved and good.score("acceptance") == (1, 1)
    assert good.evidence.candidate == _cand(GOOD).digest
    assert good.evidence.suite == SUITE.digest
    assert good.evidence.validator == v.id
    assert good.evidence.exit_code == 0

    cold = v.run(_cand(COLD), SUITE)  # fixing isolation by breaking the hit is not a fix
    assert (cold.fail_to_pass, cold.pass_to_fail) == ((ISO,), (HIT,))
    assert not cold.resolved


@pytest.mark.slow
def test_retest_must_use_the_same_suite_and_validator() -> None:
    v = Validator(LIMITS)
    before = v.run(_cand(LEAKY), SUITE)
    after = v.retest(before, _cand(GOOD), SUITE)
    assert after.resolved

    easier = AcceptanceSuite(
        name="cache", tests={"tests/test_cache.py": TEST_CACHE}, fail_to_pass=(), pass_to_pass=(HIT,)
    )
    with pytest.raises(ValidatorMismatch, match="changes the grader"):
        v.retest(before, _cand(GOOD), easier)
    longer = Validator(Limits(wall_seconds=600, memory_mb=512))
    with pytest.raises(ValidatorMismatch, match="judged by validator"):
        longer.retest(before, _cand(GOOD), SUITE)


@pytest.fixture
def fake_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache bookkeeping needs no subprocess: a stand-in run that passes GOOD and fails LEAKY."""

    def run(files: Mapping[str, str], protected: Mapping[str, str], *_: object, **__: object) -> SandboxRun:
        ok = files["cache.py"] == GOOD
        results: dict[str, Outcome] = {ISO: "passed" if ok else "failed", HIT: "passed"}
        return _run(results, 0 if ok else 1)

    monkeypatch.setattr("labkit.grading.validator.run_pytest", run)


@pytest.mark.usefixtures("fake_sandbox")
def test_cache_hits_misses_and_bypass() -> None:
    v = Validator(LIMITS)
    checker = Checker(v)  # the one verdict cache sits in front of a validator, never inside it
    first = checker.check(_cand(LEAKY), SUITE)
    assert v.runs == 1 and not first.cached
    again = checker.check(_cand(LEAKY), SUITE)  # hit: same candidate, suite, validator
    assert again.cached and again.verdict is first.verdict and v.runs == 1
    assert checker.check(_cand(GOOD), SUITE).verdict.resolved  # miss: different candidate
    assert v.runs == 2
    fresh = checker.check(_cand(LEAKY), SUITE, use_cache=False)  # bypass: a flakiness re-run
    assert v.runs == 3 and not fresh.cached
    assert fresh.verdict.fail_to_fail == first.verdict.fail_to_fail

    v.run(_cand(LEAKY), SUITE)  # the validator itself never caches
    v.run(_cand(LEAKY), SUITE)
    assert v.runs == 5


@pytest.mark.usefixtures("fake_sandbox")
def test_alarmed_verdicts_are_never_cached() -> None:
    v = Validator(LIMITS)
    checker = Checker(v)
    tampered = _cand(GOOD, **{"conftest.py": "# harmless, but not allowed\n"})
    first = checker.check(tampered, SUITE).verdict
    assert first.quarantined and not first.resolved
    assert first.fail_to_pass == (ISO,)  # the tests did pass; the verdict is still quarantined
    assert not checker.check(tampered, SUITE).cached
    assert v.runs == 2


def test_unsafe_paths_are_alarmed_and_never_laid_out() -> None:
    v = Validator(LIMITS)
    verdict = v.run(_cand(GOOD, **{"../outside.py": "x = 1\n"}), SUITE)
    assert v.runs == 0
    assert verdict.quarantined and not verdict.resolved
    assert any("unsafe path" in a for a in verdict.evidence.alarms)
    assert verdict.evidence.outcome(ISO) == "error"


def test_validator_id_is_its_settings() -> None:
    assert Validator(LIMITS).id == Validator(Limits(30, 512)).id
    assert Checker(Validator(LIMITS)).id == Validator(LIMITS).id  # caching does not change verdicts
    assert Validator(LIMITS).id != Validator(Limits(31, 512)).id
    assert Validator(LIMITS).id != Validator(Limits(30, 256)).id
    assert Validator(LIMITS).id != Validator(LIMITS, python="/usr/bin/python3").id


# -- static alarms -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "needle"),
    [
        (
            "tests/test_cache.py",
            TEST_CACHE.replace("is None", "is None or True"),
            "edits protected",
        ),
        ("conftest.py", "", "conftest.py"),
        ("tests/deep/conftest.py", "", "conftest.py"),
        ("pytest.ini", "[pytest]\n", "pytest config file"),
        ("tox.ini", "[tox]\n[pytest]\naddopts = -x\n", "pytest options"),
        ("setup.cfg", "[tool:pytest]\naddopts = -x\n", "pytest options"),
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-x"\n', "pytest options"),
        ("setup.cfg", "[options.entry_points]\npytest11 =\n  evil = evil\n", "pytest11"),
        ("helpers.py", "pytest_plugins = ['evil']\n", "pytest_plugins"),
        ("pytest.py", "", "shadows module 'pytest'"),
        ("_pytest/__init__.py", "", "shadows module '_pytest'"),
        ("tests/pluggy.py", "", "shadows module 'pluggy'"),
        ("sitecustomize.py", "", "shadows module 'sitecustomize'"),
    ],
)
def test_static_alarms(path: str, text: str, needle: str) -> None:
    alarms = Validator(LIMITS).alarms_for(_cand(GOOD, **{path: text}), SUITE)
    assert any(needle in a for a in alarms), alarms


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("tests/test_cache.py", TEST_CACHE),  # an identical copy of a protected test
        ("tox.ini", "[tox]\nenvlist = py311\n"),
        ("setup.cfg", "[metadata]\nname = cache\n"),
        ("pyproject.toml", '[project]\nname = "cache"\n'),
        ("pkg/pytest_helpers.py", "def helper(): pass\n"),
        ("src/py/mod.py", "x = 1\n"),  # not on sys.path
        ("py.typed", ""),
    ],
)
def test_ordinary_files_raise_no_alarm(path: str, text: str) -> None:
    assert Validator(LIMITS).alarms_for(_cand(GOOD, **{path: text}), SUITE) == ()


def test_touches_protected_names_each_offence() -> None:
    alarms = touches_protected(["cache.py", "./tests/test_cache.py", "tests/conftest.py", "pytest.ini"], SUITE)
    assert alarms == (
        "patch touches protected test tests/test_cache.py",
        "patch touches conftest.py: tests/conftest.py",
        "patch touches pytest config file pytest.ini",
    )
    assert touches_protected(["cache.py", "README.md"], SUITE) == ()


# -- judging a run (fabricated SandboxRuns: the judging rules, without subprocesses) ----


def _run(
    results: Mapping[str, Outcome],
    exit_code: int | None = 1,
    *,
    timed_out: bool = False,
    report_found: bool = True,
    protected: Mapping[str, str | None] | None = None,
) -> SandboxRun:
    return SandboxRun(
        results=tuple(TestResult(n, o, f"{o} here") for n, o in results.items()),
        exit_code=exit_code,
        wall_seconds=0.5,
        timed_out=timed_out,
        report_found=report_found,
        stderr_tail="",
        protected_after=protected or {"tests/test_cache.py": digest(TEST_CACHE)},
    )


def _judge(run: SandboxRun, suite: AcceptanceSuite = SUITE) -> Verdict:
    return to_verdict(run, _cand(GOOD), suite, "v1")


def test_only_passed_counts_as_passing() -> None:
    bad: tuple[Outcome, ...] = ("failed", "error", "skipped")
    for outcome in bad:
        verdict = _judge(_run({ISO: outcome, HIT: outcome}))
        assert verdict.fail_to_fail == (ISO,) and verdict.pass_to_fail == (HIT,), outcome
        assert not verdict.resolved


def test_skipped_or_missing_required_tests_raise_alarms() -> None:
    skipped = _judge(_run({ISO: "skipped", HIT: "passed"}, 0))
    assert skipped.evidence.alarms == (f"required test skipped: {ISO} (skipped here)",)
    missing = _judge(_run({HIT: "passed"}, exit_code=0))
    assert missing.fail_to_fail == (ISO,)
    assert missing.evidence.outcome(ISO) == "missing"
    assert any("missing from the report" in a for a in missing.evidence.alarms)


def test_a_module_collection_error_stands_in_for_its_tests() -> None:
    verdict = _judge(_run({"tests/test_cache.py": "error"}))
    assert verdict.fail_to_fail == (ISO,) and verdict.pass_to_fail == (HIT,)
    assert verdict.evidence.outcome(ISO) == "error"
    assert verdict.evidence.alarms == ()  # an honest failure, not tampering


def test_a_function_id_covers_all_its_parametrisations() -> None:
    text = "import pytest\n@pytest.mark.parametrize('x', [1, 2])\ndef test_p(x): pass\n"
    suite = AcceptanceSuite(
        name="p", tests={"tests/test_p.py": text}, fail_to_pass=("tests/test_p.py::test_p",), pass_to_pass=()
    )
    after = {"tests/test_p.py": digest(text)}
    one_bad: dict[str, Outcome] = {
        "tests/test_p.py::test_p[1]": "passed",
        "tests/test_p.py::test_p[2]": "failed",
    }
    assert _judge(_run(one_bad, protected=after), suite).fail_to_fail == ("tests/test_p.py::test_p",)
    all_good: dict[str, Outcome] = {
        "tests/test_p.py::test_p[1]": "passed",
        "tests/test_p.py::test_p[2]": "passed",
    }
    assert _judge(_run(all_good, 0, protected=after), suite).resolved


def test_timeouts_are_errors_not_alarms() -> None:
    verdict = _judge(_run({}, None, timed_out=True, report_found=False))
    assert verdict.fail_to_fail == (ISO,) and verdict.pass_to_fail == (HIT,)
    assert verdict.evidence.outcome(ISO) == "error"
    assert verdict.evidence.timed_out and verdict.evidence.alarms == ()


def test_exit_code_is_cross_checked_against_the_report() -> None:
    assert _judge(_run({ISO: "passed", HIT: "passed"}, 0)).resolved
    fake_ok = _judge(_run({ISO: "failed", HIT: "passed"}, 0))
    assert any("exit code 0 disagrees" in a for a in fake_ok.evidence.alarms)
    fake_fail = _judge(_run({ISO: "passed", HIT: "passed"}, 1))
    assert any("exit code 1 disagrees" in a for a in fake_fail.evidence.alarms)
    assert not fake_fail.resolved
    no_report = _judge(_run({}, 0, report_found=False))
    assert any("no complete report" in a for a in no_report.evidence.alarms)
    crashed = _judge(_run({}, None, report_found=False))  # killed by a signal: error, no alarm
    assert crashed.evidence.alarms == () and not crashed.resolved


def test_protected_files_changed_during_the_run_are_alarmed() -> None:
    gone = _judge(_run({ISO: "passed", HIT: "passed"}, 0, protected={"tests/test_cache.py": None}))
    assert gone.evidence.alarms == ("protected test tests/test_cache.py was deleted during the run",)
    edited = {"tests/test_cache.py": digest("def test_isolation(): pass")}
    changed = _judge(_run({ISO: "passed", HIT: "passed"}, 0, protected=edited))
    assert changed.evidence.alarms == ("protected test tests/test_cache.py was modified during the run",)
    assert not changed.resolved and changed.fail_to_pass == (ISO,)
