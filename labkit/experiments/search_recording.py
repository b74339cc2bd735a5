"""The budget sweep notebooks/search_budget opens with, recorded once and read back.

The page shows the real search on the api_change case at every total budget from 10 to 22
cost units, each with 2 units reserved for confirmation: 13 searches, each paying for its
generations, dev checks and sealed confirmation through its own budget. Run live, every open
of a fresh clone validated each route and ran nine sealed confirmations (those are never cached).
The searches are recorded once by

    python -m labkit.experiments.search_recording --out data/search_budget/sweep.sqlite

which writes one ledger (run `sweep-<total>` per total) and a .json beside it: the command, the
totals and reserve, the case's fingerprint (every file of data/api_change), where its states
live, and the Python and pytest versions. The page reads each search back from the recorded
events (`labkit.loop.search.readback`, the same reader as for a live search) and says that it
is recorded. Without a recording of the case as it is now, the page runs the searches
instead. A recording is written beside its place and moved in only when complete.
tests/test_search_replay.py runs three totals live and compares every event with the
recording, timings aside.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.core.errors import SearchError
from labkit.core.paths import DATA
from labkit.core.types import Verdict
from labkit.core.versions import package_versions
from labkit.grading.sealed import SearchCase, load_search_case
from labkit.grading.verdicts import Checker, build_checker
from labkit.loop.search.readback import read_search
from labkit.loop.search.recorded import Sweep, steps, sweep
from labkit.loop.search.search_case import environment_of, search
from labkit.record.ledger import Ledger

__all__ = ["CASE", "DEPENDS_ON", "LIVE_NOTE", "RECORD", "RECORDED_NOTE", "RESERVE", "TOTALS", "OpenedSweep",
           "fingerprint", "main", "open_sweep", "record", "recorded", "run_id"]  # fmt: skip

RECORD = DATA / "search_budget" / "sweep.sqlite"
CASE = "api_change"
TOTALS = tuple(float(t) for t in range(10, 23))
RESERVE = 2.0
DEPENDS_ON = ("pytest",)  # every dev check and every sealed confirmation is a pytest run
RECORDED_NOTE = "recorded run: scripted routes, real dev checks and sealed confirmations"
LIVE_NOTE = "run now: no recording of the case as it is now"


def run_id(total: float) -> str:
    return f"sweep-{total:g}"


def fingerprint(case: SearchCase) -> str:
    """A digest of every file of the case's folder (its start, tests, sealed final set, patches,
    case.json), leaving out what running its tests by hand leaves behind (__pycache__, .pytest_cache)."""
    root = case.case.root

    def material(p: Path) -> bool:
        return p.is_file() and not any(
            part == "__pycache__" or part.startswith(".") for part in p.relative_to(root).parts
        )

    files = sorted(p for p in root.rglob("*") if material(p))
    lines = [f"{p.relative_to(root).as_posix()} {hashlib.sha256(p.read_bytes()).hexdigest()}" for p in files]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _meta_path(path: Path) -> Path:
    return path.with_suffix(".json")


def recorded(case: SearchCase, path: Path = RECORD) -> list[Sweep] | None:
    """Every recorded search, read back from the recording's ledger (kept open: the evidence card
    reads it), while the case is as recorded; None otherwise (or when nothing is recorded).
    A recording that cannot be read raises SearchError naming its file and what is wrong."""
    meta_file = _meta_path(path)
    if not (path.is_file() and meta_file.is_file()):
        return None
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("case") != {case.case.name: fingerprint(case)}:
            return None
        env, reserve = str(meta["environment"]), float(meta["reserve"])
        totals = [float(t) for t in meta["totals"]]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SearchError(f"{meta_file}: not a search recording ({type(e).__name__}: {e}); record it again") from e
    ledger = Ledger(path, read_only=True)
    out = []
    for total in totals:
        try:
            back = read_search(ledger, run_id(total), case.checks, env)
        except ValueError as e:
            raise SearchError(f"{path}: the recording lists total {total:g} but its ledger says: {e}") from e
        out.append(Sweep(total, reserve, back.result, tuple(steps(ledger, run_id(total), case.checks, env)), ledger))
    return out


@dataclass(frozen=True)
class OpenedSweep:
    """What the page opens on: a search per total, the start's verdict, and where they came from."""

    runs: dict[float, Sweep]
    recorded: bool
    note: str  # RECORDED_NOTE or LIVE_NOTE, shown on the page

    @property
    def totals(self) -> list[float]:
        return list(self.runs)

    @property
    def baseline(self) -> Verdict:
        """The start's dev-check verdict: the task's input, the same in every search."""
        return next(iter(self.runs.values())).result.baseline


def open_sweep(case: SearchCase, path: Path = RECORD, checker: Checker | None = None) -> OpenedSweep:
    """The recording when the case is as recorded; else every total searched now, its dev-check
    verdicts kept in build/ (grading.verdicts.build_checker) for the next open."""
    runs = recorded(case, path)
    if runs is not None:
        return OpenedSweep({s.total: s for s in runs}, True, RECORDED_NOTE)
    checker = checker or build_checker("search_budget")
    baseline = checker.check(case.case.start, case.suite).verdict
    live = {s.total: s for s in sweep(case, checker, baseline, TOTALS, reserve=RESERVE)}
    checker.cache.save()
    return OpenedSweep(live, False, LIVE_NOTE)


def record(out: Path, command: str = "") -> dict[str, Any]:
    """Search the case at every total of TOTALS, one after another with one fresh checker (every
    dev check and confirmation a real pytest run), into the ledger `out`; write its .json. Both are
    written beside `out` first and moved into place only when every search has finished, so a
    failed or interrupted recording leaves the previous one as it was."""
    case = load_search_case(CASE)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.stem + ".partial" + out.suffix)
    for stale in _with_sidecars(partial):
        stale.unlink(missing_ok=True)
    checker = Checker()
    baseline = checker.check(case.case.start, case.suite).verdict
    outcomes = {}
    with Ledger(partial) as ledger:
        for total in TOTALS:
            result = search(case, checker, baseline, total=total, reserve=RESERVE, ledger=ledger, run_id=run_id(total))
            outcomes[f"{total:g}"] = f"{result.status} ({result.reason})"
    meta = {
        "command": command or f"python -m labkit.experiments.search_recording --out {out}",
        "versions": package_versions(DEPENDS_ON),
        "python": platform.python_version(),
        "case": {case.case.name: fingerprint(case)},
        "environment": environment_of(case, checker),
        "totals": [f"{t:g}" for t in TOTALS],
        "reserve": RESERVE,
        "pytest_runs": checker.runs,
        "outcomes": outcomes,
    }
    _meta_path(partial).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    for stale in _with_sidecars(out)[1:]:  # the old ledger's WAL files would pair with the new one
        stale.unlink(missing_ok=True)
    os.replace(partial, out)
    os.replace(_meta_path(partial), _meta_path(out))
    return meta


def _with_sidecars(path: Path) -> list[Path]:
    """A SQLite file and the WAL files SQLite may keep beside it."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m labkit.experiments.search_recording",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, required=True, help="the ledger (.sqlite); its .json goes beside it")
    args = list(sys.argv[1:] if argv is None else argv)
    meta = record(p.parse_args(args).out, command="python -m labkit.experiments.search_recording " + " ".join(args))
    print(json.dumps({k: meta[k] for k in ("pytest_runs", "outcomes")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
