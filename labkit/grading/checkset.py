"""ΔF bookkeeping: failures before minus failures after, only within one check set.

A check set is a named, versioned list of checks (tests) with a severity each. Comparing
two runs of the same set says, per check, whether it was resolved, newly failing, still
failing, not run, or changed. Two rules keep the count honest (seed 002):

- a check that was failing and is skipped or missing now is *not run*, never resolved:
  it still counts as a failure after;
- a check whose version (its source's digest) changed is a different check: it is never
  counted as resolved either, and a failure before stays a failure after.

So ΔF = |failures before| - |failures after| = resolved - (checks failing after that were
not failing before), and comparing runs of two different check sets is refused
(ValidatorMismatch), not silently subtracted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from labkit.core.errors import CheckSetError, ValidatorMismatch
from labkit.core.types import Evidence, Outcome, digest

if TYPE_CHECKING:
    import polars as pl

Severity = Literal["low", "medium", "high", "critical"]
Status = Literal["resolved", "new", "still failing", "not run", "changed", "passing"]

SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low")  # most severe first
_FAILING = ("failed", "error")
_NOT_RUN = ("skipped", "missing")


@dataclass(frozen=True)
class Check:
    """One check: its id (a pytest node id), version (digest of its source) and severity."""

    id: str
    version: str = ""
    severity: Severity = "medium"

    def __post_init__(self) -> None:
        if not self.id:
            raise CheckSetError("a check needs a non-empty id")
        if self.severity not in SEVERITIES:
            raise CheckSetError(f"check {self.id!r}: severity {self.severity!r} is not one of {SEVERITIES}")


@dataclass(frozen=True)
class CheckSet:
    """A named set of checks; ΔF is only defined between two runs of the same name."""

    name: str
    checks: tuple[Check, ...]

    def __post_init__(self) -> None:
        ids = [c.id for c in self.checks]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise CheckSetError(f"check set {self.name!r} lists {dup[0]!r} more than once")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.checks)

    def record(self, outcomes: Mapping[str, Outcome]) -> CheckRun:
        """A run of this set. A check with no outcome was not run ("missing")."""
        unknown = sorted(set(outcomes) - set(self.ids))
        if unknown:
            raise CheckSetError(f"outcome for {unknown[0]!r}, which is not in check set {self.name!r}")
        return CheckRun(self, {i: outcomes.get(i, "missing") for i in self.ids})

    def read(self, evidence: Evidence) -> CheckRun:
        """A run of this set from a validator's evidence; results outside the set are ignored."""
        ids = set(self.ids)
        return self.record({r.nodeid: r.outcome for r in evidence.results if r.nodeid in ids})

    @classmethod
    def from_tests(
        cls,
        name: str,
        tests: Mapping[str, str | bytes],
        ids: Iterable[str],
        severity: Mapping[str, Severity] | None = None,
        default: Severity = "medium",
    ) -> CheckSet:
        """A check set over pytest node ids, each versioned by the digest of its own source.

        `tests` maps file path -> text (an acceptance suite's files). A test function's
        version is the digest of its source segment, so editing one test changes only that
        check's version; if the function cannot be found the whole file's digest is used.
        """
        sev = dict(severity or {})
        checks = []
        for nodeid in ids:
            path, _, rest = nodeid.partition("::")
            if path not in tests:
                raise CheckSetError(f"check {nodeid!r}: file {path!r} is not among the tests {sorted(tests)}")
            checks.append(Check(nodeid, _version(tests[path], rest), sev.get(nodeid, default)))
        return cls(name, tuple(checks))


def _version(text: str | bytes, qualname: str) -> str:
    """Digest of the source of `Class::func` / `func` (parametrisation stripped) in `text`."""
    if isinstance(text, bytes):  # a binary fixture is no test: it is versioned whole
        return digest(text)
    parts = qualname.split("[", 1)[0].split("::")
    try:
        body: list[ast.stmt] = ast.parse(text).body
    except SyntaxError:
        return digest(text)
    node: ast.stmt | None = None
    for part in parts:
        node = next(
            (
                n
                for n in body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part
            ),
            None,
        )
        if node is None:
            return digest(text)
        body = node.body if isinstance(node, ast.ClassDef) else []
    segment = ast.get_source_segment(text, node) if node is not None else None
    return digest(segment or text)


@dataclass(frozen=True)
class CheckRun:
    """The outcome of every check of one check set in one run."""

    checkset: CheckSet
    outcomes: Mapping[str, Outcome]

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcomes", MappingProxyType(dict(self.outcomes)))

    @property
    def failures(self) -> tuple[str, ...]:
        return tuple(i for i, o in self.outcomes.items() if o in _FAILING)


