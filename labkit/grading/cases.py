"""Case material on disk: a starting candidate, its protected acceptance, and named patches.

The one loader for every case labkit runs: the worked examples under data/, the repair
experiment's cases (visible + hidden tests) and a researcher's own (`labkit new-case`).
The format is `labkit.grading.case_spec.CaseSpec`; what it reads:

- code: the starting candidate (text files; a folder's contents or globs, tests excluded);
- tests: the visible protected tests, any layout (`tests/**/*.py`, flat `test_*.py`, …);
- fixtures: data files of any type the tests read, laid into the workspace and protected
  like the tests (default: every non-Python file beside the tests, under their folders);
- hidden: a second suite the loop never sees (default files: hidden/** laid at tests/);
- import_roots: folders on sys.path besides the workspace root (a `src/` layout);
- patches: unified diffs by name; patch_cap: the loop's size rule;
- final: a search case's sealed final tests, loaded as its hidden suite (scored, never shown).

A case names the states it can reach (`Case.states`: name -> `State(candidate, kind)`): the
start under its own name ("start", or "original" for a repair case) and each patch applied to
its base, each kind read from what the case measured (`initially_correct`, a patch's `effect`).
A case built in memory (HumanEval's problems, `labkit.experiments.arms.suites`) names them itself.

This module is the only reader of case.json: every other reader uses `Case.spec` (typed,
checked) and the accessors below.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal, NamedTuple

from labkit.core import patch as patching
from labkit.core.errors import CaseError, LabkitError
from labkit.core.paths import DATA
from labkit.core.types import Candidate, Patch
from labkit.grading.acceptance import AcceptanceSuite
from labkit.grading.case_spec import CaseSpec, GroupSpec, PatchSpec, read_spec

__all__ = ["Case", "CaseError", "State", "StateKind", "load_case"]

_SKIP_PARTS = frozenset({"__pycache__", ".pytest_cache", ".git", ".mypy_cache", ".ruff_cache"})


StateKind = Literal["correct", "overfit", "wrong", "unmeasured"]
# a patch's measured effect -> the kind of state it reaches (overfit: passes visible, fails hidden)
_KIND_OF_EFFECT: Mapping[str, StateKind] = {
    "resolves": "correct", "hidden_failure": "overfit", "breaks_protective": "wrong", "incomplete": "wrong",
}  # fmt: skip
START_BASES = ("original", "start")  # what a patch's `base` may call the start


class State(NamedTuple):
    """A named state a case can reach: its candidate and what the case measured it to be."""

    candidate: Candidate
    kind: StateKind


@dataclass(frozen=True, kw_only=True)
class Case:
    """One task's material (start, visible and hidden suites, patches) and the states it can reach."""

    name: str
    title: str
    environment: str
    start: Candidate
    suite: AcceptanceSuite
    patches: Mapping[str, Patch]
    patch_cap: Mapping[str, int] = field(default_factory=dict)
    root: Path = Path(".")
    hidden: AcceptanceSuite | None = None  # scored, never shown to the loop
    spec: CaseSpec = field(kw_only=True)  # case.json as checked: the one parse of it
    # name -> State, the start first; from a folder, each patch is applied only when asked for
    states: Mapping[str, State] = field(default_factory=dict, kw_only=True, compare=False, repr=False)

    @property
    def start_state(self) -> str:
        """The start's name among the states ("start", or "original" for a repair case)."""
        return self.spec.start_label

    @property
    def start_kind(self) -> StateKind:
        correct = self.spec.initially_correct
        return "unmeasured" if correct is None else "correct" if correct else "wrong"

    def candidate(self, state: str) -> Candidate:
        """The candidate of a named state (the start, or a patch applied to its base)."""
        try:
            return self.states[state].candidate
        except KeyError:
            raise CaseError(f"case {self.name!r} has no state {state!r}; it has {sorted(self.states)}") from None

    def of_kind(self, kind: StateKind) -> list[str]:
        """The names of the states of `kind`, sorted."""
        return sorted(n for n, s in self.states.items() if s.kind == kind)

    def patch(self, name: str) -> Patch:
        try:
            return self.patches[name]
        except KeyError:
            raise CaseError(f"case {self.name!r} has no patch {name!r}; it has {sorted(self.patches)}") from None

    @property
    def patch_specs(self) -> Mapping[str, PatchSpec]:
        """Each patch's entry in case.json (kind, base, effect, … for the repair cases)."""
        return dict(self.spec.patches)

    @property
    def notes(self) -> str:
        return self.spec.notes

    def path(self, rel: str) -> Path:
        """A file case.json names (relative to the case folder), e.g. its requirements."""
        _safe(str(self.root / "case.json"), "path", rel)
        return self.root / rel


