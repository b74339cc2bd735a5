"""The one verdict cache, and the validator behind it.

A verdict is a pure function of (candidate content, suite, validator settings — limits,
interpreter, sandbox mode —, the Python and pytest that ran it), so it is cached under exactly
that key: candidate digest, suite digest, validator id, and the interpreter's Python and pytest
versions. A stored verdict keeps how its run was contained (`Evidence.isolation`). Only clean verdicts
are stored (no alarm, no timeout). A cache may live in a JSON file; a file that cannot be
read starts empty rather than being trusted. Re-runs that probe flakiness bypass the cache
on purpose (`rerun`, the one flakiness re-check: `Checker.recheck` and the engine's
`recheck=` both go through it).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from labkit.core.types import Candidate, Evidence, TestResult, Verdict, digest

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite
    from labkit.grading.validator import Validator

__all__ = [
    "Checked", "Checker", "VerdictCache", "build_checker", "rerun", "runtime", "signature", "verdict_from_json",
    "verdict_json",
]  # fmt: skip

T = TypeVar("T")


@functools.cache
def runtime(python: str) -> str:
    """'<python version>/<pytest version>' of the interpreter at `python` (asked once per path)."""
    if python == sys.executable:
        import platform

        import pytest

        return f"{platform.python_version()}/{pytest.__version__}"
    code = "import platform, pytest; print(platform.python_version() + '/' + pytest.__version__)"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


class VerdictCache:
    """Verdicts keyed by candidate, suite, validator id and the Python/pytest versions."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._d: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.is_file():
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                self._d = {k: verdict_from_json(v) for k, v in raw.items()}
            except (OSError, ValueError, KeyError, TypeError):
                self._d = {}

    @staticmethod
    def key(candidate: Candidate, suite: AcceptanceSuite, validator: Validator) -> str:
        env = digest(runtime(validator.python))
        return f"{candidate.digest}:{suite.digest}:{validator.id}:{env}"

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            return self._d.get(key)

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.quarantined or verdict.evidence.timed_out:
            return
        with self._lock:
            self._d[key] = verdict

    def __len__(self) -> int:
        with self._lock:
            return len(self._d)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._d

    def save(self) -> Path | None:
        if self.path is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            data = {k: verdict_json(v) for k, v in self._d.items()}
        # a temp file of this process's own: two processes saving at once must not share one
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(self.path)
        return self.path


def verdict_json(v: Verdict) -> dict[str, Any]:
    """A verdict as plain JSON (for the cache file and the ledger's verify events)."""
    e = v.evidence
    return {
        "evidence": {
            "candidate": e.candidate,
            "suite": e.suite,
            "validator": e.validator,
            "results": [[r.nodeid, r.outcome, r.message, r.seconds] for r in e.results],
            "exit_code": e.exit_code,
            "wall_seconds": e.wall_seconds,
            "alarms": list(e.alarms),
            "stderr_tail": e.stderr_tail,
            "timed_out": e.timed_out,
            "isolation": e.isolation,
            "unchecked": list(e.unchecked),
        },
        "buckets": [list(v.fail_to_pass), list(v.fail_to_fail), list(v.pass_to_pass), list(v.pass_to_fail)],
    }


def verdict_from_json(d: Mapping[str, Any]) -> Verdict:
    e = d["evidence"]
    evidence = Evidence(
        candidate=e["candidate"],
        suite=e["suite"],
        validator=e["validator"],
        results=tuple(TestResult(n, o, m, s) for n, o, m, s in e["results"]),
        exit_code=e["exit_code"],
        wall_seconds=e["wall_seconds"],
        alarms=tuple(e["alarms"]),
        stderr_tail=e["stderr_tail"],
        timed_out=e["timed_out"],
        isolation=e.get("isolation", ""),
        unchecked=tuple(e.get("unchecked", ())),
    )
    f2p, f2f, p2p, p2f = (tuple(b) for b in d["buckets"])
    return Verdict(evidence, f2p, f2f, p2p, p2f)


@dataclass(frozen=True)
class Checked:
    """A verdict and whether it came from the cache (a cached verdict costs no time now)."""

    verdict: Verdict
    cached: bool

    @property
    def seconds(self) -> float:
        return 0.0 if self.cached else self.verdict.evidence.wall_seconds


