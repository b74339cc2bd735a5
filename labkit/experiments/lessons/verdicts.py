"""The lessons page's dev-check verdicts, measured once and recorded, so a first open runs no
dev check that a recording already answers (seed 002: the page's runs are real; this is where
their verdicts are kept).

Every section of the page that validates on open (the coverage counterfactual, the test-change
walkthrough, fix the plan vs fix the state) validates its candidates through one verdict cache
(`grading.verdicts.Checker`). `write()` runs those sections with an empty cache, real pytest for
every candidate, and stores each verdict with its candidate and suite digests,
`data/lessons/verdicts.json`. `checker()` is the page's cache: the verdicts kept in build/ by
an earlier open, plus the recorded ones, which it takes only when they were made by the same
validator settings (limits, sandbox mode, protocol) under the same Python minor and pytest
versions (`why_not`); otherwise the page validates for real, as before. (The layer metrics,
whose searches confirm on the sealed final set, which is never cached, are read from their own
recording: `layer_figures.recorded`.)

tests/test_lessons.py validates every recorded candidate again and asserts the same outcomes,
and that a page opened on the recording shows exactly what a fresh run shows.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from labkit.core.paths import data_root, read_recording
from labkit.core.types import digest
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker, build_checker, runtime, verdict_from_json

__all__ = ["COMMAND", "DEPENDS_ON", "checker", "measure", "outcomes", "record", "settings", "why_not", "write"]

COMMAND = "python -m labkit.experiments.lessons.verdicts --write"
DEPENDS_ON = ("pytest",)  # the validator runs pytest (the Python version is stored beside it, in "runtime")
_PLACEHOLDER = "<the interpreter whose runtime is recorded>"


def _path() -> Path:
    return data_root() / "lessons" / "verdicts.json"


def settings(validator: Validator) -> str:
    """The validator's id with its interpreter's path left out (a clone elsewhere has another path;
    the interpreter itself is compared by its Python and pytest versions, `runtime`)."""
    return Validator(validator.limits, _PLACEHOLDER, validator.require_cross_check).id


def measure(check: Checker | None = None) -> Checker:
    """Run every section of the page that validates, through `check` (a fresh one by default)."""
    from labkit.experiments.lessons import coverage, free_shipping, plan_state
    from labkit.record.ledger import Ledger

    check = check if check is not None else Checker()
    coverage.counterfactual(check)
    free_shipping.walkthrough(check)
    plan_state.story(check, Ledger())
    return check


def outcomes(entries: dict[str, Any]) -> dict[str, Any]:
    """What a recorded verdict decides, per "candidate:suite": each test's outcome, the buckets,
    alarms, timeout and exit code (not its seconds, messages or stderr, which differ run to run)."""
    out = {}
    for key, v in sorted(entries.items()):
        e = v["evidence"]
        out[key] = {"results": sorted([r[0], r[1]] for r in e["results"]), "buckets": v["buckets"],
                    "alarms": e["alarms"], "timed_out": e["timed_out"], "exit_code": e["exit_code"]}  # fmt: skip
    return out


def _entries(check: Checker) -> dict[str, Any]:
    """The cache's verdicts keyed by "candidate digest:suite digest" (validator and runtime are
    stored once, beside them). The cache offers no listing; its file does, so it is saved to a
    temporary one."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = check.cache
        kept, cache.path = cache.path, Path(tmp) / "all.json"
        try:
            cache.save()
            stored = json.loads(cache.path.read_text(encoding="utf-8"))
        finally:
            cache.path = kept
    return {":".join(k.split(":")[:2]): v for k, v in stored.items()}


def write() -> Path:
    """Validate every candidate of the page for real and record the verdicts."""
    from labkit.core.versions import package_versions

    check = measure()
    data = {"label": "recorded real validator runs: every dev check of the lessons page", "command": COMMAND,
            "runtime": runtime(check.validator.python), "settings": settings(check.validator),
            "verdicts": _entries(check), "versions": package_versions(DEPENDS_ON)}  # fmt: skip
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def record() -> dict[str, Any]:
    """The recording as stored (label, command, runtime, settings, verdicts, package versions)."""
    return read_recording(_path(), COMMAND)


def _minor(env: str) -> tuple[str, str]:
    """(Python major.minor, pytest version) of a runtime string '<python version>/<pytest version>'."""
    python, _, pytest = env.partition("/")
    return ".".join(python.split(".")[:2]), pytest


def why_not(check: Checker) -> str | None:
    """None when the recording applies to `check`'s validator and interpreter, else why not: other
    validator settings (limits, sandbox mode, protocol), or another Python minor or pytest version
    (a patch release of Python is taken as the same interpreter; the recording test, run on it,
    asserts the same outcomes)."""
    rec = record()
    if rec["settings"] != settings(check.validator):
        return "the recording was made under other validator settings (limits, sandbox mode or protocol)"
    now = runtime(check.validator.python)
    if _minor(rec["runtime"]) != _minor(now):
        return f"the recording was made with Python/pytest {rec['runtime']}, this interpreter is {now}"
    return None


def checker(build: Path | None = None) -> Checker:
    """The page's verdict cache: build/'s (`build_checker("lessons")`) plus the recorded verdicts
    when they apply to this validator and interpreter (`why_not`; else none: the page validates for real)."""
    check = build_checker("lessons", build)
    if why_not(check) is not None:
        return check
    env = digest(runtime(check.validator.python))
    for pair, v in record()["verdicts"].items():
        key = f"{pair}:{check.id}:{env}"  # grading.verdicts.VerdictCache.key's layout
        if key not in check.cache:
            check.cache.put(key, verdict_from_json(v))
    return check


if __name__ == "__main__":
    import sys

    if "--write" not in sys.argv[1:]:
        raise SystemExit(f"usage: {COMMAND}")
    print(write())
