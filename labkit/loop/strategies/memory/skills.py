"""A verified skill library with progressive disclosure (Voyager; Agent Skills) — SPEC §9.

- Only externally verified successes are stored: `SkillLibrary.add` takes the skill and the
  oracle's `Check` for it (a test run it passed); anything else is refused (MemoryRefused).
- A skill is executable code plus a description; the description is the retrieval key, ranked
  with BM25 (`bm25s`). A skill may call simpler skills already in the library (`calls`);
  `load` executes a skill with its dependencies, simplest first.
- Progressive disclosure: L1 = one metadata line per skill (always in the prompt), L2 = the
  full text (description + code) of the skills judged relevant, L3 = a bundled file read on
  demand. `prompt` says how many tokens each level put in (the buffer's 4-chars estimate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from labkit.core.errors import MemoryRefused
from labkit.loop.strategies.memory.episodic import tokens

__all__ = ["Check", "Disclosure", "Skill", "SkillLibrary"]


@dataclass(frozen=True)
class Check:
    """The external oracle's answer for one skill (tests run in a separate process)."""

    skill: str
    passed: bool
    detail: str = ""  # e.g. "3/3 tests passed" or the failing assertion


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str  # the Python function the code defines
    description: str  # the retrieval key (first sentence = the L1 line)
    code: str
    calls: tuple[str, ...] = ()  # simpler skills it calls
    files: Mapping[str, str] = field(default_factory=dict)  # L3: bundled files, read on demand
    verified: str = ""  # the oracle's evidence, set by the library

    def l1(self) -> str:
        first = self.description.split(". ")[0].rstrip(".")
        return f"- {self.name}: {first}"

    def l2(self) -> str:
        uses = f"\nCalls: {', '.join(self.calls)}" if self.calls else ""
        return f"## {self.name}\n{self.description}{uses}\n```python\n{self.code}```"


@dataclass(frozen=True)
class Disclosure:
    """One prompt's memory section and its cost per level."""

    text: str
    l1_tokens: int
    l2_tokens: int
    l3_tokens: int
    retrieved: tuple[str, ...]

    @property
    def total(self) -> int:
        return self.l1_tokens + self.l2_tokens + self.l3_tokens


class SkillLibrary:
    """Verified skills, a BM25 index over their descriptions, and progressive disclosure."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._index: Any = None
        self._l1_all: str | None = None  # every skill's L1 line, the same for every task until a skill is added

    def __len__(self) -> int:
        return len(self._skills)

    @property
    def skills(self) -> Mapping[str, Skill]:
        return MappingProxyType(self._skills)

    def add(self, skill: Skill, check: Check) -> Skill:
        """Store `skill` only if the oracle's `check` of it passed and its callees are stored."""
        if not isinstance(check, Check) or check.skill != skill.name:
            raise MemoryRefused(f"skill {skill.name!r}: no oracle check of this skill was given")
        if not check.passed:
            raise MemoryRefused(f"skill {skill.name!r} failed its external check ({check.detail}); not stored")
        missing = [c for c in skill.calls if c not in self._skills]
        if missing:
            raise MemoryRefused(f"skill {skill.name!r} calls {missing}, which are not verified skills in the library")
        if skill.name in self._skills:
            raise MemoryRefused(f"a skill named {skill.name!r} is already stored")
        stored = Skill(
            name=skill.name,
            description=skill.description,
            code=skill.code,
            calls=skill.calls,
            files=dict(skill.files),
            verified=check.detail or "passed",
        )
        self._skills[skill.name] = stored
        self._index = self._l1_all = None
        return stored

    def search(self, query: str, k: int = 3) -> list[str]:
        """The `k` skill names whose descriptions rank highest for `query` (BM25; zero scores dropped).

        Equal scores are common (skills that differ only in a constant the query does not name)
        and rank by when the skill was stored, earliest first. The ranking is labkit's, not
        bm25s's `retrieve`: its top-k selection (numpy's argpartition and argsort, whose order
        among equal keys depends on the CPU's SIMD path) put tied skills in another order on an
        AVX-512 machine. Scores are compared rounded to 4 decimals (float64), so a last-bit
        difference in the float32 scores cannot reorder them either."""
        import bm25s
        import numpy as np

        if not self._skills:
            return []
        names = list(self._skills)
        if self._index is None:
            corpus = [f"{n.replace('_', ' ')} {self._skills[n].description}" for n in names]
            index = bm25s.BM25()
            index.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
            self._index = (index, names)
        index, names = self._index
        words = [
            w
            for w in bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
            if w in index.vocab_dict
        ]
        if not words:
            return []
        scores = np.round(index.get_scores(words).astype(np.float64), 4)
        order = np.lexsort((np.arange(len(names)), -scores))  # by score, then by when stored
        return [names[int(i)] for i in order[:k] if scores[i] > 0]

    def scan(self, query: str, k: int = 3) -> list[str]:
        """Baseline for the benchmark: score every description by shared words, in Python."""
        q = set(query.lower().split())
        ranked = sorted(self._skills, key=lambda n: -len(q & set(self._skills[n].description.lower().split())))
        return ranked[:k]

    def prompt(self, query: str, k: int = 2, *, l1: str = "all", open_files: tuple[str, ...] = ()) -> Disclosure:
        """The memory section for one task: L1 for every skill (`l1="all"`, Agent Skills) or for
        the top `3*k` retrieved (`l1="retrieved"`), L2 for the top `k`, L3 for `open_files`
        ("skill/path") requested on demand."""
        top = self.search(query, k=max(k, 3 * k if l1 == "retrieved" else k))
        if l1 == "all":
            if self._l1_all is None:
                self._l1_all = "\n".join(s.l1() for s in self._skills.values())
            l1_text = self._l1_all
        else:
            l1_text = "\n".join(self._skills[n].l1() for n in top)
        full = [self._skills[n].l2() for n in top[:k]]
        files = []
        for ref in open_files:
            name, _, path = ref.partition("/")
            if name not in self._skills or path not in self._skills[name].files:
                raise KeyError(f"no bundled file {path!r} in skill {name!r}")
            files.append(f"### {ref}\n{self._skills[name].files[path]}")
        l2_text, l3_text = "\n\n".join(full), "\n\n".join(files)
        text = "\n\n".join(t for t in (l1_text, l2_text, l3_text) if t)
        return Disclosure(text, tokens(l1_text), tokens(l2_text), tokens(l3_text), tuple(top[:k]))

    def load(self, name: str) -> Callable[..., Any]:
        """The skill as a callable, its callees executed first (simplest first)."""
        namespace: dict[str, Any] = {}
        for n in self._order(name, ()):
            exec(compile(self._skills[n].code, f"<skill {n}>", "exec"), namespace)  # noqa: S102 - verified skill code
        fn = namespace[name]
        assert callable(fn)
        return fn

    def _order(self, name: str, seen: tuple[str, ...]) -> list[str]:
        if name in seen:
            raise MemoryRefused(f"skill {name!r} calls itself through {seen}")
        out: list[str] = []
        for c in self._skills[name].calls:
            out += [n for n in self._order(c, (*seen, name)) if n not in out]
        return [*out, name]
