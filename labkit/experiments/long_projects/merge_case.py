"""A merge case on disk: parts of one task, the DAG between them, and every check's suite.

`dag.json` (see `data/long_projects/receipt_pipeline/README.md`) names the given modules
(the plan's glue), the parts (files + their own local tests), the edges (producer, consumer,
what crosses, the interface check), the integration tests, the hidden benchmark and the
scripted repairer's replies. Everything here is read, checked and frozen; nothing runs.

A *check* is one verification unit with its own protected suite: `local:<part>` (the part's
own tests), `edge:<producer>-><consumer>` (counterexample search on that interface) and
`integration`. Candidates are whole merges: the given modules plus one variant of each part.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labkit.core.errors import CaseError
from labkit.core.paths import DATA
from labkit.core.types import Candidate
from labkit.experiments.long_projects.merge_graph import Dag, Edge
from labkit.grading.acceptance import AcceptanceSuite

__all__ = ["CASE", "MergeCase", "Part", "Repair", "load_merge_case"]

CASE = DATA / "long_projects" / "receipt_pipeline"


@dataclass(frozen=True)
class Part:
    """One variant of a part: its code files and its own local tests (workspace path -> text)."""

    name: str
    files: Mapping[str, str]
    tests: Mapping[str, str]


@dataclass(frozen=True)
class Repair:
    """A scripted repairer's reply: for a refuted edge, the part to change and the premise it changes."""

    edge: str
    part: str
    premise: str
    why: str
    variant: Part


@dataclass(frozen=True, kw_only=True)
class MergeCase:
    name: str
    title: str
    premise: str
    given: Mapping[str, str]
    parts: Mapping[str, Part]
    dag: Dag
    edge_checks: Mapping[str, str]  # each edge's check file (workspace path -> text)
    helpers: Mapping[str, str]  # laid beside every edge check (the receipt generator)
    integration: Mapping[str, str]
    hidden: Mapping[str, str]
    repairs: tuple[Repair, ...]

    def merged(self, variants: Mapping[str, Part], label: str) -> Candidate:
        """The whole merge: the given modules plus each part's chosen variant."""
        files = dict(self.given)
        for name in self.dag.parts:
            files.update(variants[name].files)
        return Candidate(files=files, label=label)

    def suite(self, check: str, variants: Mapping[str, Part]) -> AcceptanceSuite:
        """The protected suite of one check, for the variants in use (a repaired part brings its own tests)."""
        if check.startswith("local:"):
            tests: Mapping[str, str] = variants[check.removeprefix("local:")].tests
        elif check.startswith("edge:"):
            path = self.dag.edge(check.removeprefix("edge:")).check
            tests = {path: self.edge_checks[path], **self.helpers}
        elif check == "integration":
            tests = self.integration
        else:
            raise CaseError(f"{self.name}: no check {check!r}; checks are {list(self.dag.checks())} and 'integration'")
        return AcceptanceSuite(
            name=f"{self.name}:{check}", tests=tests, fail_to_pass=tuple(_test_ids(tests)), pass_to_pass=()
        )

    def hidden_suite(self) -> AcceptanceSuite:
        return AcceptanceSuite(
            name=f"{self.name}:hidden", tests=self.hidden, fail_to_pass=tuple(_test_ids(self.hidden)), pass_to_pass=()
        )


def _test_ids(tests: Mapping[str, str]) -> list[str]:
    """Every test function of every test file, as a required node id (all its parametrisations)."""
    return [
        f"{p}::{name}"
        for p in sorted(tests)
        if Path(p).name.startswith("test_")
        for name in re.findall(r"^def (test_\w+)", tests[p], re.M)
    ]


def load_merge_case(folder: str | Path = CASE) -> MergeCase:
    root = Path(folder)
    path = root / "dag.json"
    try:
        spec: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise CaseError(f"{root}: no dag.json (a merge case needs one; see {CASE}/README.md)") from None
    except json.JSONDecodeError as exc:
        raise CaseError(f"{path}: not JSON: {exc}") from None

    def field(key: str) -> Any:
        if key not in spec:
            raise CaseError(f"{path}: field {key!r} is missing")
        return spec[key]

    def read(mapping: Any, where: str) -> dict[str, str]:
        if not isinstance(mapping, dict):
            raise CaseError(f"{path}: field {where!r}: expected {{workspace path: case file}}, got {mapping!r}")
        out = {}
        for target, source in mapping.items():
            file = root / source
            if not file.is_file():
                raise CaseError(f"{path}: field {where!r}: {source} does not exist")
            out[target] = file.read_text()
        return out

    def part(name: str, entry: Any, where: str) -> Part:
        if not isinstance(entry, dict) or "files" not in entry or "tests" not in entry:
            raise CaseError(f"{path}: field {where!r}: expected {{'files': {{...}}, 'tests': {{...}}}}")
        return Part(name, read(entry["files"], f"{where}.files"), read(entry["tests"], f"{where}.tests"))

    parts = {name: part(name, entry, f"parts.{name}") for name, entry in field("parts").items()}
    try:
        edges = tuple(Edge(e["producer"], e["consumer"], e["carries"], e["check"]) for e in field("edges"))
    except (KeyError, TypeError):
        raise CaseError(f"{path}: field 'edges': each needs producer, consumer, carries, check") from None
    dag = Dag(tuple(parts), edges)
    repairs = []
    for i, r in enumerate(field("repairs")):
        try:
            edge, name = r["edge"], r["part"]
            dag.edge(edge)
            repairs.append(Repair(edge, name, r["premise"], r["why"], part(name, r, f"repairs[{i}]")))
        except (KeyError, TypeError, ValueError) as exc:
            raise CaseError(f"{path}: field 'repairs[{i}]': {exc}") from None
    return MergeCase(
        name=str(field("name")),
        title=str(spec.get("title", "")),
        premise=str(spec.get("premise", "")),
        given=read(field("given"), "given"),
        parts=parts,
        dag=dag,
        edge_checks=read({e.check: e.check for e in edges}, "edges[].check"),
        helpers=read(spec.get("check_helpers", {}), "check_helpers"),
        integration=read(field("integration"), "integration"),
        hidden=read(field("hidden"), "hidden"),
        repairs=tuple(repairs),
    )
