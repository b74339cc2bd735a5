"""The dependency graph of a merge: which conclusions a change makes stale.

Parts are nodes; an edge carries one part's output (its *premise* for the consumer) to
another part. Each conclusion is a check that executes named parts:

- `local:<part>` executes the part alone, on its own tests;
- `edge:<producer>-><consumer>` executes both: the producer's real output fed to the
  consumer, searched for counterexamples against the requirements.

Changing a part (a local repair: new code, perhaps a new premise at its output) makes stale
exactly the conclusions that executed it: its own local tests, the edges into it (its code
consumed them) and the edges out of it (its consumers' conclusions assumed its old premise).
Conclusions further downstream are not stale: each edge check feeds its consumer inputs that
meet the plan's premise, so once the edges out of the changed part hold again, everything
past them holds as it did (assume-guarantee). A re-check that refutes a consumer leads to
that consumer's repair, and the same rule then applies to it. `downstream` is the transitive
closure, shown for contrast (what "re-check every dependent" would pay for).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Dag", "Edge"]


@dataclass(frozen=True)
class Edge:
    producer: str
    consumer: str
    carries: str  # what crosses the interface ("line amounts")
    check: str  # the interface check's test file

    @property
    def name(self) -> str:
        return f"{self.producer}->{self.consumer}"


@dataclass(frozen=True)
class Dag:
    parts: tuple[str, ...]  # in pipeline order
    edges: tuple[Edge, ...]

    def __post_init__(self) -> None:
        known = set(self.parts)
        for e in self.edges:
            missing = {e.producer, e.consumer} - known
            if missing:
                raise ValueError(f"edge {e.name} names unknown part(s) {sorted(missing)}; parts are {list(self.parts)}")
        order = {p: i for i, p in enumerate(self.parts)}
        back = [e.name for e in self.edges if order[e.producer] >= order[e.consumer]]
        if back:
            raise ValueError(f"edges {back} point backwards: list the parts in an order every edge follows")

    def edge(self, name: str) -> Edge:
        for e in self.edges:
            if e.name == name:
                return e
        raise ValueError(f"no edge {name!r}; edges are {[e.name for e in self.edges]}")

    def checks(self) -> tuple[str, ...]:
        """Every conclusion: each part's local tests, then each edge, in pipeline order."""
        return tuple(f"local:{p}" for p in self.parts) + tuple(f"edge:{e.name}" for e in self.edges)

    def executes(self, check: str) -> frozenset[str]:
        """The parts a check runs."""
        if check.startswith("local:"):
            return frozenset({check.removeprefix("local:")})
        e = self.edge(check.removeprefix("edge:"))
        return frozenset({e.producer, e.consumer})

    def consumers(self, part: str) -> tuple[str, ...]:
        """The parts that read `part`'s output directly: the dependents of its premise."""
        return tuple(dict.fromkeys(e.consumer for e in self.edges if e.producer == part))

    def downstream(self, part: str) -> tuple[str, ...]:
        """Every part that depends on `part`, directly or transitively, in pipeline order."""
        seen: set[str] = set()
        todo = [part]
        while todo:
            for c in self.consumers(todo.pop()):
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        return tuple(p for p in self.parts if p in seen)

    def stale(self, part: str) -> tuple[str, ...]:
        """The conclusions a change to `part` invalidates: exactly the checks that executed it."""
        if part not in self.parts:
            raise ValueError(f"no part {part!r}; parts are {list(self.parts)}")
        return tuple(c for c in self.checks() if part in self.executes(c))
