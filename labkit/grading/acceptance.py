"""Protected acceptance: the tests that decide, fixed before the first run.

An acceptance suite is step (1) of the loop: it names the failing acceptance (FAIL_TO_PASS)
and the protective tests (PASS_TO_PASS), and carries pristine copies of the test files.
The validator writes those copies over whatever the candidate brought, so editing a test
changes nothing but an alarm. The suite is frozen; its digest goes into every Evidence,
and a re-test on a suite with a different digest is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from labkit.core.errors import SuiteError
from labkit.core.types import Verdict, digest


def split_nodeid(nodeid: str) -> tuple[str, tuple[str, ...]]:
    """'tests/t.py::TestC::test_a[1]' -> ('tests/t.py', ('TestC', 'test_a[1]'))."""
    head, bracket, params = nodeid.partition("[")
    path, *names = head.split("::")
    if names:
        names[-1] += bracket + params
    return path, tuple(names)


@dataclass(frozen=True, kw_only=True)
class AcceptanceSuite:
    """Pristine protected tests plus the node ids that must pass. Fixed before the first run."""

    name: str
    tests: Mapping[str, str | bytes]  # relative path -> pristine text (bytes: a binary fixture)
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    import_roots: tuple[str, ...] = ()  # folders on sys.path besides the workspace root

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", MappingProxyType(dict(sorted(self.tests.items()))))
        object.__setattr__(self, "fail_to_pass", tuple(self.fail_to_pass))
        object.__setattr__(self, "pass_to_pass", tuple(self.pass_to_pass))
        groups = {g: tuple(ids) for g, ids in self.groups.items()}
        object.__setattr__(self, "groups", MappingProxyType(groups))
        object.__setattr__(self, "import_roots", tuple(self.import_roots))
        self._check()

    def _check(self) -> None:
        if not self.tests:
            raise SuiteError(f"suite {self.name!r} has no test files")
        for path in self.tests:
            p = PurePosixPath(path)
            if p.is_absolute() or ".." in p.parts or str(p) != path:
                raise SuiteError(f"suite {self.name!r}: test path {path!r} must be relative and normalised")
        required = self.fail_to_pass + self.pass_to_pass
        if not required:
            raise SuiteError(f"suite {self.name!r} names no FAIL_TO_PASS or PASS_TO_PASS tests")
        both = set(self.fail_to_pass) & set(self.pass_to_pass)
        if both:
            raise SuiteError(f"suite {self.name!r}: tests in both FAIL_TO_PASS and PASS_TO_PASS: {sorted(both)}")
        for nodeid in required:
            self._check_nodeid(nodeid)
        for group, ids in self.groups.items():
            stray = [i for i in ids if i not in required]
            if stray:
                raise SuiteError(f"suite {self.name!r}: group {group!r} names tests outside the suite: {stray}")

    def _check_nodeid(self, nodeid: str) -> None:
        # A typo here would later look like a test "missing from the report": catch it now.
        path, names = split_nodeid(nodeid)
        text = self.tests.get(path)
        if not isinstance(text, str) or not path.endswith(".py"):
            raise SuiteError(
                f"suite {self.name!r}: {nodeid!r} names file {path!r}, not among the protected tests {list(self.tests)}"
            )
        if not names:
            raise SuiteError(f"suite {self.name!r}: {nodeid!r} names a file, not a test")
        for name in names:
            bare = name.partition("[")[0]
            pattern = rf"^\s*((async\s+)?(def|class)\s+{re.escape(bare)}\b|{re.escape(bare)}\s*=)"
            if not re.search(pattern, text, re.M):
                raise SuiteError(f"suite {self.name!r}: {nodeid!r}: no def, class or assignment of {bare!r} in {path}")

    @cached_property  # computed once per suite: every engine event names it
    def digest(self) -> str:
        """Names what grades: test texts and required node ids (not the name or display groups)."""
        payload: dict[str, object] = {
            "tests": {p: t if isinstance(t, str) else "bytes:" + digest(t) for p, t in self.tests.items()},
            "f2p": sorted(self.fail_to_pass),
            "p2p": sorted(self.pass_to_pass),
        }
        if self.import_roots:  # only when set, so existing suites keep their digests
            payload["import_roots"] = list(self.import_roots)
        return digest(json.dumps(payload, sort_keys=True))

    def __hash__(self) -> int:
        return hash(self.digest)

    def text(self, path: str) -> str:
        """A protected file's text (a test, or a text fixture); SuiteError for a binary fixture."""
        data = self.tests[path]
        if not isinstance(data, str):
            raise SuiteError(f"suite {self.name!r}: {path} is a binary fixture, not text")
        return data

    @property
    def protected_paths(self) -> frozenset[str]:
        return frozenset(self.tests)

    @property
    def required(self) -> tuple[str, ...]:
        """Every node id that must pass: FAIL_TO_PASS then PASS_TO_PASS."""
        return self.fail_to_pass + self.pass_to_pass

    def score(self, verdict: Verdict, group: str) -> tuple[int, int]:
        """(passed, total) for one display group. Quarantine is shown separately, not folded in."""
        if group not in self.groups:
            raise SuiteError(f"suite {self.name!r} has no group {group!r}; groups: {list(self.groups)}")
        passed = set(verdict.fail_to_pass) | set(verdict.pass_to_pass)
        ids = self.groups[group]
        return sum(i in passed for i in ids), len(ids)

    @classmethod
    def from_dir(
        cls,
        root: str | Path,
        *,
        name: str,
        fail_to_pass: Sequence[str],
        pass_to_pass: Sequence[str],
        groups: Mapping[str, Sequence[str]] | None = None,
        pattern: str = "tests/**/*.py",
    ) -> AcceptanceSuite:
        """Read the protected tests from files under `root` matching `pattern`."""
        base = Path(root)
        if not base.is_dir():
            raise SuiteError(f"suite {name!r}: {base} is not a directory")
        tests = {
            p.relative_to(base).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(base.glob(pattern))
            if p.is_file() and "__pycache__" not in p.parts
        }
        if not tests:
            raise SuiteError(f"suite {name!r}: no files match {pattern!r} under {base}")
        return cls(
            name=name,
            tests=tests,
            fail_to_pass=tuple(fail_to_pass),
            pass_to_pass=tuple(pass_to_pass),
            groups={g: tuple(ids) for g, ids in (groups or {}).items()},
        )
