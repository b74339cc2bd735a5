"""Fork a sub-task into a fresh context, or continue in the polluted one (seed 001 §06.3).

A parent session works through the memory cases one after another, one sub-task per case, the
same SIMULATED actor (`reflexion.SimActor`: it picks among each case's real patches) and the
same trials in both arms. What differs is the context the actor reads before each trial:

- **fresh fork**: a subagent per sub-task whose context holds only what the sub-task needs —
  its own distilled reflections (`EpisodicBuffer`: action, error class, what is not yet
  ruled out) — and which returns its final state; the parent accepts it only if the engine's
  verdict on the visible tests (a real validation, made in the sub-task's run) passes;
- **polluted context**: the actor continues in the parent's context, which holds the session's
  raw transcript: for every earlier trial of every earlier sub-task, the module as proposed and
  the failing tests' raw messages (`SessionTranscript`).

Both contexts have the same capacity (`capacity` tokens, keep-newest: the oldest is dropped
first) and both are read the same way: an action is ruled out only if a record of its failure
is in the window. Tokens per call = the sub-task's artifacts (its module and visible tests,
the same in both arms) + the context read. Success = the accepted state passes the hidden tests.
SIMULATED actor; every verdict is a real pytest run (through the verdict cache). The notebook
reads a recording made once (about two minutes) by

    python -m labkit.experiments.memory.fork --out data/memory/fork.json

tests/test_memory_fork.py re-measures a session prefix and compares its rows exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.core.paths import DATA, read_recording
from labkit.experiments import repair
from labkit.experiments.memory.reflexion_repair import SimActor
from labkit.loop.strategies.memory.episodic import (
    Episode,
    EpisodicBuffer,
    Reflexion,
    Window,
    tokens,
)
from labkit.record.ledger import Ledger

if TYPE_CHECKING:
    from labkit.grading.verdicts import Checker
    from labkit.loop.engine.strategy import Proposal, Situation
    from labkit.loop.engine.trace import EngineRun

__all__ = ["ARMS", "DEPENDS_ON", "RECORD", "MeteredActor", "SessionTranscript", "Setting", "SubTask", "load", "main",
           "measure", "raw_record", "session"]  # fmt: skip

ARMS = ("fresh fork", "polluted context")


def raw_record(case: repair.RepairCase, r: Episode, checker: Checker) -> str:
    """One trial as a raw transcript holds it: the module as proposed and the failing tests' messages
    (the engine's real verdict, looked up in the verdict cache: nothing is validated here)."""
    cand = case.candidate(r.action)
    verdict = checker.lookup(cand, case.visible)
    if verdict is None:  # a reflection is only written on a verdict the engine kept
        raise ValueError(f"case {case.id!r}: the engine kept no verdict for trial {r.trial} ({r.action})")
    failures = verdict.evidence.failures
    said = "\n".join(f"FAILED {f.nodeid}: {f.message.strip()}" for f in failures) or "(no failure message)"
    return f"[{case.id}] trial {r.trial}: applied {r.action}\n{cand.files[case.module]}\n{said}"


@dataclass(kw_only=True)
class SessionTranscript(EpisodicBuffer):
    """The parent's context as one raw transcript across sub-tasks, cut to `budget` tokens (keep
    newest). Its window rules out what the kept records show failed, whichever sub-task they came from."""

    cases: dict[str, repair.RepairCase] = field(default_factory=dict)
    checker: Checker | None = None
    log: list[tuple[Episode, str]] = field(default_factory=list)

    def append(self, case: str, r: Episode) -> None:
        super().append(case, r)
        assert self.checker is not None
        self.log.append((r, raw_record(self.cases[case], r, self.checker)))

    def window(self, case: str) -> Window:
        kept: list[tuple[Episode, str]] = []
        used = 0
        for r, text in reversed(self.log):
            cost = tokens(text) + 1
            if used + cost > self.budget:
                break
            kept.append((r, text))
            used += cost
        kept.reverse()
        text = "\n".join(t for _, t in kept)
        return Window(tuple(r for r, _ in kept), text, tokens(text) if text else 0, len(self.log) - len(kept))


@dataclass
class MeteredActor:
    """The simulated actor, counting the tokens each call reads (artifacts + context window)."""

    inner: SimActor
    artifacts: dict[str, int]
    calls: list[tuple[str, int]] = field(default_factory=list)  # (case, tokens read)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def simulated(self) -> bool:
        return True

    def explanations(self, s: Situation) -> list[str]:
        return self.inner.explanations(s)

    def act(self, s: Situation, memory: Window) -> Proposal:
        p = self.inner.act(s, memory)
        if p.children:
            self.calls.append((s.case, self.artifacts[s.case] + memory.tokens))
        return p


@dataclass(frozen=True, kw_only=True)
class SubTask:
    """One sub-task of a session: its calls, the tokens they read, and the outcome."""

    case: str
    calls: int
    tokens: int  # summed over the calls
    largest: int  # the largest single call
    verified: bool  # the returned state passes the visible tests (the engine's verdict the parent reads)
    correct: bool  # verified, and it passes the hidden tests


def _hidden_correct(run: EngineRun, case: str, digest: str) -> bool:
    """The engine's last hidden score of `case` (its SCORE event), which must be of `digest`."""
    last = run.scores(case)[-1]
    if last.scored_on != "hidden" or last.candidate != digest:
        raise ValueError(f"case {case!r}: the last score is not the hidden score of the returned state {digest}")
    return last.correct


def _artifacts(case: repair.RepairCase) -> int:
    tests = "\n".join(t for t in case.visible.tests.values() if isinstance(t, str))
    return tokens(case.original.files[case.module] + "\n" + tests)


def session(
    arm: str, cs: Sequence[repair.RepairCase], checker: Checker, *, seed: int = 0, trials: int = 5, capacity: int = 400
) -> list[SubTask]:
    """The cases as one session's sub-tasks, in order, in `arm` ("fresh fork" or "polluted context")."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}: one of {ARMS}")
    by_id = {c.id: c for c in cs}
    actor = MeteredActor(SimActor(cases=dict(by_id), seed=seed), {c.id: _artifacts(c) for c in cs})
    shared = SessionTranscript(budget=capacity, cases=by_id, checker=checker)
    out = []
    for case in cs:
        context = EpisodicBuffer(budget=capacity) if arm == "fresh fork" else shared  # a fork starts empty
        before = len(actor.calls)
        run = repair.run(
            [case],
            Reflexion(actor=actor, checker=checker, buffer=context),
            rounds=trials,
            checker=checker,
            ledger=Ledger(),
            run_id=f"fork-{arm}-{seed}-{case.id}",
            rules=(),
            case_rules=(),
            workers=1,
        )
        trace = run.traces[case.id]
        verified = trace.final_verdict.resolved  # the parent's check: the engine's verdict on the returned state
        correct = verified and _hidden_correct(run, case.id, trace.final.digest)
        mine = [t for _, t in actor.calls[before:]]
        out.append(
            SubTask(
                case=case.id,
                calls=len(mine),
                tokens=sum(mine),
                largest=max(mine, default=0),
                verified=verified,
                correct=correct,
            )
        )
    return out


# -- the notebook's recording ------------------------------------------------------------------

RECORD = DATA / "memory" / "fork.json"
DEPENDS_ON = ("pytest",)  # every verdict is a real pytest run; the rest is counting


@dataclass(frozen=True)
class Setting:
    """The first `n_cases` memory cases as one session; `seeds` of the actor; both capacities."""

    n_cases: int = 8
    seeds: tuple[int, ...] = tuple(range(8))
    trials: int = 5
    capacities: tuple[int, ...] = (4000, 150)  # never binds / binds on the raw transcript


def measure(setting: Setting = Setting(), checker: Checker | None = None) -> dict[str, Any]:
    """Rows [arm, capacity, seed, position, case, calls, tokens, largest, verified, correct]. A
    session's first k sub-tasks do not depend on later ones: a shorter `n_cases` gives a prefix."""
    from labkit.experiments.memory.reflexion_repair import cases
    from labkit.grading.verdicts import Checker

    checker = checker or Checker()
    cs = cases()[: setting.n_cases]
    rows = []
    for arm in ARMS:
        for capacity in setting.capacities:
            for seed in setting.seeds:
                for i, t in enumerate(session(arm, cs, checker, seed=seed, trials=setting.trials, capacity=capacity)):
                    rows.append(
                        [
                            arm,
                            capacity,
                            seed,
                            i + 1,
                            t.case,
                            t.calls,
                            t.tokens,
                            t.largest,
                            int(t.verified),
                            int(t.correct),
                        ]
                    )
    return {
        "actor": "SIMULATED (labkit.experiments.memory.reflexion_repair.SimActor); verdicts: real pytest",
        "setting": {
            **asdict(setting),
            "seeds": list(setting.seeds),
            "capacities": list(setting.capacities),
        },
        "cases": [c.id for c in cs],
        "rows": rows,
    }


def load(path: Path = RECORD) -> dict[str, Any]:
    """The recording (a missing one names the command that makes it)."""
    return read_recording(path, f"python -m labkit.experiments.memory.fork --out {path}", "data/memory/README.md")


def main(argv: Sequence[str] | None = None) -> int:
    from labkit.experiments.memory.loops import record_main

    return record_main(
        "labkit.experiments.memory.fork",
        __doc__,
        argv,
        measure,
        DEPENDS_ON,
        lambda r: {"rows": len(r["rows"])},
    )


if __name__ == "__main__":
    raise SystemExit(main())
