"""The case.json format, specified once: a pydantic model and the errors it gives.

A case directory holds `case.json` and the files it names. Every path is relative to the
case directory and uses `/`. The sandbox workspace mirrors the case directory: a test at
`tests/test_a.py` runs as `tests/test_a.py`, a module at `src/pkg/mod.py` as `src/pkg/mod.py`.

    {
      "name": "my-case",                       # required (the repair cases say "id")
      "title": "...", "environment": "pkg 1.2 · python 3.11",
      "code": ["*.py"],                        # globs of the starting candidate's files
                                               #   or "start" = a folder whose contents are the code
      "import_roots": ["src"],                 # folders on sys.path besides the workspace root
      "tests": ["tests/**/*.py"],              # the visible protected tests (any layout)
      "fixtures": ["tests/data/*"],            # data files of any type, laid in, protected
      "fail_to_pass": ["tests/test_a.py::test_x"],
      "pass_to_pass": ["tests/test_a.py::test_y"],
      "hidden": {"fail_to_pass": [...], "pass_to_pass": [...],
                 "tests": {"tests/test_hidden.py": "hidden/test_hidden.py"}},
      "groups": {"isolation": ["tests/test_a.py::test_x"]},
      "patches": {"fix": {"file": "patches/fix.diff", "label": "the fix"}},
      "patch_cap": {"max_hunks": 2, "max_lines": 8},
      "notes": "anything a reader of the case should know"
    }

The multi-case repair format (`id`, `module`, `visible`, `hidden`, a list of patches with
`kind`/`base`/`effect`) is the same schema: see `CaseSpec`. Malformed input raises
`labkit.core.errors.CaseError` naming the file, the field and what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from labkit.core.errors import CaseError

__all__ = [
    "COST_KINDS",
    "ROUTE_ORDERS",
    "CaseSpec",
    "FinalSpec",
    "GroupSpec",
    "PatchCap",
    "PatchSpec",
    "TestChangeSpec",
    "read_spec",
]

COST_KINDS = ("generate", "execute", "verify", "confirm")
# How a search case's routes are offered: by label (alphabetical), by size (smallest diff
# first, then label), or as listed in case.json (a stated choice, not the default).
ROUTE_ORDERS = ("label", "size", "listed")

_STRICT = ConfigDict(extra="forbid", frozen=True)


class PatchSpec(BaseModel):
    """One named patch: a unified diff file, and what it is for."""

    model_config = _STRICT
    name: str = ""
    file: str = Field(min_length=1)  # required: a missing one is a CaseError, never a guess
    label: str = ""
    description: str = ""
    kind: Literal["fix", "wrong", "tempt", ""] = ""
    base: str = "original"  # what it applies to: "original" (the start) or another patch's name
    effect: str = ""  # measured effect, for cases built with one (e.g. "resolves")
    hidden_failing: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.label or self.description or self.name


class PatchCap(BaseModel):
    """The loop's patch-size rule: a larger patch is validated but rolled back as not attributable."""

    model_config = _STRICT
    max_files: StrictInt | None = Field(default=None, gt=0)
    max_hunks: StrictInt | None = Field(default=None, gt=0)
    max_lines: StrictInt | None = Field(default=None, gt=0)

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class GroupSpec(BaseModel):
    """A set of protected tests and the node ids that must pass: visible or hidden acceptance."""

    model_config = _STRICT
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    # globs relative to the case dir (laid at the same path), or {workspace path: case file}
    tests: tuple[str, ...] | dict[str, str] | None = None


class ExcludedTest(BaseModel):
    """A test the case names but does not require, and why (e.g. an xfail-marked PASS_TO_PASS)."""

    model_config = _STRICT
    id: str
    reason: str


class TestChangeSpec(BaseModel):
    """A proposed change to a protected test: the test file, its replacement, renamed test ids."""

    model_config = _STRICT
    path: str = Field(min_length=1)
    file: str = Field(min_length=1)
    replaces: dict[str, str] = Field(default_factory=dict)


class FinalSpec(BaseModel):
    """A search case's sealed final tests: the files (a glob) and the node ids that must pass."""

    model_config = _STRICT
    pattern: str = Field(min_length=1)
    required: tuple[str, ...] = Field(min_length=1)


