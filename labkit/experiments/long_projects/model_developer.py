"""The developer as a model by name, through labkit's model layer (litellm or labkit's providers).

`ModelDeveloper("openai/gpt-4o-mini", project)` (or `labkit/smollm2`, offline) is a Strategy
like the simulated developer: for each work item it asks the model once with the requirement,
the module's current text and the item's visible evidence (failing dev or QA test ids — never a
hidden one), and writes the module the reply's one ```python block holds. The engine's step 3
pays the replies' usage through the run's budget and records it; its candidate runs only in the
validator. The harness's default stays the simulated developer (no model, no key).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labkit.core.errors import CaseError
from labkit.core.types import Reply, Usage
from labkit.experiments.long_projects.items import Item
from labkit.experiments.long_projects.project import Project
from labkit.experiments.long_projects.roles import Work
from labkit.loop.engine.strategy import Child, Proposal, Situation

__all__ = ["ModelDeveloper", "module_of", "prompt_for"]

_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.S)


def module_of(project: Project, files: dict[str, str] | Any, rid: str) -> str:
    """The module a requirement lives in: the file whose docstring opens with the requirement's id."""
    for path, text in sorted(files.items()):
        if text.startswith(f'"""{rid}:'):
            return str(path)
    raise CaseError(f"project {project.name!r}: no module's docstring starts with {rid}:")


def prompt_for(project: Project, item: Item, path: str, text: str) -> list[dict[str, str]]:
    evidence = "\n".join(f"- {n}" for n in item.evidence) or "- (none)"
    return [
        {
            "role": "system",
            "content": "You are the developer of a small Python project. Reply with the whole "
            "new module in one ```python block and nothing else.",
        },
        {
            "role": "user",
            "content": f"Requirement {item.id}: {item.title}\n\nFailing checks (visible evidence):\n"
            f"{evidence}\n\nThe module {path} now:\n```python\n{text}```\n\nWrite {path} so the requirement holds.",
        },
    ]


@dataclass(kw_only=True)
class ModelDeveloper:
    """A Strategy that asks `model` once per work item (see the module's docstring)."""

    model: str
    project: Project
    max_tokens: int = 1024
    complete: Callable[..., Reply] | None = None  # injected instead of the gateway (tests)
    work: Work = Work(0, ())
    choices: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return f"model developer ({self.model})"

    @property
    def simulated(self) -> bool:
        from labkit.models.choice import is_simulated

        return is_simulated(self.model)

    @property
    def upper(self) -> Usage:
        n = max(1, len(self.work.items))
        return Usage(
            tokens=(4096 + self.max_tokens) * n,
            calls=n,
            wall_seconds=120.0 * n,
            cost_units=float(n),
        )

    def propose(self, situation: Situation) -> Proposal:
        from labkit.models.role import ModelRole

        if not self.work.items:
            return Proposal(note="no work items")
        role = ModelRole(model=self.model, complete=self.complete)
        files, usage, choices = dict(situation.candidate.files), Usage(), []
        for item in self.work.items:
            path = module_of(self.project, files, item.id)
            reply = role.ask(
                prompt_for(self.project, item, path, files[path]),
                role="developer",
                round=situation.round,
                max_tokens=self.max_tokens,
            )
            usage = usage + reply.usage
            found = _BLOCK.search(reply.text)
            if found is None:
                return Proposal(
                    failure=f"{item.id}: the reply holds no ```python block",
                    raw=reply.text,
                    usage=usage,
                )
            files[path] = found.group(1)
            choices.append((item.id, "model"))
        self.choices = tuple(choices)
        note = ", ".join(f"{r}:{v}" for r, v in choices)
        target = situation.candidate.with_files(files, label=note)
        return Proposal(children=(Child(target=target, name=note, source="model"),), usage=usage, note=note)
