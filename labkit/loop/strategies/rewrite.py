"""Model-backed strategies that rewrite a one-module candidate, with or without the evidence.

- `Rewrite(model)` — reflect with evidence: the model sees the module, the visible tests and
  which of them fail (their messages); it answers with the whole corrected module.
- `Rewrite(model, feedback=False)` — resample without feedback: the same request with no test
  results, every round (a fresh sample, not a correction).
- `Rewrite(model, feedback=False, once=True)` — a single direct answer: one sample in round
  1, nothing afterwards.

The cache-isolation reflector (`labkit.loop.strategies.reflector.ModelReflector`, record + diff) is the
record-keeping form of "reflect with evidence". Hidden tests are never in a `Situation`, so
they cannot reach a prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from labkit.core.types import Candidate, Patch
from labkit.loop.engine.strategy import Child, Proposal, Situation
from labkit.models.role import ModelRole

__all__ = ["Rewrite", "Rivals", "module_of", "rewrite_messages"]

_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
_SYSTEM = "You repair Python modules. Reply with the complete corrected module in one ```python block, nothing else."


def module_of(candidate: Candidate) -> str:
    """The one code file of a one-module candidate."""
    code = [p for p in candidate.files if p.endswith(".py") and not p.startswith("tests/")]
    if len(code) != 1:
        raise ValueError(f"a rewrite strategy needs one module, the candidate has {sorted(candidate.files)}")
    return code[0]


def rewrite_messages(s: Situation, feedback: bool, preface: str = "") -> list[dict[str, str]]:
    """The request: the module, the visible tests, and (with feedback) which of them fail.
    `preface` (e.g. a memory buffer) is put before the module, as its own paragraph."""
    module = module_of(s.candidate)
    code = s.candidate.files[module]
    texts = sorted(s.suite.tests.items()) if s.suite else []
    tests = "\n".join(t for _, t in texts if isinstance(t, str))  # binary fixtures are not shown
    if feedback:
        failures = [r for r in s.verdict.evidence.results if r.outcome != "passed"]
        if failures:
            evidence = "\n".join(f"- {r.nodeid}: {r.outcome}: {r.message[:300]}" for r in failures)
            ask = f"These tests fail:\n{evidence}\nFix the module so they pass without breaking the others."
        else:
            ask = "All these tests pass. If you see a real bug, fix it; otherwise reply exactly NO CHANGE."
    else:
        ask = "Make the module correct for these tests. If it already is, reply exactly NO CHANGE."
    return [
        {"role": "system", "content": _SYSTEM},
        {
            "role": "user",
            "content": (f"{preface}\n\n" if preface else "")
            + f"Module {module}:\n```python\n{code}```\n\nTests:\n```python\n{tests}```\n\n{ask}",
        },
    ]


@dataclass(frozen=True, kw_only=True)
class Rewrite(ModelRole):
    """A model writes the whole new module (see the module docstring for the three forms).
    Its calls go through `ModelRole.ask` (role "model"; ledger, budget and cache if given)."""

    feedback: bool = True
    once: bool = False
    max_tokens: int = 1024
    temperature: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            kind = "direct" if self.once else "reflect" if self.feedback else "resample"
            object.__setattr__(self, "name", f"{kind} ({self.model})")

    def propose(self, situation: Situation, preface: str = "") -> Proposal:
        if self.once and situation.round > 1:
            return Proposal(note="direct answer: one sample only")
        reply = self.ask(
            rewrite_messages(situation, self.feedback, preface),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        match = _FENCE.search(reply.text)
        if "NO CHANGE" in reply.text[:40]:
            return Proposal(raw=reply.text, usage=reply.usage, note="no change")
        if match is None:
            return Proposal(failure="reply has no ```python block", raw=reply.text, usage=reply.usage)
        text = match.group(1) if match.group(1).endswith("\n") else match.group(1) + "\n"
        module = module_of(situation.candidate)
        target = situation.candidate.with_files({**situation.candidate.files, module: text}, label="model")
        child = Child(target=target, name=f"model:{target.digest[:8]}", source="model")
        return Proposal(children=(child,), raw=reply.text, usage=reply.usage, note="model-written")


@dataclass(frozen=True)
class Rivals:
    """Proposes fixed named patches once, as rival children of one round (each validated and
    decided against the same verdict) — e.g. the chapter's candidate fixes side by side."""

    patches: tuple[tuple[str, Patch], ...]
    name: str = "rival patches"
    simulated: bool = True

    def propose(self, situation: Situation) -> Proposal:
        if situation.round > 1:
            return Proposal(note="the rivals were proposed in round 1")
        return Proposal(children=tuple(Child(patch=p, name=n, source="rival") for n, p in self.patches))
