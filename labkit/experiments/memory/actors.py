"""The Reflexion actors: a SIMULATED one that picks among a case's real patches, and a REAL
model that rewrites the module. Both read the memory window the `Reflexion` wrapper hands them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from labkit.core.types import Candidate, Usage
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.loop.strategies.memory.episodic import Window

__all__ = ["ModelActor", "Options", "SimActor"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


class Options(Protocol):
    """What the simulated actor picks among: a repair case's patches or a HumanEval problem's states."""

    @property
    def patches(self) -> Sequence[_Named]: ...

    def patch(self, name: str) -> _Named: ...

    def candidate(self, name: str) -> Candidate: ...


@dataclass(kw_only=True)
class SimActor:
    """SIMULATED: picks an explanation (a real patch) per trial. Prior: `p_fix` on the fix, the
    rest shared by the wrong patches; ruled-out actions are removed and the prior renormalised;
    a live recommendation in the window is followed. Seeded per (seed, case, trial)."""

    cases: Mapping[str, Options]
    p_fix: float = 0.3
    seed: int = 0
    blind: bool = False  # does not read the verdict (self-critique: it cannot tell it passed)
    ignores_memory: bool = False  # control: the buffer is written and prepended, but the actor never reads it
    name: str = "simulated actor"
    simulated: bool = True

    def explanations(self, s: Situation) -> list[str]:
        return [p.name for p in self.cases[s.case].patches if p.kind in ("fix", "wrong")]

    def act(self, s: Situation, memory: Window) -> Proposal:
        if s.verdict.resolved and not self.blind:
            return Proposal(note="visible tests pass: nothing to repair")
        if self.ignores_memory:
            memory = Window((), "", 0, 0)
        case = self.cases[s.case]
        rng = random.Random(f"{self.seed}:{s.case}:{s.round}")
        if memory.recommended:
            pick = memory.recommended
        else:
            fix = [p.name for p in case.patches if p.kind == "fix"]
            wrong = [p.name for p in case.patches if p.kind == "wrong"]
            options = [(n, self.p_fix) for n in fix] + [(n, (1 - self.p_fix) / max(1, len(wrong))) for n in wrong]
            options = [(n, w) for n, w in options if n not in memory.ruled_out] or options
            pick = rng.choices([n for n, _ in options], weights=[w for _, w in options])[0]
        kind = case.patch(pick).kind
        child = Child(target=case.candidate(pick), name=pick, source=kind)
        return Proposal(children=(child,), usage=Usage(calls=1, cost_units=1.0), note=f"simulated pick: {pick}")


@dataclass
class ModelActor:
    """A REAL model rewrites the module (`labkit.loop.strategies.rewrite.Rewrite`, with the visible
    failures); the memory window, when there is one, is prepended to its request."""

    model: str
    max_tokens: int = 400
    name: str = ""

    def __post_init__(self) -> None:
        from labkit.loop.strategies.rewrite import Rewrite

        self.rewrite = Rewrite(model=self.model, max_tokens=self.max_tokens, name=f"model actor ({self.model})")
        self.name = self.name or self.rewrite.name

    @property
    def simulated(self) -> bool:
        return self.rewrite.simulated

    def act(self, s: Situation, memory: Window) -> Proposal:
        if s.verdict.resolved:
            return Proposal(note="visible tests pass: nothing to repair")
        preface = f"Reflections on your earlier failed trials (newest last):\n{memory.text}" if memory.text else ""
        return self.rewrite.propose(s, preface)
