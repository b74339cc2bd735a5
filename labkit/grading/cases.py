"""Case material on disk: a starting candidate, its protected acceptance, and named patches.

A case directory holds `case.json` (names, F2P/P2P node ids, display groups, patches,
patch cap), the starting code under `start/` (or the folder `case.json` names), the
protected tests under `tests/`, and unified diffs under `patches/`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.errors import CaseError
from labkit.core.paths import DATA
from labkit.core.types import Candidate, Patch
from labkit.grading.acceptance import AcceptanceSuite


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    environment: str
    start: Candidate
    suite: AcceptanceSuite
    patches: Mapping[str, Patch]
    patch_cap: Mapping[str, int] = field(default_factory=dict)
    root: Path = Path(".")

    def patch(self, name: str) -> Patch:
        try:
            return self.patches[name]
        except KeyError:
            raise CaseError(
                f"case {self.name!r} has no patch {name!r}; it has {sorted(self.patches)}"
            ) from None


def _read_tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def load_case(path: str | Path) -> Case:
    """Load a case directory (or a name under data/, e.g. "cache_isolation")."""
    root = Path(path)
    if not root.is_absolute() and not root.exists():
        root = DATA / root
    meta_path = root / "case.json"
    if not meta_path.is_file():
        raise CaseError(f"{root} is not a case directory: no case.json")
    meta: dict[str, Any] = json.loads(meta_path.read_text())
    for key in ("name", "fail_to_pass", "pass_to_pass"):
        if key not in meta:
            raise CaseError(f"{meta_path}: missing {key!r}")
    start_dir = root / meta.get("start", "start")
    if not start_dir.is_dir():
        raise CaseError(f"{meta_path}: starting code folder {start_dir} does not exist")
    suite = AcceptanceSuite.from_dir(
        root,
        name=meta["name"],
        fail_to_pass=meta["fail_to_pass"],
        pass_to_pass=meta["pass_to_pass"],
        groups=meta.get("groups"),
    )
    patches = {}
    for name, spec in meta.get("patches", {}).items():
        diff_path = root / spec["file"]
        if not diff_path.is_file():
            raise CaseError(f"{meta_path}: patch {name!r} file {diff_path} does not exist")
        patches[name] = Patch(diff_path.read_text(), description=spec.get("label", name))
    return Case(
        name=meta["name"],
        title=meta.get("title", meta["name"]),
        environment=meta.get("environment", ""),
        start=Candidate(_read_tree(start_dir), label=meta.get("start_label", "start")),
        suite=suite,
        patches=patches,
        patch_cap=meta.get("patch_cap", {}),
        root=root,
    )