def load_case(path: str | Path) -> Case:
    """Load a case directory (or a name under data/, e.g. "cache_isolation")."""
    root = Path(path)
    if not root.is_absolute() and not root.exists() and (DATA / root).exists():
        root = DATA / root
    if not root.is_dir():
        raise CaseError(f"{root} is not a case directory: it does not exist")
    meta_path = root / "case.json"
    if not meta_path.is_file():
        raise CaseError(f"{root} is not a case directory: no case.json")
    spec = read_spec(meta_path)
    where = str(meta_path)
    for r in spec.import_roots:
        _safe(where, "import_roots", r)
        if not (root / r).is_dir():
            raise CaseError(f"{where}: field 'import_roots': {r!r} is not a folder under {root}")

    visible_tests = _globbed(root, spec.tests, where, "tests", exclude=())
    tests_dirs = {PurePosixPath(p).parent for p in visible_tests}
    fixtures = _fixtures(root, spec, visible_tests, tests_dirs, where)
    hidden_files = _hidden_files(root, spec.hidden, where) if spec.hidden else {}
    if spec.hidden is not None and spec.final is not None:
        raise CaseError(
            f"{where}: fields 'hidden' and 'final' both given: a case has one hidden suite "
            "(a search case's sealed final tests are it)"
        )
    final_files = _globbed(root, [spec.final.pattern], where, "final.pattern", exclude=()) if spec.final else []
    protected_sources = set(visible_tests) | set(fixtures) | set(hidden_files.values()) | set(final_files)
    start = _start(root, spec, where, protected_sources)

    suite = _suite(
        f"{spec.name}" if spec.hidden is None else f"{spec.name}:visible",
        {**_texts(root, visible_tests, where, "tests"), **_blobs(root, fixtures, where)},
        spec.fail_to_pass,
        spec.pass_to_pass,
        spec.groups,
        spec.import_roots,
        where,
    )
    hidden = None
    if spec.final is not None:  # the sealed final tests: the case's hidden suite
        hidden = _suite(
            f"{spec.name} final (sealed)",
            _texts(root, final_files, where, "final.pattern"),
            spec.final.required,
            (),
            {},
            (),
            where,
        )
    if spec.hidden is not None:
        files = {lay: _text(root / src, where, "hidden.tests") for lay, src in hidden_files.items()}
        hidden = _suite(
            f"{spec.name}:hidden",
            {**files, **_blobs(root, fixtures, where)},
            spec.hidden.fail_to_pass,
            spec.hidden.pass_to_pass,
            {},
            spec.import_roots,
            where,
        )
    patches = {}
    for name, p in spec.patches.items():
        _safe(where, f"patches.{name}.file", p.file)
        diff_path = root / p.file
        if not diff_path.is_file():
            raise CaseError(f"{where}: field 'patches.{name}.file': {p.file!r} does not exist under {root}")
        patches[name] = Patch(_text(diff_path, where, f"patches.{name}.file"), description=p.text)
    for name, p in spec.patches.items():
        if p.base not in START_BASES and p.base not in patches:
            raise CaseError(
                f"{where}: field 'patches.{name}.base': expected 'original' or a patch name "
                f"{sorted(patches)}, got {p.base!r}"
            )
    case = Case(
        name=spec.name,
        title=spec.title or spec.name,
        environment=spec.environment,
        start=start,
        suite=suite,
        patches=patches,
        patch_cap=spec.patch_cap.as_dict(),
        root=root,
        hidden=hidden,
        spec=spec,
    )
    return replace(case, states=_PatchedStates(case))


class _PatchedStates(Mapping[str, State]):
    """A case's start and each patch applied to its base, computed when first read (a case
    whose patch no longer applies still loads: `labkit check` reports it)."""

    def __init__(self, case: Case) -> None:
        self._case, self._names = case, (case.start_state, *case.patches)
        self._done: dict[str, State] = {case.start_state: State(case.start, case.start_kind)}

    def __getitem__(self, name: str) -> State:
        if name not in self._done:
            if name not in self._case.patches:
                raise KeyError(name)
            spec = self._case.spec.patches[name]
            on_start = spec.base in (*START_BASES, self._case.start_state)
            parent = self._case.start if on_start else self[spec.base].candidate
            patched = patching.apply(parent, self._case.patches[name], label=name)
            self._done[name] = State(patched, _KIND_OF_EFFECT.get(spec.effect, "unmeasured"))
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


# -- files ------------------------------------------------------------------------------------


def _safe(where: str, field_name: str, rel: str) -> None:
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts or "\\" in rel:
        raise CaseError(f"{where}: field {field_name!r}: expected a relative path inside the case, got {rel!r}")


def _files(base: Path) -> list[Path]:
    return [p for p in sorted(base.rglob("*")) if p.is_file() and not (_SKIP_PARTS & set(p.relative_to(base).parts))]


