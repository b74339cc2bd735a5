"""The memory notebook's Reflexion demo (section 1): the buffer arm on the first repair cases
(SIMULATED actor, real pytest verdicts), recorded so the notebook opens without running pytest.

The run validates every kept state for real (about 2 s of pytest on a fresh clone), so the
notebook steps through a recording made once by

    python -m labkit.experiments.memory.demo --out data/memory/reflexion_demo.json

The record holds, for the stepped case, what the actor read from the buffer each trial (text,
tokens, reflections dropped), the patch it tried (name, fix or wrong, diff) and what the visible
tests decided about it (keep / roll back and why), and, for every case of the run, whether the held state was
hidden-correct after each trial. tests/test_memory_demo.py runs the demo again and compares
the record exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.core.paths import DATA, read_recording
from labkit.core.versions import package_versions
from labkit.record import outcomes
from labkit.record.events import Kind

__all__ = ["DEPENDS_ON", "RECORD", "Demo", "Setting", "Trial", "load", "main", "measure"]

RECORD = DATA / "memory" / "reflexion_demo.json"
DEPENDS_ON = ("pytest",)  # the packages the record depends on (every verdict is a real pytest run)


@dataclass(frozen=True)
class Setting:
    """The notebook's demo: the buffer arm on the first `n_cases` cases, `trials` trials, one seed."""

    n_cases: int = 3
    trials: int = 4
    seed: int = 2


@dataclass(frozen=True, kw_only=True)
class Trial:
    """One trial of the stepped case: what the actor read, and whether the held state was
    hidden-correct afterwards (None: no score recorded for that trial)."""

    trial: int
    text: str
    tokens: int
    dropped: int
    correct: bool | None
    tried: str = ""  # the patch the actor tried ("" when it proposed nothing)
    kind: str = ""  # that patch's label in the case: "fix" or "wrong"
    diff: str = ""
    decision: str = ""  # what the visible tests decided: keep, roll back, keep investigating
    reason: str = ""  # why, as the decision says it (which visible tests passed or broke)


@dataclass(frozen=True)
class Demo:
    """The stepped case (the first whose buffer got a reflection in the run) and its trials."""

    case: str
    title: str
    trials: tuple[Trial, ...]


def measure(setting: Setting = Setting()) -> dict[str, Any]:
    """Run the demo (every verdict from a real pytest run) and return its JSON record (no command)."""
    from labkit.experiments.memory import reflexion_repair as reflexion
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

    cases = reflexion.cases()[: setting.n_cases]
    ledger = Ledger()
    frame, strategy = reflexion.run_arm(
        reflexion.ARMS[1], cases, Checker(), trials=setting.trials, seed=setting.seed, ledger=ledger
    )
    reflected = {c for c, _, w in strategy.windows if w.reflections}
    case = next((c for c in cases if c.id in reflected), cases[0])
    tried: dict[int, str] = {}
    for e in ledger.events():
        if str(e.detail.get("case")) != case.id or e.round < 1:
            continue
        if e.kind == Kind.GENERATE and e.detail.get("proposal"):
            tried[e.round] = str(e.detail["proposal"])
    decided = {d.round: (d.decision, d.reason) for d in outcomes.decisions(ledger.events(), case.id) if d.round >= 1}
    return {
        "actor": "SIMULATED (labkit.experiments.memory.reflexion_repair.SimActor); verdicts: real pytest",
        "setting": {"n_cases": setting.n_cases, "trials": setting.trials, "seed": setting.seed},
        "case": case.id,
        "title": case.title,
        "correct": [[r["case"], r["trial"], r["correct"]] for r in frame.iter_rows(named=True)],
        "windows": [[rnd, w.text, w.tokens, w.dropped] for c, rnd, w in strategy.windows if c == case.id],
        # per trial of the stepped case: the patch tried (name, fix/wrong, diff) and what the visible tests decided
        "tried": [
            [t, name, case.patch(name).kind if name else "", case.patch(name).patch.diff if name else "", *decided[t]]
            for t in sorted(decided)
            for name in [tried.get(t, "")]
        ],
    }


def load(path: Path = RECORD) -> Demo:
    """The recorded demo, ready to step through."""
    rec = read_recording(path, f"python -m labkit.experiments.memory.demo --out {path}", "data/memory/README.md")
    correct = {t: bool(ok) for c, t, ok in rec["correct"] if c == rec["case"]}
    tried = {row[0]: row[1:] for row in rec.get("tried", [])}  # (name, kind, diff, decision, reason)
    trials = tuple(
        Trial(
            trial=t,
            text=text,
            tokens=tokens,
            dropped=dropped,
            correct=correct.get(t),
            **dict(zip(("tried", "kind", "diff", "decision", "reason"), tried.get(t, ()), strict=False)),
        )
        for t, text, tokens, dropped in rec["windows"]
    )
    return Demo(rec["case"], rec["title"], trials)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labkit.experiments.memory.demo", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="the .json record")
    args = list(sys.argv[1:] if argv is None else argv)
    a = p.parse_args(args)
    record = {
        "command": "python -m labkit.experiments.memory.demo " + " ".join(args),
        "versions": package_versions(DEPENDS_ON),
        **measure(),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"case": record["case"], "trials": len(record["windows"])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
