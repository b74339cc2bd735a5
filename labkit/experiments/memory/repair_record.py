"""Reflexion on the repair cases, recorded: every arm of `reflexion.ARMS` (no memory, the buffer,
a sparse reward, an entrenched false belief with and without the revision rule, a 60-token
budget) on the first 12 repair cases, 24 seeds of the SIMULATED actor, 5 trials each.

Every pick is a real patch validated by real pytest runs, so the run takes minutes; it is made
once by

    python -m labkit.experiments.memory.repair_record --out data/memory/reflexion_repair.json

and holds every (arm, seed, case, trial, correct) row and the per-arm success intervals
(`recording.section`). The actor's draws are seeded per (seed, case, trial) and every memory is
per case, so the rows of a subset of cases are the rows of the full run for those cases:
tests/test_memory_reflexion.py re-measures such a slice in-process, compares it exactly, and
asserts the chapter's directions on the recorded rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from labkit.core.paths import DATA, read_recording
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory.recording import section
from labkit.grading.verdicts import Checker

__all__ = ["DEPENDS_ON", "RECORD", "Setting", "load", "main", "measure"]

RECORD = DATA / "memory" / "reflexion_repair.json"
# the success intervals (numpy), the rows (polars), every verdict (pytest)
DEPENDS_ON = ("numpy", "polars", "pytest")


@dataclass(frozen=True)
class Setting:
    """The first `cases` repair cases (`reflexion.cases()`), `seeds` of the actor, `trials` each."""

    cases: int = 12
    seeds: tuple[int, ...] = tuple(range(24))
    trials: int = 5
    p_fix: float = 0.3


def measure(setting: Setting = Setting(), checker: Checker | None = None) -> dict[str, Any]:
    """Every arm of `reflexion.ARMS` in `setting`, as recorded (`recording.section`)."""
    cs = rx.cases()[: setting.cases]
    result = rx.compare(
        rx.ARMS, seeds=setting.seeds, trials=setting.trials, checker=checker, p_fix=setting.p_fix, among=cs
    )
    return {
        "actor": "SIMULATED (labkit.experiments.memory.reflexion_repair.SimActor); verdicts: real pytest",
        "setting": {**asdict(setting), "seeds": list(setting.seeds)},
        **section(rx.ARMS, [c.id for c in cs], result.frame, setting.trials, ()),
    }


def load(path: Path = RECORD) -> dict[str, Any]:
    """The recording (a missing one names the command that makes it)."""
    return read_recording(
        path,
        f"python -m labkit.experiments.memory.repair_record --out {path}",
        "data/memory/README.md",
    )


def main(argv: Sequence[str] | None = None) -> int:
    from labkit.experiments.memory.loops import record_main

    return record_main(
        "labkit.experiments.memory.repair_record",
        __doc__,
        argv,
        measure,
        DEPENDS_ON,
        lambda r: {"rows": len(r["rows"]), "cases": r["cases"]},
    )


if __name__ == "__main__":
    raise SystemExit(main())