def _globbed(root: Path, patterns: Iterable[str], where: str, field_name: str, exclude: Iterable[str]) -> list[str]:
    skip = set(exclude)
    out: dict[str, None] = {}
    for pattern in patterns:
        _safe(where, field_name, pattern)
        hits = [
            p.relative_to(root).as_posix()
            for p in sorted(root.glob(pattern))
            if p.is_file() and not (_SKIP_PARTS & set(p.relative_to(root).parts))
        ]
        if not hits and field_name != "code":
            raise CaseError(f"{where}: field {field_name!r}: no files match {pattern!r} under {root}")
        out.update((h, None) for h in hits if h not in skip)
    return list(out)


def _fixtures(root: Path, spec: CaseSpec, tests: list[str], dirs: set[PurePosixPath], where: str) -> list[str]:
    if spec.fixtures is not None:
        return _globbed(root, spec.fixtures, where, "fixtures", exclude=tests)
    # Default: every non-Python file under the tests' own folders (not the case root itself).
    out = []
    for d in sorted(x for x in dirs if x != PurePosixPath(".")):
        for p in _files(root / d):
            rel = p.relative_to(root).as_posix()
            if p.suffix != ".py" and rel not in tests:
                out.append(rel)
    return out


def _hidden_files(root: Path, group: GroupSpec, where: str) -> dict[str, str]:
    """Workspace path -> case file for the hidden tests."""
    if isinstance(group.tests, dict):
        for lay, src in group.tests.items():
            _safe(where, "hidden.tests", lay)
            _safe(where, "hidden.tests", src)
            if not (root / src).is_file():
                raise CaseError(f"{where}: field 'hidden.tests': {src!r} does not exist under {root}")
        return dict(group.tests)
    if group.tests is not None:
        return {p: p for p in _globbed(root, group.tests, where, "hidden.tests", exclude=())}
    base = root / "hidden"
    if not base.is_dir():
        raise CaseError(f"{where}: field 'hidden.tests': not given, and the default folder {base} does not exist")
    return {
        "tests/" + p.relative_to(base).as_posix(): p.relative_to(root).as_posix()
        for p in _files(base)
        if p.suffix == ".py"
    }


def _start(root: Path, spec: CaseSpec, where: str, protected: set[str]) -> Candidate:
    if isinstance(spec.code, str):  # a folder whose contents are the code
        _safe(where, "code", spec.code)
        base = root / spec.code
        if not base.is_dir():
            raise CaseError(f"{where}: field 'code': starting code folder {base} does not exist")
        rels = [p.relative_to(base).as_posix() for p in _files(base)]
    else:
        base = root
        for pattern in spec.code:  # a plain path (the repair format's `module`) must exist
            if not any(c in pattern for c in "*?[") and not (root / pattern).is_file():
                field_name = "module" if spec.module == pattern else "code"
                raise CaseError(f"{where}: field {field_name!r}: cannot read {root / pattern}: no such file")
        skip = protected | {"case.json"} | {p.file for p in spec.patches.values()}
        rels = [
            r
            for r in _globbed(root, spec.code, where, "code", exclude=skip)
            if not r.startswith(("hidden/", "patches/"))
        ]
    if not rels:
        raise CaseError(f"{where}: field 'code': no starting code files match {spec.code!r}")
    files = {r: _text(base / r, where, "code") for r in rels}
    return Candidate(files, label=spec.start_label)


def _text(path: Path, where: str, field_name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CaseError(
            f"{where}: field {field_name!r}: {path} is not UTF-8 text (code, tests and patches are "
            "text; put binary data under 'fixtures')"
        ) from None
    except OSError as exc:
        raise CaseError(f"{where}: field {field_name!r}: cannot read {path}: {exc}") from None


def _texts(root: Path, rels: Iterable[str], where: str, field_name: str) -> dict[str, str]:
    return {r: _text(root / r, where, field_name) for r in rels}


def _blobs(root: Path, rels: Iterable[str], where: str) -> dict[str, str | bytes]:
    """Fixtures: text stays text (readable in the suite); anything else is kept as bytes."""
    out: dict[str, str | bytes] = {}
    for r in rels:
        try:
            data = (root / r).read_bytes()
        except OSError as exc:
            raise CaseError(f"{where}: field 'fixtures': cannot read {root / r}: {exc}") from None
        try:
            out[r] = data.decode("utf-8")
        except UnicodeDecodeError:
            out[r] = data
    return out


def _suite(
    name: str,
    tests: Mapping[str, str | bytes],
    f2p: Iterable[str],
    p2p: Iterable[str],
    groups: Mapping[str, Iterable[str]],
    import_roots: Iterable[str],
    where: str,
) -> AcceptanceSuite:
    try:
        return AcceptanceSuite(
            name=name,
            tests=tests,
            fail_to_pass=tuple(f2p),
            pass_to_pass=tuple(p2p),
            groups={g: tuple(ids) for g, ids in groups.items()},
            import_roots=tuple(import_roots),
        )
    except LabkitError as exc:
        raise CaseError(f"{where}: {exc}") from None
