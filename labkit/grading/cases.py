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

from labkit.core.errors import CaseError, LabkitError
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
    hidden: AcceptanceSuite | None = None  # scored, never shown to the loop
    meta: Mapping[str, Any] = field(default_factory=dict)  # case.json as read

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
    try:
        meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseError(f"{meta_path}: cannot read: {exc}") from None
    if "id" in meta and "name" not in meta:  # the repair format names a case by "id"
        return _load_visible_hidden(root, meta)
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


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseError(f"cannot read {path}: {exc.strerror or exc}") from None


def _load_visible_hidden(root: Path, meta: dict[str, Any]) -> Case:
    """The multi-case repair format: `id`, one `module`, `visible` tests under tests/, `hidden`
    tests under hidden/ (laid at tests/ when scored), and a list of named patches."""
    try:
        name, module = meta["id"], meta["module"]
        vis, hid = meta["visible"], meta["hidden"]
        visible = AcceptanceSuite(
            f"{name}:visible", {"tests/test_visible.py": _text(root / "tests" / "test_visible.py")},
            tuple(vis["fail_to_pass"]), tuple(vis["pass_to_pass"]),
        )  # fmt: skip
        hidden = AcceptanceSuite(
            f"{name}:hidden", {"tests/test_hidden.py": _text(root / "hidden" / "test_hidden.py")},
            tuple(hid["fail_to_pass"]), tuple(hid["pass_to_pass"]),
        )  # fmt: skip
        patches = {
            p["name"]: Patch(_text(root / "patches" / f"{p['name']}.diff"), p.get("description", ""))
            for p in meta["patches"]
        }
        start = Candidate({module: _text(root / module)}, label="original")
    except (KeyError, TypeError) as exc:
        raise CaseError(f"malformed case in {root}: {type(exc).__name__}: {exc}") from None
    except LabkitError as exc:
        if isinstance(exc, CaseError):
            raise
        raise CaseError(f"malformed case in {root}: {exc}") from None
    return Case(name, meta.get("title", name), meta.get("environment", ""), start, visible,
                patches, meta.get("patch_cap", {}), root, hidden, meta)  # fmt: skip