@dataclass(frozen=True)
class CheckComparison:
    """One check across two runs."""

    check: str
    severity: Severity
    before: Outcome
    after: Outcome
    status: Status


@dataclass(frozen=True)
class RoundReport:
    """Per-check statuses between two runs of one check set, and ΔF."""

    checkset: str
    entries: tuple[CheckComparison, ...]
    failures_before: int
    failures_after: int  # counts not-run and changed checks that were failing before
    _by_status: Mapping[str, tuple[CheckComparison, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        groups: dict[str, list[CheckComparison]] = {}
        for e in self.entries:
            groups.setdefault(e.status, []).append(e)
        object.__setattr__(self, "_by_status", MappingProxyType({k: tuple(v) for k, v in groups.items()}))

    @property
    def delta_f(self) -> int:
        """|failures before| - |failures after|: positive is progress."""
        return self.failures_before - self.failures_after

    def status(self, status: Status) -> tuple[CheckComparison, ...]:
        return self._by_status.get(status, ())

    @property
    def resolved(self) -> tuple[CheckComparison, ...]:
        return self.status("resolved")

    @property
    def new(self) -> tuple[CheckComparison, ...]:
        return self.status("new")

    @property
    def not_run(self) -> tuple[CheckComparison, ...]:
        return self.status("not run")

    @property
    def changed(self) -> tuple[CheckComparison, ...]:
        return self.status("changed")

    @property
    def still_failing(self) -> tuple[CheckComparison, ...]:
        return self.status("still failing")

    def worst_new(self) -> Severity | None:
        """The most severe new failure, if any."""
        sev = {e.severity for e in self.new}
        return next((s for s in SEVERITIES if s in sev), None)

    def frame(self) -> pl.DataFrame:
        """One row per check that is not simply passing: check, severity, before, after, status."""
        import polars as pl

        rows = [e for e in self.entries if e.status != "passing"]
        order = {s: i for i, s in enumerate(SEVERITIES)}
        rows.sort(key=lambda e: (e.status, order[e.severity], e.check))
        return pl.DataFrame(
            {
                "check": [e.check for e in rows],
                "severity": [e.severity for e in rows],
                "before": [e.before for e in rows],
                "after": [e.after for e in rows],
                "status": [e.status for e in rows],
            },
            schema={"check": pl.Utf8, "severity": pl.Utf8, "before": pl.Utf8, "after": pl.Utf8, "status": pl.Utf8},
        )

    def __str__(self) -> str:
        def names(entries: tuple[CheckComparison, ...]) -> str:
            return ", ".join(f"{e.check} [{e.severity}]" for e in entries) or "none"

        return (
            f"check set {self.checkset}: ΔF = {self.failures_before} - {self.failures_after} = {self.delta_f:+d}\n"
            f"  resolved: {names(self.resolved)}\n  new: {names(self.new)}\n"
            f"  not run: {names(self.not_run)}\n  changed: {names(self.changed)}"
        )


def compare(before: CheckRun, after: CheckRun) -> RoundReport:
    """The round report from `before` to `after`; both must be runs of the same check set.

    A check only in `before` is "not run" after; a check only in `after` is "new" if it
    fails (it is a failure now), else "passing". See the module docstring for the rules.
    """
    if before.checkset.name != after.checkset.name:
        raise ValidatorMismatch(
            f"ΔF is only defined within one check set: before ran {before.checkset.name!r}, "
            f"after ran {after.checkset.name!r}"
        )
    old = {c.id: c for c in before.checkset.checks}
    new = {c.id: c for c in after.checkset.checks}
    entries = []
    failing_before = failing_after = 0
    for cid in [*old, *(i for i in new if i not in old)]:
        b = before.outcomes.get(cid, "missing")
        a = after.outcomes.get(cid, "missing")
        check = new.get(cid) or old[cid]
        changed = cid in old and cid in new and old[cid].version != new[cid].version
        was, now = b in _FAILING, a in _FAILING
        status: Status
        if changed:
            status = "changed"
        elif a in _NOT_RUN:
            status = "not run"
        elif was:
            status = "resolved" if a == "passed" else "still failing"
        else:
            status = "new" if now else "passing"
        failing_before += was
        # Not verified passing on the same check version means it is still a failure.
        failing_after += now or (was and (changed or a in _NOT_RUN))
        entries.append(CheckComparison(cid, check.severity, b, a, status))
    return RoundReport(before.checkset.name, tuple(entries), failing_before, failing_after)
