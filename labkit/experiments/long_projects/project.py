"""A long project's case: requirements with dev tests, QA checks, a hidden benchmark, variants.

The folder (data/long_projects/shop is the example; the README's "Bring your own long project"
documents it) holds `project.json`, the start code, one dev test file per requirement, QA's
checks written from the requirements (each tagged with the kind of case it probes), the hidden
benchmark, and the simulated developer's variants: for each requirement the files a `good`
change writes, and optionally a `blind` one (passes the dev tests, misses a case of the kind in
`blind_kinds`) and a `slip` (fails its own dev tests).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from labkit.core.errors import CaseError
from labkit.core.paths import data_root
from labkit.core.types import Candidate
from labkit.grading.acceptance import AcceptanceSuite

__all__ = ["Project", "QaCheck", "Requirement", "load_project", "test_names"]


@dataclass(frozen=True)
class Requirement:
    id: str
    title: str
    dev_file: str
    dev_tests: tuple[str, ...]  # node ids in dev_file


@dataclass(frozen=True)
class QaCheck:
    nodeid: str
    requirement: str
    kind: str  # the kind of case it probes ("boundary", "rounding", "plain", ...)


@dataclass(frozen=True, kw_only=True)
class Project:
    name: str
    title: str
    root: Path
    start: Candidate
    requirements: tuple[Requirement, ...]
    dev_files: Mapping[str, str]  # path -> text of every dev test file
    qa_file: str
    qa_text: str
    qa_checks: tuple[QaCheck, ...]
    hidden: AcceptanceSuite  # never handed to a role
    hidden_requirement: Mapping[str, str]  # hidden node id -> requirement (the reader's report)
    variants: Mapping[str, Mapping[str, Mapping[str, str]]]  # requirement -> label -> files
    blind_kinds: Mapping[str, str]  # requirement -> the kind its `blind` variant misses

    def requirement(self, rid: str) -> Requirement:
        for r in self.requirements:
            if r.id == rid:
                return r
        raise CaseError(f"project {self.name!r} has no requirement {rid!r}")

    @property
    def dev_tests(self) -> tuple[str, ...]:
        return tuple(n for r in self.requirements for n in r.dev_tests)

    def requirement_of(self, nodeid: str) -> str:
        """The requirement a dev test belongs to."""
        for r in self.requirements:
            if nodeid in r.dev_tests:
                return r.id
        raise CaseError(f"project {self.name!r}: {nodeid!r} is no requirement's dev test")

    def dev_suite(self, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str]) -> AcceptanceSuite:
        """The dev tests as one protected suite, with the required ids the caller names."""
        return AcceptanceSuite(
            name=f"{self.name} dev",
            tests=self.dev_files,
            fail_to_pass=tuple(fail_to_pass),
            pass_to_pass=tuple(pass_to_pass),
        )

    def qa_suite(self, checks: Sequence[QaCheck]) -> AcceptanceSuite:
        return AcceptanceSuite(
            name=f"{self.name} qa",
            tests={self.qa_file: self.qa_text},
            fail_to_pass=tuple(c.nodeid for c in checks),
            pass_to_pass=(),
        )


def test_names(text: str, where: str) -> tuple[str, ...]:
    """The module-level test functions of a test file, in order."""
    try:
        body = ast.parse(text).body
    except SyntaxError as e:
        raise CaseError(f"{where}: not Python ({e})") from e
    return tuple(n.name for n in body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_"))


def _read(root: Path, rel: str, field: str) -> str:
    path = root / rel
    if not path.is_file():
        raise CaseError(f"{root / 'project.json'}: field {field!r}: {rel} is not a file")
    return path.read_text(encoding="utf-8")


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def load_project(name_or_path: str | Path = "shop") -> Project:
    """Read a long project's folder: a name under data/long_projects/, or a path."""
    root = Path(name_or_path)
    if not root.is_dir():
        root = data_root() / "long_projects" / str(name_or_path)
    spec = root / "project.json"
    if not spec.is_file():
        raise CaseError(f"{root}: no project.json (a long project's folder holds one; see the README)")
    try:
        meta = json.loads(spec.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CaseError(f"{spec}: not JSON ({e})") from e
    for key in ("name", "start", "requirements", "qa", "hidden", "variants"):
        if key not in meta:
            raise CaseError(f"{spec}: missing field {key!r}")
    start_dir = root / meta["start"]
    if not start_dir.is_dir():
        raise CaseError(f"{spec}: field 'start': {meta['start']} is not a folder")
    start = Candidate(_files(start_dir), label="start")
    reqs, dev_files = [], {}
    for rid, r in meta["requirements"].items():
        text = _read(root, r.get("dev", ""), f"requirements.{rid}.dev")
        names = test_names(text, r["dev"])
        if not names:
            raise CaseError(f"{spec}: field 'requirements.{rid}.dev': {r['dev']} has no test functions")
        dev_files[r["dev"]] = text
        reqs.append(Requirement(rid, r.get("title", ""), r["dev"], tuple(f"{r['dev']}::{n}" for n in names)))
    ids = {r.id for r in reqs}
    qa_file = meta["qa"]["file"]
    qa_text = _read(root, qa_file, "qa.file")
    defined = set(test_names(qa_text, qa_file))
    checks = []
    for name, c in meta["qa"]["checks"].items():
        if name not in defined or c.get("requirement") not in ids:
            raise CaseError(f"{spec}: field 'qa.checks.{name}': no such test in {qa_file}, or an unknown requirement")
        checks.append(QaCheck(f"{qa_file}::{name}", c["requirement"], c.get("kind", "plain")))
    hidden_file = meta["hidden"]["file"]
    hidden_text = _read(root, hidden_file, "hidden.file")
    hidden_req = {f"{hidden_file}::{n}": rid for n, rid in meta["hidden"]["requirements"].items()}
    if set(hidden_req.values()) - ids:
        raise CaseError(f"{spec}: field 'hidden.requirements' names unknown requirements")
    hidden = AcceptanceSuite(
        name=f"{meta['name']} hidden benchmark",
        tests={hidden_file: hidden_text},
        fail_to_pass=tuple(hidden_req),
        pass_to_pass=(),
    )
    variants: dict[str, Mapping[str, Mapping[str, str]]] = {}
    for rid, labels in meta["variants"].items():
        if rid not in ids or "good" not in labels:
            raise CaseError(f"{spec}: field 'variants.{rid}': an unknown requirement, or no 'good' variant")
        variants[rid] = MappingProxyType({lab: MappingProxyType(_files(root / rel)) for lab, rel in labels.items()})
    return Project(
        name=meta["name"],
        title=meta.get("title", ""),
        root=root,
        start=start,
        requirements=tuple(reqs),
        dev_files=MappingProxyType(dev_files),
        qa_file=qa_file,
        qa_text=qa_text,
        qa_checks=tuple(checks),
        hidden=hidden,
        hidden_requirement=MappingProxyType(hidden_req),
        variants=MappingProxyType(variants),
        blind_kinds=MappingProxyType(dict(meta.get("blind_kinds", {}))),
    )
