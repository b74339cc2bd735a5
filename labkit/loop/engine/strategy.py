"""The strategy seam: the object the engine asks for the next candidate(s).

The engine owns the six steps (define, run, reflect, change, re-test, decide), the budget,
the ledger, the verdict cache and the stop rules. A *strategy* only proposes: it reads a
`Situation` (visible evidence only — hidden tests never reach it) and returns a `Proposal`
holding zero or more children (candidate changes), plus what it thought (a reflection
record), a request to observe first (an experiment), or why it could not answer.

The engine validates every child through the same validator and budget, decides each one
against the situation's verdict, keeps the best kept child, and records everything. So a
strategy that proposes several children (same-budget arms, frontier search) or reads
memory plugs in without a loop of its own.

    class MyStrategy:
        name = "my strategy"
        simulated = True
        def propose(self, situation: Situation) -> Proposal: ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from labkit.core.types import Candidate, Patch, Usage, Verdict
from labkit.loop.engine.probe import Experiment, Observation
from labkit.loop.engine.reflection import ReflectionRecord

if TYPE_CHECKING:
    from labkit.grading.acceptance import AcceptanceSuite

__all__ = ["Child", "Proposal", "Situation", "Strategy", "Tried"]


@dataclass(frozen=True)
class Tried:
    """One child the engine validated for this case last round, as a strategy may see it:
    the child's name, the decision and the *visible* verdict summary (never hidden tests)."""

    child: str
    decision: str  # keep | roll back | investigate | stop
    reason: str
    resolved: bool | None = None  # None: the child was refused before validation
    failing: tuple[str, ...] = ()  # visible tests that failed on it


@dataclass(frozen=True, kw_only=True)
class Situation:
    """Everything a strategy may read. A copy: nothing here edits the candidate.

    `verdict` is the held candidate's verdict on the *visible* suite (`suite`); a case's
    hidden tests are never part of a situation.
    """

    round: int
    candidate: Candidate
    verdict: Verdict
    observations: tuple[Observation, ...] = ()
    rejected: tuple[str, ...] = ()  # hypotheses already tried and rolled back in this case
    case: str = ""  # case id ("" for a single unnamed case)
    state: str = ""  # the held state's name ("start", "original", a patch name, "model:…")
    suite: AcceptanceSuite | None = None  # the visible acceptance (its tests may be shown)
    attempts: tuple[Tried, ...] = ()  # last round's children for this case and what became of them
    path: tuple[str, ...] = ()  # with a frontier: the state names from the start to this state


@dataclass(frozen=True)
class Child:
    """One proposed change: a patch to the situation's candidate, or the whole next candidate."""

    patch: Patch | None = None
    target: Candidate | None = None
    name: str = ""  # the named state it reaches ("fix", "model:1a2b…"); "" = unnamed
    source: str = ""  # where it came from ("reflect", "fix", "wrong", "tempt", "model", …)

    def __post_init__(self) -> None:
        if (self.patch is None) == (self.target is None):
            raise ValueError("a Child needs exactly one of `patch` or `target`")


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """A strategy's answer for one case in one round.

    - children: candidate changes to validate (empty = nothing to propose: the case holds);
      `patch=` is shorthand for one child with that patch;
    - record: the reflection record behind them (hypothesis, expected outcome), if any;
    - experiment: observe first (the engine runs the probe and asks again);
    - failure: why this reply cannot drive the loop (not JSON, incomplete record, …);
    - raw: the reply as received; usage: what producing it cost;
    - sequence: the children are dependent steps applied in order, each to the last green
      checkpoint (the engine returns to that checkpoint when a step fails or does not apply).
    """

    children: tuple[Child, ...] = ()
    record: ReflectionRecord | None = None
    experiment: Experiment | None = None
    failure: str = ""
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    patch: Patch | None = None
    note: str = ""
    sequence: bool = False  # children are dependent steps (a checkpointed sequence), not rivals

    def __post_init__(self) -> None:
        if self.patch is not None and not self.children:
            object.__setattr__(self, "children", (Child(patch=self.patch, source="reflect"),))
        elif self.patch is None and self.children and self.children[0].patch is not None:
            object.__setattr__(self, "patch", self.children[0].patch)

    @property
    def idle(self) -> bool:
        """Nothing proposed, nothing asked, nothing failed: the case keeps its state."""
        return not self.children and self.experiment is None and not self.failure


class Strategy(Protocol):
    """Proposes the next candidate(s). `simulated` labels scripted/simulated output."""

    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def propose(self, situation: Situation) -> Proposal: ...