class Checker:
    """A validator behind a verdict cache. Thread-safe; `runs` counts real pytest runs."""

    def __init__(self, validator: Validator | None = None, cache: VerdictCache | None = None) -> None:
        if validator is None:
            from labkit.grading.validator import Validator

            validator = Validator()
        self.validator = validator
        self.cache = cache if cache is not None else VerdictCache()
        self.runs = 0
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self.validator.id

    def key(self, candidate: Candidate, suite: AcceptanceSuite) -> str:
        return VerdictCache.key(candidate, suite, self.validator)

    def lookup(self, candidate: Candidate, suite: AcceptanceSuite) -> Verdict | None:
        """The cached verdict, or None: a read, never a validation (a timeout or an alarm is never cached)."""
        return self.cache.get(self.key(candidate, suite))

    def check(self, candidate: Candidate, suite: AcceptanceSuite, *, use_cache: bool = True) -> Checked:
        key = self.key(candidate, suite)
        if use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return Checked(hit, True)
        verdict = self.validator.run(candidate, suite)
        with self._lock:
            self.runs += 1
        self.cache.put(key, verdict)
        return Checked(verdict, False)

    def recheck(
        self, candidate: Candidate, suite: AcceptanceSuite, k: int, *, until_disagreement: bool = True
    ) -> list[Verdict]:
        """The recorded verdict (cached or fresh) and `k` uncached re-runs of the same candidate.

        Stops at the first re-run whose outcomes differ, unless `until_disagreement` is False.
        """
        first = self.check(candidate, suite).verdict
        again = lambda: self.check(candidate, suite, use_cache=False).verdict  # noqa: E731
        return rerun(first, again, k, lambda v: v.evidence, until_disagreement=until_disagreement)

    def ready(self, jobs: Sequence[tuple[Candidate, AcceptanceSuite]]) -> bool:
        """True when every (candidate, suite) is cached (validating them is instant)."""
        return all(self.key(c, s) in self.cache for c, s in jobs)

    def warm(
        self,
        jobs: Sequence[tuple[Candidate, AcceptanceSuite]],
        workers: int = 2,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Validate every (candidate, suite) not yet cached; returns the new pytest runs."""
        before, done = self.runs, 0
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for _ in pool.map(lambda job: self.check(*job), jobs):
                done += 1
                if on_progress is not None:
                    on_progress(done, len(jobs))
        return self.runs - before


def build_checker(name: str, build: Path | None = None) -> Checker:
    """A checker whose verdicts persist in `<build>/<name>_verdicts.json` (default: build/ beside
    the checkout's data/, or $LABKIT_BUILD): a notebook's first open validates for real, later
    opens reuse the verdicts (same key: candidate, suite, validator, Python, pytest). Call
    `cache.save()` after."""
    from labkit.core.paths import CHECKOUT

    build = build or Path(os.environ.get("LABKIT_BUILD") or CHECKOUT.parent / "build")
    return Checker(cache=VerdictCache(build / f"{name}_verdicts.json"))


def signature(e: Evidence) -> str:
    """A digest of what a run observed: each test's outcome, the alarms, a timeout. Two runs of one
    candidate under one suite with different signatures disagree: the validator is unstable."""
    pairs = sorted((r.nodeid, r.outcome) for r in e.results)
    return digest(repr((pairs, e.alarms, ("timed out",) if e.timed_out else ())))


def rerun(
    first: T, again: Callable[[], T], k: int, evidence: Callable[[T], Evidence], *, until_disagreement: bool = True
) -> list[T]:
    """The flakiness re-check: `first` and up to `k` uncached re-runs (`again()`) of the same
    candidate, stopping at the first whose `signature` differs from `first`'s (unless
    `until_disagreement` is False). `evidence` reads a run's Evidence from whatever `again`
    returns (a verdict, or the engine's paid check)."""
    runs, sig = [first], signature(evidence(first))
    for _ in range(k):
        runs.append(again())
        if until_disagreement and signature(evidence(runs[-1])) != sig:
            break
    return runs
