"""How a case moves through its states: the engine's expansion policy and a case's frontier.

    "hold"     one held state per case; the best kept child replaces it (the default, and
               every run recorded before frontiers existed)
    "breadth"  a frontier of kept states per case, expanded first-in first-out
    "best"     the same frontier, expanded fewest-visible-failures first (ties: oldest first)

With a frontier, each round expands one waiting state per case (so `rounds` is the expansion
limit): the strategy proposes children of that state, the engine validates and decides each
against it, and every kept child that is not green joins the frontier unless its key
(candidate digest, state name) was queued before or it would sit at `max_depth`. A green
kept child (its visible suite passes) is not expanded: it is a candidate for the winner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from labkit.core.errors import InvalidSetting
from labkit.core.types import Candidate, Verdict

__all__ = [
    "EXPANSIONS",
    "Confirmation",
    "Expand",
    "Frontier",
    "FrontierLimits",
    "Node",
    "Winner",
    "WinnerPick",
]

Expand = Literal["hold", "breadth", "best"]
EXPANSIONS: tuple[Expand, ...] = ("hold", "breadth", "best")


@dataclass(frozen=True)
class FrontierLimits:
    """Limits of a frontier: how deep a route may go, how many children one expansion keeps."""

    max_depth: int = 3  # a state at this depth is not queued (the start is depth 0)
    max_children: int = 3  # the engine keeps only the first children of a proposal

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_children"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InvalidSetting(f"FrontierLimits.{name} must be an int >= 1, got {v!r}")


@dataclass(frozen=True, kw_only=True)
class Node:
    """A state a case reached: its candidate, visible verdict, name and depth from the start.

    `order` counts the case's green states (0 = the first); a winner rule may break ties on it."""

    candidate: Candidate
    verdict: Verdict
    state: str
    depth: int = 0
    order: int = 0
    path: tuple[str, ...] = ()  # the state names from the start (the route's hypotheses)

    @property
    def key(self) -> tuple[str, str]:
        return self.candidate.digest, self.state


class WinnerPick(Protocol):
    """A preregistered rule choosing the winner among green states: smallest `key` wins.

    `key(node, start)` reads a node's `candidate` and `order` (so
    `labkit.loop.search.frontier.smallest_change` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> Callable[[Any, Candidate], Any]: ...


@dataclass
class Frontier:
    """One case's waiting states under a policy, the keys queued so far and its green states."""

    policy: Expand
    limits: FrontierLimits
    waiting: list[Node] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    expanded: int = 0

    def push(self, node: Node) -> bool:
        """Queue `node` unless its key was queued before or it sits at the depth limit."""
        if node.key in self.seen or node.depth >= self.limits.max_depth:
            return False
        self.seen.add(node.key)
        self.waiting.append(node)
        return True

    def pop(self) -> Node | None:
        if not self.waiting:
            return None
        i = 0
        if self.policy == "best":
            i = min(
                range(len(self.waiting)),
                key=lambda j: (len(self.waiting[j].verdict.evidence.failures), j),
            )
        self.expanded += 1
        return self.waiting.pop(i)


@dataclass(frozen=True)
class Confirmation:
    """The winner-plus-confirmation ending: at the end of the run each case's winner is chosen
    among its green states by `rule` (registered before any state is seen), then confirmed once
    on the case's sealed final set (its hidden suite) through `Recorder.confirm`: pass/fail only.
    `cost` is paid from the budget's confirmation reserve (0: unpaid)."""

    rule: WinnerPick
    cost: float = 0.0


@dataclass(frozen=True)
class Winner:
    """A case's winner and its confirmation (None: the reserve could not pay for it)."""

    case: str
    node: Node
    rule: str
    confirmed: bool | None
    reason: str
