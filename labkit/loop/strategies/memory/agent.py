"""Seed 001's unified loop, `reflective_agent(oracle=None|external)`, as a strategy on the engine.

Before acting it reads memory (the experience store's re-checked candidates for the task's
facts; the skill library's disclosure for the task). Then, each round:
- `oracle="external"`: the feedback is the engine's verdict on the visible tests — a passing
  verdict ends the case, a failure is reflected into the episodic buffer (`Reflexion`), so the
  loop converges on a real signal;
- `oracle=None`: intrinsic self-critique — the actor does not read the verdict, a `critique`
  scores its own held output, and the no-progress guard stops the case when the critique stops
  improving (otherwise the loop keeps rewriting on its own opinion).
After the run, `commit` stores only verified wins: with the external oracle, each case's kept,
validated change (read from the ledger) becomes a skill; with self-critique nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from labkit.core.errors import MemoryRefused
from labkit.loop.engine.strategy import Proposal, Situation
from labkit.loop.strategies.memory.episodic import Actor, EpisodicBuffer, Reflexion, Window
from labkit.loop.strategies.memory.skills import Check, Skill, SkillLibrary
from labkit.loop.strategies.memory.store import ExperienceStore, find_correction

if TYPE_CHECKING:
    from labkit.core.types import Candidate
    from labkit.grading.verdicts import Checker
    from labkit.record.ledger import Ledger

__all__ = ["ReflectiveAgent", "commit"]

Critique = Callable[[Situation], float]  # the agent's own score of its held output (higher = better)


@dataclass(kw_only=True)
class ReflectiveAgent:
    actor: Actor
    checker: Checker
    oracle: Literal["external"] | None = "external"
    critique: Critique | None = None
    guard: bool = True
    store: ExperienceStore | None = None
    skills: SkillLibrary | None = None
    facts: Callable[[Situation], Mapping[str, bool]] | None = None
    environment: str = ""
    buffer_budget: int = 400
    history: dict[str, list[float]] = field(default_factory=dict)
    context: dict[str, str] = field(default_factory=dict)  # what memory put in front of the actor, per case
    stopped: dict[str, int] = field(default_factory=dict)  # case -> round the guard stopped it
    _reflexion: Reflexion | None = None

    def __post_init__(self) -> None:
        if self.oracle is None and self.critique is None:
            raise ValueError("a self-critique agent (oracle=None) needs a critique")
        if self.oracle == "external":
            self._reflexion = Reflexion(
                actor=self.actor, checker=self.checker, buffer=EpisodicBuffer(budget=self.buffer_budget)
            )

    @property
    def name(self) -> str:
        how = "external oracle" if self.oracle else f"self-critique{' + no-progress guard' if self.guard else ''}"
        return f"reflective agent ({how})"

    @property
    def simulated(self) -> bool:
        return self.actor.simulated

    def propose(self, s: Situation) -> Proposal:
        if s.case not in self.context:
            self.context[s.case] = self._recall(s)
        if self._reflexion is not None:
            if s.verdict.resolved:
                return Proposal(note="external oracle: the visible tests pass")
            return self._reflexion.propose(s)
        assert self.critique is not None
        if s.case in self.stopped:
            return Proposal(note=f"no-progress guard stopped this case in round {self.stopped[s.case]}")
        hist = self.history.setdefault(s.case, [])
        hist.append(self.critique(s))
        if self.guard and len(hist) > 1 and hist[-1] <= hist[-2]:
            self.stopped[s.case] = s.round
            return Proposal(note=f"no-progress guard: self-critique {hist[-1]:.2f} did not improve on {hist[-2]:.2f}")
        return self.actor.act(s, Window((), self.context[s.case], 0, 0))

    def _recall(self, s: Situation) -> str:
        parts = []
        if self.store is not None and self.facts is not None:
            got = self.store.retrieve(self.facts(s), environment=self.environment)
            parts += [f"Candidate explanation (verify first): {c.entry.experience.lesson}" for c in got.candidates]
        if self.skills is not None and len(self.skills):
            parts.append(self.skills.prompt(s.case.replace("_", " "), k=1).text)
        return "\n".join(parts)


def commit(
    agent: ReflectiveAgent, ledger: Ledger, run_id: str, states: Mapping[str, Iterable[Candidate]], skills: SkillLibrary
) -> list[Skill]:
    """Store each case's verified win as a skill. `states`: per case, the candidates it could reach
    (the kept one is found by the digest the ledger recorded). Only cases with a kept, validated change in the ledger are stored;
    a self-critique agent has no external verification, so it stores nothing (MemoryRefused)."""
    if agent.oracle is None:
        raise MemoryRefused("self-critique only: no external oracle verified any output, nothing may be stored")
    stored = []
    for case, reachable in states.items():
        try:
            corr = find_correction(ledger, run_id, case)
        except MemoryRefused:
            continue
        cand = next((c for c in reachable if c.digest.startswith(corr.candidate)), None)
        if cand is None:
            raise MemoryRefused(f"case {case!r}: the kept candidate {corr.candidate} is not among its states")
        code = "\n".join(t for p, t in sorted(cand.files.items()) if p.endswith(".py") and not p.startswith("tests/"))
        skill = Skill(
            name=f"repair_{case}",
            description=f"Verified repair of {case.replace('_', ' ')}: {corr.cause}".strip(),
            code=code,
        )
        stored.append(skills.add(skill, Check(skill.name, True, corr.source)))
    return stored
