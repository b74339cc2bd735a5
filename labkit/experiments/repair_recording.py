"""The repair runs notebooks/diminishing_returns opens with, recorded once and read back.

At the page's default setting (`DEFAULT`: the simulated repairer's sliders, 4 rounds) every
repair case goes through `repair.run`, every candidate validated by a fresh real pytest run
(about 150 of them: half a minute on a 2-core machine, on every first open of a fresh clone).
With it are recorded the oscillating case's run (`OSCILLATION`: a repairer that never finds the
fix) and the known-flaky original's stability re-check (`repair.stability`). All of it is made by

    python -m labkit.experiments.repair_recording --out data/diminishing_returns/repair_run.sqlite

(the runs' ledger, and a .json beside it: the command, each run's setting, each case's
fingerprint, the Python and pytest versions, the re-check's rows). The page shows them on open,
labelled as recorded; any other setting, or a case changed since, is run when chosen. The
repairer's draws are seeded per (seed, case, round) and no run-level rule stops the runs
(rules=()), so the events of a subset of the cases are the full run's events for them:
tests/test_repair_recording.py re-runs such a slice with fresh pytest runs and compares every
event with the recording, timings aside. The known-flaky case is left out of that slice: its
verdicts, and so the repairer's choices on it, vary from run to run.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.paths import DATA
from labkit.core.types import digest
from labkit.core.versions import package_versions
from labkit.experiments import repair
from labkit.loop.engine import accounting
from labkit.loop.engine.stopping import RoundStats
from labkit.record import outcomes
from labkit.record.events import Kind
from labkit.record.ledger import Ledger
from labkit.record.outcomes import Decided

__all__ = ["DEFAULT", "DEPENDS_ON", "OSCILLATION", "OSCILLATION_RUN_ID", "RECORD", "RECORDED_NOTE", "RUN_ID",
           "RecordedRepairRun", "Setting", "fingerprint", "main", "record", "recorded", "recorded_stability"]  # fmt: skip

RECORD = DATA / "diminishing_returns" / "repair_run.sqlite"
RUN_ID = "diminishing_returns/default"
OSCILLATION_RUN_ID = "diminishing_returns/oscillation"  # the oscillating case, a repairer that never finds the fix
DEPENDS_ON = ("pytest",)  # every verdict; the repairer's draws are Python's own (random.Random, str seeds)
RECORDED_NOTE = "recorded run of the default setting"


@dataclass(frozen=True, kw_only=True)
class Setting:
    """The simulated repairer's parameters and the rounds: what the page's sliders choose."""

    p_fix: float = 0.6
    fix_decay: float = 0.7
    p_break: float = 0.03
    break_growth: float = 2.0
    rounds: int = 4
    seed: int = 0

    def repairer(self) -> repair.SimulatedRepairer:
        return repair.SimulatedRepairer(
            fix=self.p_fix,
            fix_decay=self.fix_decay,
            breaks=self.p_break,
            break_growth=self.break_growth,
            seed=int(self.seed),
        )

    def rounded(self) -> Setting:
        """Without a slider's float noise (0.6000000000000001 is 0.6)."""

        def r(x: float) -> float:
            return round(float(x), 6)

        return Setting(
            p_fix=r(self.p_fix),
            fix_decay=r(self.fix_decay),
            p_break=r(self.p_break),
            break_growth=r(self.break_growth),
            rounds=int(self.rounds),
            seed=int(self.seed),
        )


DEFAULT = Setting()
OSCILLATION = Setting(p_fix=0.0, rounds=3)


def fingerprint(case: repair.RepairCase) -> str:
    """A digest of everything of a case the recorded runs read: its module, both suites, every patch,
    and which of its tests are known flaky and which patches oscillate."""
    parts = [case.original.digest, case.visible.digest, case.hidden.digest, repr(case.flaky), repr(case.oscillates)]
    parts += [f"{p.name}:{p.kind}:{p.base}:{p.effect}:{p.patch.diff}" for p in case.patches]
    return digest("\n".join(parts))


@dataclass(frozen=True, kw_only=True)
class RecordedRepairRun:
    """The recorded run, read back: its numbers recomputed from its ledger's events exactly as a
    live `repair.RepairRun`'s are (`labkit.loop.engine.accounting`)."""

    run_id: str
    cases: tuple[repair.RepairCase, ...]
    rounds_run: int
    simulated: bool
    strategy: str
    frame: pl.DataFrame = field(repr=False)  # the ledger's events of `run_id`
    meta: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the .json beside the ledger
    decided: tuple[Decided, ...] = field(default=(), repr=False)  # the run's decisions (record.outcomes)

    def events(self) -> pl.DataFrame:
        return self.frame

    def decisions(self, case: str | None = None) -> tuple[Decided, ...]:
        """Every decision of the run (of `case`, if given), in ledger order, as `EngineRun.decisions`."""
        return tuple(d for d in self.decided if case is None or d.case == case)

    def correctness(self, field: str = "correct") -> pl.DataFrame:
        return accounting.from_ledger(self.frame, field=field)

    def per_round(self, **kw: Any) -> pl.DataFrame:
        return accounting.per_round(self.correctness(), **kw)

    def per_slice(self, by: str = "slice", **kw: Any) -> pl.DataFrame:
        return accounting.per_slice(self.correctness(), by, **kw)

    def round_stats(self) -> tuple[RoundStats, ...]:
        return accounting.round_stats(self.correctness())

    def moves(self, round: int) -> pl.DataFrame:
        return repair.moves(self, self.cases, round)

    def case_stop(self, case: str) -> tuple[str, str] | None:
        """(rule, reason) of the rule that stopped `case`, from its stop event; None when none did."""
        for raw in self.frame.filter(pl.col("kind") == Kind.STOP)["detail"]:
            d = json.loads(raw)
            if d.get("case") == case:
                return str(d["rule"]), str(d["reason"])
        return None


