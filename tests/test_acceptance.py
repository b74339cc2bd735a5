"""AcceptanceSuite: fixed before the first run, named by its digest, checked on construction."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from labkit.core.types import Evidence, Verdict
from labkit.grading.acceptance import AcceptanceSuite, SuiteError, split_nodeid

TESTS = {
    "tests/test_cache.py": (
        "from cache import Cache\n"
        "def test_isolation_a(): assert Cache().get('bob', 'k') is None\n"
        "def test_isolation_b(): assert Cache().get('eve', 'k') is None\n"
        "class TestHit:\n"
        "    def test_same_user_hit(self): pass\n"
        "    def test_param(self, x): pass\n"
    ),
}
F2P = ("tests/test_cache.py::test_isolation_a", "tests/test_cache.py::test_isolation_b")
P2P = ("tests/test_cache.py::TestHit::test_same_user_hit",)


def _suite(**kw: object) -> AcceptanceSuite:
    args: dict[str, object] = dict(name="cache", tests=TESTS, fail_to_pass=F2P, pass_to_pass=P2P)
    args.update(kw)
    return AcceptanceSuite(**args)  # type: ignore[arg-type]


def _verdict(suite: AcceptanceSuite, passing: set[str]) -> Verdict:
    ev = Evidence(candidate="c", suite=suite.digest, validator="v", results=(), exit_code=1, wall_seconds=0.1)
    return Verdict(
        evidence=ev,
        fail_to_pass=tuple(n for n in suite.fail_to_pass if n in passing),
        fail_to_fail=tuple(n for n in suite.fail_to_pass if n not in passing),
        pass_to_pass=tuple(n for n in suite.pass_to_pass if n in passing),
        pass_to_fail=tuple(n for n in suite.pass_to_pass if n not in passing),
    )


def test_split_nodeid_keeps_params_whole() -> None:
    assert split_nodeid("tests/t.py::TestC::test_a[1.5-a::b]") == (
        "tests/t.py",
        ("TestC", "test_a[1.5-a::b]"),
    )
    assert split_nodeid("tests/t.py") == ("tests/t.py", ())


def test_suite_is_frozen_and_its_tests_cannot_be_mutated() -> None:
    suite = _suite()
    with pytest.raises(dataclasses.FrozenInstanceError):
        suite.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        suite.tests["tests/test_cache.py"] = "def test_isolation_a(): pass"  # type: ignore[index]
    source = dict(TESTS)
    frozen = _suite(tests=source)
    source["tests/test_cache.py"] = "changed after construction"
    assert frozen.tests["tests/test_cache.py"] == TESTS["tests/test_cache.py"]


def test_digest_names_what_grades_not_labels() -> None:
    base = _suite()
    assert base.digest == _suite(name="renamed", groups={"isolation": F2P}).digest
    assert base.digest == _suite(fail_to_pass=tuple(reversed(F2P))).digest
    loosened = {"tests/test_cache.py": TESTS["tests/test_cache.py"].replace("is None", "is None or True")}
    assert base.digest != _suite(tests=loosened).digest
    assert base.digest != _suite(fail_to_pass=F2P[:1], pass_to_pass=P2P).digest
    assert hash(base) == hash(_suite(name="renamed"))
    assert base.protected_paths == frozenset({"tests/test_cache.py"})
    assert base.required == F2P + P2P


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"tests": {}}, "no test files"),
        ({"fail_to_pass": (), "pass_to_pass": ()}, "names no FAIL_TO_PASS"),
        ({"pass_to_pass": F2P[:1]}, "in both"),
        ({"fail_to_pass": ("tests/test_other.py::test_x",)}, "names file 'tests/test_other.py'"),
        ({"fail_to_pass": ("tests/test_cache.py::test_isolaton_a",)}, "test_isolaton_a"),
        ({"fail_to_pass": ("tests/test_cache.py",)}, "names a file, not a test"),
        ({"groups": {"isolation": ("tests/test_cache.py::test_nowhere",)}}, "outside the suite"),
        ({"tests": {"/abs/test_x.py": "def test_x(): pass"}}, "relative and normalised"),
        ({"tests": {"tests/../test_x.py": "def test_x(): pass"}}, "relative and normalised"),
    ],
)
def test_malformed_suites_are_refused_with_the_reason(kw: dict[str, object], needle: str) -> None:
    with pytest.raises(SuiteError, match=needle.replace("(", r"\(")):
        _suite(**kw)


def test_parametrised_and_nested_node_ids_are_accepted() -> None:
    suite = _suite(pass_to_pass=("tests/test_cache.py::TestHit::test_param[1-a]",))
    assert suite.pass_to_pass == ("tests/test_cache.py::TestHit::test_param[1-a]",)


def test_score_counts_a_display_group() -> None:
    suite = _suite(groups={"isolation": F2P, "same-user hit": P2P})
    verdict = _verdict(suite, {F2P[0], P2P[0]})
    assert suite.score(verdict, "isolation") == (1, 2)
    assert suite.score(verdict, "same-user hit") == (1, 1)
    with pytest.raises(SuiteError, match="no group 'speed'.*isolation"):
        suite.score(verdict, "speed")


def test_from_dir_reads_the_pattern_and_only_it(tmp_path: Path) -> None:
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "test_cache.py").write_text(TESTS["tests/test_cache.py"])
    (tmp_path / "tests" / "sub" / "test_more.py").write_text("def test_more(): pass\n")
    (tmp_path / "tests" / "data.json").write_text("{}")
    (tmp_path / "cache.py").write_text("class Cache: ...\n")
    suite = AcceptanceSuite.from_dir(
        tmp_path, name="cache", fail_to_pass=F2P, pass_to_pass=["tests/sub/test_more.py::test_more"]
    )
    assert set(suite.tests) == {"tests/test_cache.py", "tests/sub/test_more.py"}
    assert suite.tests["tests/sub/test_more.py"] == "def test_more(): pass\n"
    with pytest.raises(SuiteError, match="no files match"):
        AcceptanceSuite.from_dir(tmp_path, name="x", fail_to_pass=F2P, pass_to_pass=(), pattern="spec/*.py")
    with pytest.raises(SuiteError, match="not a directory"):
        AcceptanceSuite.from_dir(tmp_path / "nope", name="x", fail_to_pass=F2P, pass_to_pass=())
