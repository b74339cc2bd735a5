"""The repair experiment's view of a Case: a buggy (or already correct) module, visible and
hidden tests, and real patches labelled by kind and measured effect.

There is no second parser: `load_cases` reads each folder with `labkit.grading.cases.load_case`
and `RepairCase` checks, once, that the Case's typed spec carries what a repair case needs
(slice, module, initially_correct, each patch's kind and effect). Everything else — the start,
the suites, the named states a repairer can reach — is the Case's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal, cast, get_args

from labkit.core.paths import DATA
from labkit.core.types import Candidate, Patch
from labkit.experiments.case_task import CaseView
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.cases import Case, CaseError, load_case

__all__ = ["CASES_DIR", "CasePatch", "RepairCase", "load_cases"]

CASES_DIR = DATA / "repair_cases"

PatchKind = Literal["fix", "wrong", "tempt"]
Effect = Literal["resolves", "hidden_failure", "breaks_protective", "incomplete"]


@dataclass(frozen=True, kw_only=True)
class CasePatch:
    """One of a case's real patches. `base` is what it applies to: the original or the fix."""

    name: str
    kind: PatchKind
    base: str
    patch: Patch
    effect: Effect  # measured when the case was built (see data/repair_cases/build.py)
    description: str = ""


@dataclass(frozen=True)
class RepairCase(CaseView):
    """A Case seen as a repair case (the repair experiment's words: original, visible, hidden)."""

    case: Case

    def __post_init__(self) -> None:
        spec, where = self.case.spec, self.case.root / "case.json"
        if self.case.hidden is None:
            raise CaseError(f"malformed case in {self.case.root}: a repair case needs hidden tests")
        for key in ("slice", "module"):
            if not getattr(spec, key):
                raise CaseError(f"{where}: field {key!r} is required for a repair case")
        if spec.initially_correct is None:
            raise CaseError(f"{where}: field 'initially_correct' is required for a repair case")
        for name, p in spec.patches.items():
            for key in ("kind", "effect"):
                if not getattr(p, key):
                    raise CaseError(f"{where}: field 'patches.{name}.{key}' is required for a repair case")
            if p.effect not in get_args(Effect):
                raise CaseError(
                    f"{where}: field 'patches.{name}.effect': expected one of {get_args(Effect)}, got {p.effect!r}"
                )

    @property
    def slice(self) -> str:
        return self.case.spec.slice

    @property
    def module(self) -> str:
        return self.case.spec.module

    @property
    def initially_correct(self) -> bool:
        return bool(self.case.spec.initially_correct)

    @property
    def flaky(self) -> tuple[str, ...]:
        return self.case.spec.flaky

    @property
    def oscillates(self) -> tuple[str, ...]:
        return self.case.spec.oscillates

    @property
    def original(self) -> Candidate:
        """The start (its state name is "original")."""
        return self.case.start

    @property
    def visible(self) -> AcceptanceSuite:
        return self.case.suite

    @property
    def hidden(self) -> AcceptanceSuite:
        assert self.case.hidden is not None  # checked in __post_init__
        return self.case.hidden

    @cached_property
    def patches(self) -> tuple[CasePatch, ...]:
        return tuple(
            CasePatch(
                name=name,
                kind=cast(PatchKind, p.kind),
                base=p.base,
                patch=self.case.patch(name),
                effect=cast(Effect, p.effect),
                description=p.description,
            )
            for name, p in self.case.spec.patches.items()
        )

    def patch(self, name: str) -> CasePatch:
        for p in self.patches:
            if p.name == name:
                return p
        raise CaseError(f"case {self.id!r} has no patch {name!r}; it has {[p.name for p in self.patches]}")

    def candidate(self, name: str = "original") -> Candidate:
        """The original with patch `name` applied (on top of the fix, if that is its base)."""
        return self.case.candidate(name)


def load_cases(root: str | Path = CASES_DIR, ids: Iterable[str] | None = None) -> tuple[RepairCase, ...]:
    """Read repair cases from `root` (every subdirectory with a case.json, or just `ids`)."""
    base = Path(root)
    if not base.is_dir():
        raise CaseError(f"no repair cases at {base}: not a directory")
    dirs = sorted(p.parent for p in base.glob("*/case.json"))
    if ids is not None:
        by_name = {d.name: d for d in dirs}
        missing = [i for i in ids if i not in by_name]
        if missing:
            raise CaseError(f"no repair case {missing[0]!r} under {base}; there are {sorted(by_name)}")
        dirs = [by_name[i] for i in ids]
    if not dirs:
        raise CaseError(f"no repair cases (*/case.json) under {base}")
    return tuple(RepairCase(load_case(d)) for d in dirs)
