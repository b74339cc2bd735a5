"""Spend the budget on explanations that discriminate (seed 002 §7), on scripted cases.

`data/triage/cases.json` (labelled *scripted*): a small report module whose acceptance test
fails; the cause is the code, the test data (`fixtures/orders.csv`) or the environment (the
installed `site/textlib.py`). `MANIFEST.json`, built here from the last green run, holds the
image and data digests. Two arms through the engine, each case its own run with the same
budget (`BUDGET` cost units; a validation costs 1, a strategy's reply 1, the probe is billed
with the reply that asks for it):

- **three patches at once**: three code patches written from the failure alone, validated
  side by side, the best kept;
- **one discriminating experiment, then one patch**: a probe reproduces the minimal failure
  and checks the image and data digests against the manifest; its *prediction* ("the cause is
  the code": both digests match) is written to the ledger before the probe runs and scored
  after (`labkit.loop.control.predictions`); then one change: restore the image or the data from the
  manifest's copy, or else the first of the same three code patches.

Correctness is the hidden suite: the visible tests plus a check that the image and data match
the manifest, so a code patch that compensates for a drifted environment is green for the
loop and wrong for the task. `python -m labkit.experiments.lessons.triage --write` records
`data/triage/recording.json` (what the lessons page shows).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.core.paths import data_root, read_recording
from labkit.core.types import Candidate, Usage
from labkit.grading.acceptance import AcceptanceSuite
from labkit.loop.control.predictions import score
from labkit.loop.engine import Task, run
from labkit.loop.engine.probe import Experiment
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.record.budget import Budget, limits

if TYPE_CHECKING:
    from labkit.grading.validator import Validator
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = [
    "ARMS", "BUDGET", "COMMAND", "DEPENDS_ON", "EXPERIMENT", "Outcome", "PREDICTION", "Summary", "ThreePatches", "Triage", "load",
    "measure", "read", "record", "summarise", "tasks", "write",
]  # fmt: skip

BUDGET = 5.0
DEPENDS_ON = ("pytest",)  # the validator runs pytest; no other package shapes these numbers
ARMS = ("three patches at once", "one experiment, then one patch")
COMMAND = "python -m labkit.experiments.lessons.triage --write"
PREDICTION = ("image: MATCH", "data: MATCH")  # the patcher's implicit bet: the cause is the code
_REPLY = Usage(cost_units=1)
_PROBE = """import hashlib, json, sys
from pathlib import Path
root = Path(__file__).resolve().parent
sys.path.insert(0, str(root / "site"))
manifest = json.loads((root / "MANIFEST.json").read_text())
for kind in ("image", "data"):
    same = all(hashlib.sha256((root / p).read_bytes()).hexdigest() == d for p, d in manifest[kind].items())
    print(f"{kind}: {'MATCH' if same else 'MISMATCH'}")
from report import total
print("minimal failure: total(fixtures/orders.csv) =", total(str(root / "fixtures/orders.csv")))
"""
EXPERIMENT = Experiment("is the cause the code, the test data or the environment?", _PROBE, PREDICTION)


def load() -> dict[str, Any]:
    return dict(json.loads((data_root() / "triage" / "cases.json").read_text(encoding="utf-8")))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _manifest(doc: dict[str, Any]) -> str:
    base = doc["baseline"]
    return json.dumps({k: {p: _sha(base[p]) for p in doc[k]} for k in ("image", "data")}, indent=1) + "\n"


def tasks(doc: dict[str, Any] | None = None) -> tuple[Task, ...]:
    """One task per case: the mutated baseline, the visible suite, the hidden (pinned) suite."""
    doc = doc or load()
    out = []
    for c in doc["cases"]:
        files = {**doc["baseline"], **c["mutate"], "MANIFEST.json": _manifest(doc)}
        visible = AcceptanceSuite(
            name="triage",
            tests=doc["tests"],
            fail_to_pass=doc["fail_to_pass"],
            pass_to_pass=doc["pass_to_pass"],
            import_roots=("site",),
        )
        pinned = "tests/test_pinned.py::test_image_and_data_match_the_manifest_of_the_last_green_run"
        f2p, p2p = list(doc["fail_to_pass"]), list(doc["pass_to_pass"])
        (f2p if c["cause"] != "code" else p2p).append(pinned)
        hidden = AcceptanceSuite(
            name="triage (hidden: pinned)",
            tests={**doc["tests"], **doc["hidden_tests"]},
            fail_to_pass=tuple(f2p),
            pass_to_pass=tuple(p2p),
            import_roots=("site",),
        )
        out.append(
            Task(id=c["id"], start=Candidate(files, label="failing"), suite=visible, hidden=hidden, slice=c["cause"])
        )
    return tuple(out)


def _case(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    return dict(next(c for c in doc["cases"] if c["id"] == case_id))


def _with(s: Situation, files: dict[str, str], name: str) -> Child:
    return Child(
        target=s.candidate.with_files({**s.candidate.files, **files}, label=name),
        name=name,
        source="scripted",
    )


@dataclass(frozen=True)
class _Scripted:
    """A scripted strategy over the cases: every reply costs `_REPLY` (labelled simulated)."""

    doc: dict[str, Any]
    simulated: bool = True
    upper: Usage = _REPLY


@dataclass(frozen=True)
class ThreePatches(_Scripted):
    """Scripted: the case's three code patches at once, written from the failure alone."""

    name: str = "three patches at once (scripted)"

    def propose(self, situation: Situation) -> Proposal:
        patches = _case(self.doc, situation.case)["patches"]
        return Proposal(children=tuple(_with(situation, {"report.py": t}, n) for n, t in patches.items()), usage=_REPLY)


