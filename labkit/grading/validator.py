"""The validator: a candidate goes in, reproducible evidence comes out. Never a suggestion.

`Validator.run` checks the candidate's files for tampering with the grader (static
alarms), runs the protected suite in the sandbox, checks the run for tampering that only
shows at run time (a protected test rewritten or deleted, a required test skipped or
missing, an exit code that disagrees with the report), and sorts every required test
into SWE-bench's buckets. Any alarm quarantines the verdict: it is recorded, never
`resolved`, never cached. A re-test must go through `retest`, which refuses a different
suite or a differently configured validator than the failure it claims to fix.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from pathlib import PurePosixPath

from labkit.core.errors import ValidatorMismatch
from labkit.core.types import Candidate, Evidence, Outcome, TestResult, Verdict, digest
from labkit.grading import crosscheck, isolation
from labkit.grading.acceptance import AcceptanceSuite, split_nodeid
from labkit.grading.sandbox import CORRUPT, SEVERITY, Limits, SandboxRun, run_pytest, unsafe_path

_PROTOCOL = "labkit-validator/2"  # bump when the way a run is judged changes: it changes the id

# Modules that sit between pytest and its report; a candidate file by these names could replace them.
_SHADOWED = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "sitecustomize", "usercustomize"})
_DEFAULT_LIMITS = Limits()
_PYTEST_SECTION = {
    "tox.ini": re.compile(r"^\s*\[(pytest|tool:pytest)\]", re.M),
    "setup.cfg": re.compile(r"^\s*\[tool:pytest\]", re.M),
    "pyproject.toml": re.compile(r"^\s*\[tool\.pytest", re.M),
}


class Validator:
    """Runs an acceptance suite on candidates under fixed limits. Same settings, same `id`."""

    def __init__(
        self,
        limits: Limits = _DEFAULT_LIMITS,
        python: str = sys.executable,
        require_cross_check: bool = False,
    ) -> None:
        self.limits = limits
        self.python = python
        # Every required test must be confirmed by the independent runner: one it cannot run
        # (or any, in the process sandbox) counts as not passed.
        self.require_cross_check = require_cross_check
        self.runs = 0  # sandbox runs actually started (a cache is grading.verdicts.Checker's job)

    def __repr__(self) -> str:
        return f"Validator(id={self.id}, limits={self.limits})"

    @property
    def id(self) -> str:
        """Digest of everything that can change a verdict: limits, interpreter, judging protocol."""
        settings = {
            "protocol": _PROTOCOL,
            "wall_seconds": self.limits.wall_seconds,
            "memory_mb": self.limits.memory_mb,
            "processes": self.limits.processes,
            "file_mb": self.limits.file_mb,
            "python": self.python,
            "sandbox": isolation.mode(),  # an isolated run and a process-sandbox run can differ
        }
        if self.require_cross_check:  # only when set, so existing validators keep their ids
            settings["require_cross_check"] = True
        return digest(json.dumps(settings, sort_keys=True))

    def run(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        """Validate `candidate` against `suite`: always a fresh sandboxed run."""
        alarms = self.alarms_for(candidate, suite)
        static = crosscheck.uncheckable(suite.tests, suite.required)  # from the pristine text
        run = None
        # Never lay files outside the workspace: such a candidate is judged unrun (and alarmed).
        if not any(unsafe_path(p) for p in candidate.files):
            self.runs += 1
            run = run_pytest(
                candidate.files,
                suite.tests,
                self.limits,
                self.python,
                required=[n for n in suite.required if n not in static],
                import_roots=("", *suite.import_roots),
            )
        return to_verdict(run, candidate, suite, self.id, alarms, tuple(static), self.require_cross_check)

    def retest(self, before: Verdict, candidate: Candidate, suite: AcceptanceSuite) -> Verdict:
        """Re-validate after a patch, on the SAME suite and validator as `before`, or refuse."""
        ev = before.evidence
        if ev.suite != suite.digest:
            raise ValidatorMismatch(
                f"re-test on suite {suite.name!r} (digest {suite.digest}) but the failure was judged "
                f"on suite {ev.suite}: changing the suite changes the grader, not the candidate"
            )
        if ev.validator != self.id:
            raise ValidatorMismatch(
                f"re-test by validator {self.id} but the failure was judged by validator {ev.validator} "
                f"(different limits or interpreter): use the validator that produced the failure"
            )
        return self.run(candidate, suite)

    def alarms_for(self, candidate: Candidate, suite: AcceptanceSuite) -> tuple[str, ...]:
        """Static integrity checks on the candidate's files, before anything runs."""
        import_roots = (
            {()}
            | {PurePosixPath(p).parent.parts for p in suite.tests}
            | {PurePosixPath(r).parts for r in suite.import_roots}
        )  # on sys.path
        alarms: list[str] = []
        for path, text in candidate.files.items():
            reason = unsafe_path(path)
            if reason:
                alarms.append(f"unsafe path: {reason}")
                continue
            p = PurePosixPath(path)
            if path in suite.tests:
                # An identical copy is harmless: the pristine one is written over it anyway.
                if text != suite.tests[path]:
                    alarms.append(f"candidate edits protected test {path}")
                continue
            if p.name == "conftest.py":
                alarms.append(f"candidate adds conftest.py: {path}")
            if p.name in ("pytest.ini", ".pytest.ini"):
                alarms.append(f"candidate adds pytest config file {path}")
            section = _PYTEST_SECTION.get(p.name)
            if section and section.search(text):
                alarms.append(f"candidate sets pytest options in {path}")
            if "pytest11" in text:
                alarms.append(f"candidate declares a pytest11 entry point (a pytest plugin) in {path}")
            if p.suffix == ".py" and re.search(r"\bpytest_plugins\b", text):
                alarms.append(f"candidate names pytest_plugins in {path}")
            shadowed = _shadows(p, import_roots)
            if shadowed:
                alarms.append(f"candidate shadows module {shadowed!r} with {path}")
        return tuple(alarms)