def _meta_path(path: Path) -> Path:
    return path.with_suffix(".json")


def recorded(
    setting: Setting, cases: Sequence[repair.RepairCase], run_id: str = RUN_ID, path: Path = RECORD
) -> RecordedRepairRun | None:
    """The recorded run `run_id` when it was recorded at exactly `setting` on exactly these cases
    (same fingerprints, same order); None otherwise (or when nothing is recorded): run it now."""
    meta_file = _meta_path(path)
    if not (path.is_file() and meta_file.is_file()):
        return None
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    run = meta["runs"].get(run_id)
    if run is None or Setting(**run["setting"]).rounded() != setting.rounded():
        return None
    if list(run["cases"].items()) != [(c.id, fingerprint(c)) for c in cases]:
        return None
    with Ledger(path, read_only=True) as ledger:
        frame, decided = ledger.frame(run_id), outcomes.decisions(ledger.events(run_id))
    return RecordedRepairRun(
        run_id=run_id,
        cases=tuple(cases),
        rounds_run=run["rounds_run"],
        simulated=run["simulated"],
        strategy=run["strategy"],
        frame=frame,
        meta=meta,
        decided=decided,
    )


def recorded_stability(cases: Sequence[repair.RepairCase], path: Path = RECORD) -> list[dict[str, object]] | None:
    """The recorded re-check of the known-flaky originals (`repair.stability`, fresh pytest runs),
    while those cases are as recorded; None otherwise."""
    meta_file = _meta_path(path)
    if not meta_file.is_file():
        return None
    stability = json.loads(meta_file.read_text(encoding="utf-8")).get("stability", {})
    if stability.get("cases") != {c.id: fingerprint(c) for c in cases if c.flaky}:
        return None
    return list(stability["rows"])


def record(out: Path, cases: Sequence[repair.RepairCase] | None = None, command: str = "") -> dict[str, Any]:
    """Run `DEFAULT` on `cases` (default: every repair case), and `OSCILLATION` on the oscillating
    one, each with a fresh checker (every verdict a new pytest run), into the ledger `out`; re-check
    the known-flaky originals (`repair.stability`); write the .json beside the ledger and return it."""
    cases = tuple(cases if cases is not None else repair.load_cases())
    for stale in (out, out.with_name(out.name + "-wal"), out.with_name(out.name + "-shm")):
        stale.unlink(missing_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    oscillating = tuple(c for c in cases if c.oscillates)[:1]
    runs = {}
    with Ledger(out) as ledger:
        for run_id, setting, on in ((RUN_ID, DEFAULT, cases), (OSCILLATION_RUN_ID, OSCILLATION, oscillating)):
            checker, t0 = repair.Checker(), time.perf_counter()
            run = repair.run(
                on, setting.repairer(), rounds=setting.rounds, checker=checker, ledger=ledger, run_id=run_id, rules=()
            )
            runs[run_id] = {
                "setting": asdict(setting), "cases": {c.id: fingerprint(c) for c in on},
                "rounds_run": run.rounds_run, "simulated": run.simulated, "strategy": run.strategy,
                "pytest_runs": checker.runs, "seconds": round(time.perf_counter() - t0, 1),
            }  # fmt: skip
    flaky = [c for c in cases if c.flaky]  # the page's "is the validator stable?" re-check, as on open
    meta = {
        "command": command or f"python -m labkit.experiments.repair_recording --out {out}",
        "versions": package_versions(DEPENDS_ON),
        "python": platform.python_version(),
        "runs": runs,
        "stability": {
            "cases": {c.id: fingerprint(c) for c in flaky},
            "rows": repair.stability(repair.Checker(), flaky),
        },
    }
    _meta_path(out).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m labkit.experiments.repair_recording",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, required=True, help="the ledger (.sqlite); its .json goes beside it")
    args = list(sys.argv[1:] if argv is None else argv)
    out = p.parse_args(args).out
    meta = record(out, command="python -m labkit.experiments.repair_recording " + " ".join(args))
    print(
        json.dumps(
            {run_id: {k: r[k] for k in ("rounds_run", "pytest_runs", "seconds")} for run_id, r in meta["runs"].items()}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
