"""The memory notebook's recorded loop comparisons (sections 6 and 7), SIMULATED actor and critic,
real patches, real visible verdicts, hidden scoring:

- an entrenched false belief and the revision rule (`reflexion.ARMS`: the buffer, the buffer
  whose first reflection per case recommends retrying what failed, and the same with the
  revision rule striking a belief refuted twice);
- seed 001's unified loop (`unified.ARMS`): an external oracle against self-critique with and
  without the no-progress guard, and what each may store as a skill.

Every state is validated for real first (about a minute on a shared machine), so the notebook
reads a recording made once by

    python -m labkit.experiments.memory.loops --out data/memory/loops.json

Rows are per (arm, seed, case, trial): the SimActor's draws are seeded per (seed, case, trial)
and every memory is per case, so the rows of a subset of cases are the rows of the full run for
those cases. tests/test_memory_loops.py re-measures a subset and compares exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from labkit.core.paths import DATA, read_recording
from labkit.core.versions import package_versions
from labkit.experiments import repair
from labkit.experiments.memory import reflexion_repair as rx
from labkit.experiments.memory import unified as un
from labkit.grading.verdicts import Checker
from labkit.record.events import Kind

__all__ = [
    "BELIEF_ARMS",
    "DEPENDS_ON",
    "RECORD",
    "Setting",
    "load",
    "main",
    "measure",
    "measure_belief",
    "measure_unified",
]

RECORD = DATA / "memory" / "loops.json"
DEPENDS_ON = ("pytest",)  # every verdict is a real pytest run; the rows are plain counts
BELIEF_ARMS = ("buffer", "buffer, false belief", "buffer, false belief + revision")


@dataclass(frozen=True)
class Setting:
    """The first `n_cases` memory cases; `seeds` of the simulated actor; `trials` per case."""

    n_cases: int = 8
    seeds: tuple[int, ...] = tuple(range(8))
    trials: int = 5


def _arm(name: str) -> rx.ReflexionSetup:
    return next(a for a in rx.ARMS if a.name == name)


def measure_belief(cs: Sequence[repair.RepairCase], setting: Setting, checker: Checker) -> dict[str, Any]:
    """Rows [arm, seed, case, trial, correct] for `BELIEF_ARMS`, and what the actor read, trial by
    trial, in both false-belief arms on the first (seed, case) where the revision rule changed the end."""
    rows: list[list[Any]] = []
    windows: dict[tuple[str, int, str], list[str]] = {}
    for name in BELIEF_ARMS:
        for seed in setting.seeds:
            frame, strategy = rx.run_arm(_arm(name), cs, checker, trials=setting.trials, seed=seed)
            rows += [[name, seed, c, t, int(ok)] for c, t, ok in frame.select("case", "trial", "correct").iter_rows()]
            for c, t, w in strategy.windows:
                windows.setdefault((name, seed, c), []).append(w.text) if t >= 1 else None
    final = {(a, s, c): ok for a, s, c, t, ok in rows if t == setting.trials}
    stuck, revised = BELIEF_ARMS[1], BELIEF_ARMS[2]
    shown = next(
        ((s, c.id) for s in setting.seeds for c in cs if final[revised, s, c.id] and not final[stuck, s, c.id]), None
    )
    example = None
    if shown is not None:
        seed, case = shown
        example = {
            "seed": seed,
            "case": case,
            "read": {a: windows[a, seed, case] for a in (stuck, revised)},
        }
    return {"arms": list(BELIEF_ARMS), "rows": sorted(rows), "example": example}


def measure_unified(cs: Sequence[repair.RepairCase], setting: Setting, checker: Checker) -> dict[str, Any]:
    """Rows [arm, seed, case, round, correct, proposals] for `unified.ARMS` (round 0: the start),
    and per arm the cases whose skill seed `setting.seeds[0]` stored, each with whether it passes
    the hidden tests (self-critique has nothing verified: the store refuses it)."""
    from labkit.core.errors import MemoryRefused
    from labkit.loop.strategies.memory.agent import commit
    from labkit.loop.strategies.memory.skills import SkillLibrary

    by_id = {c.id: c for c in cs}
    rows: list[list[Any]] = []
    stored: dict[str, list[list[Any]]] = {}
    for arm in un.ARMS:
        for seed in setting.seeds:
            frame, agent, ledger, run_id = un.run_arm(arm, cs, checker, rounds=setting.trials, seed=seed)
            calls: dict[str, int] = {}
            for e in ledger.events():
                if e.kind == Kind.REFLECT and int(e.detail.get("children", 0)) > 0:
                    calls[str(e.detail["case"])] = calls.get(str(e.detail["case"]), 0) + 1
            rows += [
                [arm, seed, c, r, int(ok), calls.get(c, 0)]
                for c, r, ok in frame.select("case", "round", "correct").iter_rows()
            ]
            if seed == setting.seeds[0]:
                try:
                    skills = commit(
                        agent,
                        ledger,
                        run_id,
                        {c.id: [s.candidate for s in c.states.values()] for c in cs},
                        SkillLibrary(),
                    )
                except MemoryRefused:
                    skills = []
                stored[arm] = sorted(
                    [
                        s.name.removeprefix("repair_"),
                        int(un._hidden_ok(checker, by_id[s.name.removeprefix("repair_")], s.code)),
                    ]
                    for s in skills
                )
    return {"arms": list(un.ARMS), "rows": sorted(rows), "stored": stored}


def measure(
    setting: Setting = Setting(), checker: Checker | None = None, cases: Sequence[str] | None = None
) -> dict[str, Any]:
    """Both measurements on the first `setting.n_cases` memory cases (or only the named `cases`)."""
    checker = checker or Checker()
    cs = rx.cases()[: setting.n_cases]
    if cases is not None:
        cs = tuple(c for c in cs if c.id in cases)
    return {
        "actor": "SIMULATED (labkit.experiments.memory.reflexion_repair.SimActor; unified: a simulated critic); verdicts: real pytest",
        "setting": {**asdict(Setting()), **asdict(setting), "seeds": list(setting.seeds)},
        "cases": [[c.id, c.title] for c in cs],
        "belief": measure_belief(cs, setting, checker),
        "unified": measure_unified(cs, setting, checker),
    }


def load(path: Path = RECORD) -> dict[str, Any]:
    """The recording (a missing one names the command that makes it)."""
    return read_recording(path, f"python -m labkit.experiments.memory.loops --out {path}", "data/memory/README.md")


def record_main(
    module: str,
    doc: str | None,
    argv: Sequence[str] | None,
    measure: Callable[[], dict[str, Any]],
    depends_on: Sequence[str],
    summary: Callable[[dict[str, Any]], dict[str, Any]],
) -> int:
    """`python -m <module> --out FILE`: measure, store the command and package versions beside the
    numbers, print `summary(record)` as JSON."""
    p = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    p.add_argument("--out", type=Path, required=True, help="the .json record")
    args = list(sys.argv[1:] if argv is None else argv)
    out = p.parse_args(args).out
    record = {
        "command": f"python -m {module} " + " ".join(args),
        "versions": package_versions(depends_on),
        **measure(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
    print(json.dumps(summary(record)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return record_main(
        "labkit.experiments.memory.loops",
        __doc__,
        argv,
        measure,
        DEPENDS_ON,
        lambda r: {"cases": len(r["cases"]), "example": r["belief"]["example"] is not None},
    )


if __name__ == "__main__":
    raise SystemExit(main())