class CaseSpec(BaseModel):
    """Everything case.json may say. Unknown keys are errors (a typo must not pass silently)."""

    model_config = _STRICT
    name: str = Field(min_length=1)
    title: str = ""
    environment: str = ""
    notes: str = ""
    code: str | tuple[str, ...] = ("**/*.py",)
    start_label: str = "start"
    import_roots: tuple[str, ...] = ()
    tests: tuple[str, ...] = ("tests/**/*.py",)
    fixtures: tuple[str, ...] | None = None
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    hidden: GroupSpec | None = None
    groups: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    patches: dict[str, PatchSpec] = Field(default_factory=dict)
    patch_cap: PatchCap = Field(default_factory=PatchCap)
    excluded: tuple[ExcludedTest, ...] = ()
    # the multi-case repair experiment's fields
    slice: str = ""
    module: str = ""
    initially_correct: StrictBool | None = None
    flaky: tuple[str, ...] = ()
    oscillates: tuple[str, ...] = ()
    # a search case's fields (grading/sealed.load_search_case views the Case through them)
    severity: dict[str, str] = Field(default_factory=dict)
    final: FinalSpec | None = None  # loaded by load_case as the case's hidden (sealed) suite
    costs: dict[str, float] | None = None  # cost units per COST_KINDS
    route_order: str = "label"
    # a test-change case's fields (experiments/lessons/free_shipping reads them)
    change: TestChangeSpec | None = None
    requirements: str | None = None  # a JSON file of requirements, relative to the case

    @field_validator("route_order")
    @classmethod
    def _route_order(cls, value: str) -> str:
        if value not in ROUTE_ORDERS:
            raise ValueError(f"route_order must be one of {ROUTE_ORDERS}, got {value!r}")
        return value

    @field_validator("costs", mode="before")
    @classmethod
    def _costs(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # reported by the type check: expected an object
        missing = [k for k in COST_KINDS if k not in value]
        if missing:
            raise ValueError(f"costs lacks {missing} (needs {COST_KINDS})")
        bad = {k: v for k, v in value.items() if isinstance(v, bool) or not isinstance(v, int | float) or v < 0}
        if bad:
            raise ValueError(f"costs must be numbers >= 0, got {bad}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        """The repair format: `id` for name, `visible` for the top-level lists, `start` for code,
        `module` as the one code file, hidden tests under hidden/ laid at tests/."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "id" in data and "name" not in data:
            data["name"] = data.pop("id")
            data.setdefault("start_label", "original")  # what its patches' `base` calls it
        if "start" in data and "code" not in data:
            data["code"] = data.pop("start")
        vis = data.pop("visible", None)
        if isinstance(vis, dict):
            for key in ("fail_to_pass", "pass_to_pass", "tests"):
                if key in vis:
                    data.setdefault(key, vis[key])
            unknown = sorted(set(vis) - {"fail_to_pass", "pass_to_pass", "tests"})
            if unknown:
                data[f"visible.{unknown[0]}"] = vis[unknown[0]]  # reported as an unknown field
        elif vis is not None:
            data["visible"] = vis  # reported: visible must be an object
        if isinstance(data.get("module"), str) and "code" not in data:
            data["code"] = (data["module"],)
        hidden = data.get("hidden")
        if isinstance(hidden, dict) and "tests" not in hidden:
            data["hidden"] = {**hidden, "tests": None}
        return data

    @field_validator("patches", mode="before")
    @classmethod
    def _patch_list(cls, value: Any) -> Any:
        """Patches as {name: {...}} or as a list of {"name": ..., ...}; each entry names its `file`."""
        if isinstance(value, list):
            out: dict[str, Any] = {}
            for i, entry in enumerate(value):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise ValueError(f"entry {i} must be an object with a string 'name', got {_shown(entry)}")
                out[entry["name"]] = entry
            value = out
        if isinstance(value, dict):
            fixed: dict[str, Any] = {}
            for name, entry in value.items():
                if isinstance(entry, dict):
                    entry = {**entry, "name": name}
                fixed[name] = entry
            return fixed
        return value


def read_spec(path: str | Path) -> CaseSpec:
    """Parse and check one case.json. Every problem becomes a CaseError naming file and field."""
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(f"{p}: no such file (a case directory needs a case.json)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"{p}: cannot be read as UTF-8 text: {exc}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CaseError(f"{p}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise CaseError(f"{p}: expected a JSON object at the top, got {_kind(data)}")
    try:
        return CaseSpec.model_validate(data)
    except ValidationError as exc:
        problems: dict[str, list[str]] = {}
        for e in exc.errors():  # a union reports each alternative: one line per field
            problems.setdefault(_where(e)[1], []).append(_explain(e))
        lines = [_merge(field, texts) for field, texts in problems.items()]
        raise CaseError(f"{p}: " + "; ".join(lines)) from None


def _merge(field: str, texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    wants = [t.split(": expected ", 1)[1].rsplit(", got ", 1) for t in texts if ": expected " in t]
    if len(wants) == len(texts):
        return f"field {field!r}: expected " + " or ".join(w[0] for w in wants) + f", got {wants[0][-1]}"
    return "; ".join(texts)


_EXPECTED = {
    "list_type": "a list of strings",
    "tuple_type": "a list of strings",
    "string_type": "a string",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "bool_type": "true or false",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "greater_than": "a positive integer",
    "string_too_short": "a non-empty string",
    "literal_error": "one of the allowed values",
}


def _where(err: Any) -> tuple[list[str], str]:
    """The error's location as field names (not pydantic's union branch labels), and dotted."""
    loc = [str(x) for x in err["loc"] if not str(x).startswith(("tuple[", "function-"))]
    loc = [x for x in loc if x not in ("str", "dict[str,str]", "tuple[str,...]", "int", "bool")]
    return loc, ".".join(loc) or "(top level)"


def _explain(err: Any) -> str:
    loc, field = _where(err)
    kind = err["type"]
    got = _shown(err.get("input"))
    if kind == "missing" and field.startswith("patches.") and loc[-1] == "file":
        return f'field {field!r} is required: the diff of patch {loc[1]!r}, e.g. "patches/{loc[1]}.diff"'
    if kind == "missing":
        return f"field {field!r} is required"
    if kind == "extra_forbidden":
        known = ", ".join(sorted(CaseSpec.model_fields))
        return f"field {field!r} is not part of the case format (known fields: {known})"
    if field.startswith("patches.") and loc[-1] != "file" and kind in ("model_type", "dict_type"):
        return (
            f'field {field!r}: expected an object like {{"file": "patches/{loc[1]}.diff", "label": "..."}}, got {got}'
        )
    if kind == "literal_error":
        return f"field {field!r}: {err['msg']}, got {got}"
    if kind == "value_error":
        return f"field {field!r}: {err['msg'].removeprefix('Value error, ')}"
    want = _EXPECTED.get(kind, err["msg"])
    return f"field {field!r}: expected {want}, got {got}"


def _kind(value: Any) -> str:
    return {str: "a string", list: "a list", dict: "an object", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str | int | float) else repr(value)
    return f"{_kind(value)} {text[:60]}"