def _shadows(path: PurePosixPath, roots: Iterable[tuple[str, ...]]) -> str | None:
    """The pytest-machinery module `path` would replace if imported from one of `roots`."""
    for root in roots:
        if path.parts[: len(root)] != root or len(path.parts) == len(root):
            continue
        rest = path.parts[len(root) :]
        module = PurePosixPath(rest[0]).stem
        if module in _SHADOWED and (len(rest) > 1 or rest[0].endswith(".py")):
            return module
    return None


def touches_protected(paths: Iterable[str], suite: AcceptanceSuite) -> tuple[str, ...]:
    """Alarms for a patch's touched paths: protected tests, conftest.py, pytest ini files.

    Content checks (pytest sections in tox.ini/setup.cfg/pyproject.toml, pytest_plugins)
    need the patched files: run `Validator.alarms_for` on the patched candidate for those.
    """
    alarms = []
    for path in paths:
        norm = path.removeprefix("./")
        name = PurePosixPath(norm).name
        if norm in suite.protected_paths:
            alarms.append(f"patch touches protected test {norm}")
        elif name == "conftest.py":
            alarms.append(f"patch touches conftest.py: {norm}")
        elif name in ("pytest.ini", ".pytest.ini"):
            alarms.append(f"patch touches pytest config file {norm}")
    return tuple(alarms)


def to_verdict(
    run: SandboxRun | None,
    candidate: Candidate,
    suite: AcceptanceSuite,
    validator_id: str,
    alarms: Iterable[str] = (),
    uncheckable: tuple[str, ...] = (),
    require_cross_check: bool = False,
) -> Verdict:
    """Judge one sandbox run: run-time alarms, one outcome per required test, SWE-bench buckets.

    `run` is None when the candidate could not even be laid out (its alarms say why).
    `uncheckable`: required tests the independent runner cannot run (`crosscheck.uncheckable`).
    """
    found_alarms = list(alarms)
    required = [_required_result(nodeid, run) for nodeid in suite.required]
    if run is not None:
        found_alarms += _run_alarms(run, suite, required, set(uncheckable))
    cross = run is not None and run.cross_checked
    unchecked = tuple(n for n in suite.required if n in uncheckable or not cross)
    passed = {r.nodeid for r in required if r.outcome == "passed"}
    if require_cross_check:
        passed -= set(unchecked)
    seen = {r.nodeid for r in required}
    extra = tuple(r for r in (run.results if run else ()) if r.nodeid not in seen)
    evidence = Evidence(
        candidate=candidate.digest,
        suite=suite.digest,
        validator=validator_id,
        results=tuple(required) + extra,
        exit_code=run.exit_code if run else None,
        wall_seconds=run.wall_seconds if run else 0.0,
        alarms=tuple(dict.fromkeys(found_alarms)),
        stderr_tail=run.stderr_tail if run else "",
        timed_out=run.timed_out if run else False,
        isolation=run.isolation if run else "",
        unchecked=unchecked,
    )
    return Verdict(
        evidence=evidence,
        fail_to_pass=tuple(n for n in suite.fail_to_pass if n in passed),
        fail_to_fail=tuple(n for n in suite.fail_to_pass if n not in passed),
        pass_to_pass=tuple(n for n in suite.pass_to_pass if n in passed),
        pass_to_fail=tuple(n for n in suite.pass_to_pass if n not in passed),
    )