@dataclass(frozen=True)
class Triage(_Scripted):
    """Scripted diagnostician: one discriminating experiment (prediction first), then one change."""

    name: str = "one experiment, then one patch (scripted)"

    def propose(self, situation: Situation) -> Proposal:
        if not situation.observations:
            return Proposal(experiment=EXPERIMENT, usage=_REPLY)
        seen = situation.observations[-1].output.splitlines()
        base = self.doc["baseline"]
        for kind in ("image", "data"):  # restore what drifted, from the manifest's recorded copy
            if f"{kind}: MISMATCH" in seen:
                return Proposal(
                    children=(_with(situation, {p: base[p] for p in self.doc[kind]}, f"restore the {kind}"),),
                    usage=_REPLY,
                )
        name, text = next(iter(_case(self.doc, situation.case)["patches"].items()))
        return Proposal(children=(_with(situation, {"report.py": text}, name),), usage=_REPLY)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One case under one arm, read from its run and ledger."""

    arm: str
    case: str
    cause: str
    held: str  # the change the run ended holding ("failing" = none kept)
    visible_green: bool  # green for the loop
    correct: bool  # the hidden (pinned) suite on what was held
    spent: float  # cost units
    validations: int  # paid visible validations (the start included)
    prediction_held: bool | None  # None: this arm made no prediction


def measure(
    doc: dict[str, Any] | None = None,
    validator: Validator | Checker | None = None,
    ledger: Ledger | None = None,
    cases: tuple[str, ...] = (),
) -> tuple[Outcome, ...]:
    """Both arms on every case (or the named ones), each case one run under `BUDGET`."""
    from labkit.record.events import Kind, Role
    from labkit.record.ledger import Ledger

    doc = doc or load()
    led = ledger if ledger is not None else Ledger()
    out = []
    for arm, strategy in zip(ARMS, (ThreePatches(doc), Triage(doc)), strict=True):
        for task in tasks(doc):
            if cases and task.id not in cases:
                continue
            rid = f"triage/{arm}/{task.id}"
            budget = Budget(limits(cost_units=BUDGET), ledger=led, run_id=rid)
            done = run([task], strategy, validator, rounds=1, ledger=led, budget=budget, run_id=rid)
            trace = done.traces[task.id]
            last = done.scores(task.id)[-1]
            paid = [
                e for e in led.events(rid) if e.kind == Kind.VERIFY and e.role == Role.VALIDATOR and e.cost_units > 0
            ]
            scored = score(led, rid)
            held = trace.held if trace.held is not None else trace.final
            out.append(
                Outcome(
                    arm=arm,
                    case=task.id,
                    cause=task.slice,
                    held=held.label,
                    visible_green=bool(trace.final_verdict.resolved),
                    correct=last.correct,
                    spent=budget.spent.cost_units,
                    validations=len(paid),
                    prediction_held=scored[0].held if scored else None,
                )
            )
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Summary:
    """One arm on the cases of some causes: how many ended correct, green for the loop, spent."""

    arm: str
    causes: tuple[str, ...]
    cases: int
    correct: int
    visible_green: int
    spent: float
    predictions_held: int
    predictions: int


def summarise(outcomes: tuple[Outcome, ...], causes: tuple[str, ...]) -> tuple[Summary, ...]:
    """Per arm, over the cases whose cause is in `causes`."""
    out = []
    for arm in ARMS:
        rows = [o for o in outcomes if o.arm == arm and o.cause in causes]
        made = [o for o in rows if o.prediction_held is not None]
        out.append(
            Summary(
                arm=arm,
                causes=causes,
                cases=len(rows),
                correct=sum(o.correct for o in rows),
                visible_green=sum(o.visible_green for o in rows),
                spent=sum(o.spent for o in rows),
                predictions_held=sum(bool(o.prediction_held) for o in made),
                predictions=len(made),
            )
        )
    return tuple(out)


def _recording() -> Path:
    return data_root() / "triage" / "recording.json"


def write() -> Path:
    """Measure every case under both arms and record it (with the packages it depends on)."""
    from labkit.core.versions import package_versions

    rows = [asdict(o) for o in measure()]
    path = _recording()
    data = {"label": "scripted cases, real validator", "command": COMMAND, "budget": BUDGET, "outcomes": rows,
            "versions": package_versions(DEPENDS_ON)}  # fmt: skip
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def record() -> dict[str, Any]:
    """The recording as stored (label, command, budget, outcomes, package versions)."""
    return read_recording(_recording(), COMMAND)


def read() -> tuple[Outcome, ...]:
    """The recorded outcomes (what the page shows on open)."""
    return tuple(Outcome(**r) for r in record()["outcomes"])


if __name__ == "__main__":
    import sys

    if "--write" in sys.argv[1:]:
        print(write())
    else:
        for o in measure():
            print(o)