def _required_result(nodeid: str, run: SandboxRun | None) -> TestResult:
    """The outcome of one required test. Only a test the report shows as passed passes."""
    if run is None:
        return TestResult(nodeid, "error", "not run: the candidate could not be laid out")
    if run.timed_out:
        return TestResult(nodeid, "error", "not reported: the run was killed at the wall limit")
    if not run.report_found:
        why = run.report_problem or f"pytest's report is missing or incomplete (exit code {run.exit_code})"
        return TestResult(nodeid, "error", f"not reported: {why}")
    by_id = {r.nodeid: r for r in run.results}
    if nodeid in by_id:
        return by_id[nodeid]
    # A function named without parameters covers all its parametrisations: all must pass.
    params = [r for r in run.results if r.nodeid.startswith(nodeid + "[")]
    if not params and nodeid.count("[") > nodeid.count("]"):
        # A parametrised id truncated at a space (as SWE-bench's datasets have them): every
        # test it is a prefix of must pass, as for an id given without parameters.
        params = [r for r in run.results if r.nodeid.startswith(nodeid)]
    if params:
        worst = max(params, key=lambda r: SEVERITY[r.outcome])
        return TestResult(nodeid, worst.outcome, worst.message, sum(r.seconds for r in params))
    # A collection error or skip of its module or class stands in for the test.
    path, names = split_nodeid(nodeid)
    for k in range(len(names) - 1, -1, -1):
        parent = by_id.get("::".join([path, *names[:k]]))
        if parent is not None:
            outcome: Outcome = parent.outcome if parent.outcome != "passed" else "missing"
            return TestResult(nodeid, outcome, f"{parent.nodeid}: {parent.message}")
    return TestResult(nodeid, "missing", "not in the report")


def _run_alarms(
    run: SandboxRun, suite: AcceptanceSuite, required: list[TestResult], uncheckable: set[str]
) -> list[str]:
    alarms = []
    for path, text in suite.tests.items():
        if path not in run.protected_after:  # not read back: the run was killed (it fails anyway)
            continue
        after = run.protected_after[path]
        if after is None:
            alarms.append(f"protected test {path} was deleted during the run")
        elif after != digest(text):  # digest takes text or bytes alike
            alarms.append(f"protected test {path} was modified during the run")
    alarms += [f"integrity: {p}" for p in run.integrity]
    if run.timed_out:  # a killed run has nothing to cross-check; every required test is an error
        return alarms
    alarms += _unconfirmed(run, required, uncheckable)
    if not run.report_found:
        if run.exit_code == 0 and not run.report_problem.startswith(CORRUPT):
            alarms.append("exit code 0 but no complete report: the run ended before pytest reported")
        return alarms
    bad = sum(r.outcome in ("failed", "error") for r in run.results)
    if run.exit_code in (0, 1) and (run.exit_code == 0) != (bool(run.results) and not bad):
        alarms.append(
            f"exit code {run.exit_code} disagrees with the report ({len(run.results)} results, {bad} failed or errored)"
        )
    for r in required:
        if r.outcome == "skipped":
            alarms.append(f"required test skipped: {r.nodeid} ({r.message})")
        elif r.outcome == "missing":
            alarms.append(f"required test missing from the report: {r.nodeid} (exit code {run.exit_code})")
    return alarms


def _unconfirmed(run: SandboxRun, required: list[TestResult], uncheckable: set[str]) -> list[str]:
    """Every pass pytest reports for a cross-checkable required test must be the independent
    runner's pass too. Only a pass needs confirming: where pytest found a failure (an honest
    crash, a capture that hit the file-size cap), the failure stands and nothing is forged."""
    if not run.cross_checked:
        return []
    alarms = []
    for r in required:
        if r.outcome != "passed" or r.nodeid in uncheckable:
            continue
        check = run.checks.get(r.nodeid)
        if check is None:
            why = run.check_status or "it reported no outcome for it"
            alarms.append(
                f"integrity: pytest reported {r.nodeid} passed but the independent "
                f"runner did not confirm it: {why[:300]}"
            )
        elif check.outcome != "passed":
            alarms.append(
                f"integrity: pytest reported {r.nodeid} {r.outcome} but the independent runner "
                f"found it {check.outcome} ({check.message[:200]})"
            )
    return alarms
