"""`labkit new-case DIR`: a small working case to copy from.

A per-tenant rate-limit table (a JSON fixture beside the tests) whose lookup ignores a
tenant's own override: two fail-to-pass tests, two pass-to-pass tests, one fix patch and a
scripted-reflector transcript whose single round proposes that fix. `labkit run DIR`
resolves it in one round.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from labkit.core.errors import CaseError

__all__ = ["fix_diff", "write_template"]

MODULE = '''"""Per-tenant rate limits, read from a JSON table."""

import json
from pathlib import Path

DEFAULT_LIMIT = 10


def load_limits(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def limit_for(limits, tenant, plan):
    """Requests per minute for `tenant` on `plan`: the tenant's override, else the plan's."""
    return limits["plans"].get(plan, DEFAULT_LIMIT)
'''

FIXED = MODULE.replace(
    '    return limits["plans"].get(plan, DEFAULT_LIMIT)\n',
    '    return limits["tenants"].get(tenant, limits["plans"].get(plan, DEFAULT_LIMIT))\n',
)

TESTS = """from pathlib import Path

from limits import DEFAULT_LIMIT, limit_for, load_limits

LIMITS = load_limits(Path(__file__).parent / "data" / "limits.json")


def test_tenant_override_wins():
    assert limit_for(LIMITS, "acme", "pro") == 500


def test_override_applies_on_any_plan():
    assert limit_for(LIMITS, "acme", "free") == 500


def test_plan_limit():
    assert limit_for(LIMITS, "bob", "pro") == 100


def test_unknown_plan_gets_default():
    assert limit_for(LIMITS, "bob", "gold") == DEFAULT_LIMIT
"""

FIXTURE = {"plans": {"free": 5, "pro": 100}, "tenants": {"acme": 500}}

T = "tests/test_limits.py::"
F2P = [T + "test_tenant_override_wins", T + "test_override_applies_on_any_plan"]
P2P = [T + "test_plan_limit", T + "test_unknown_plan_gets_default"]


GUIDE = """# {name}: a labkit case

- `case.json`: what is code, what is protected, which tests must go from failing to passing
  (`fail_to_pass`) and which must keep passing (`pass_to_pass`), the patches and the patch cap.
- `limits.py`: the starting code (the candidate). `tests/`: the protected tests;
  `tests/data/limits.json` is a fixture (any file type) the tests read: every non-.py file
  under the tests' folders is one, protected like the tests, unless case.json lists
  `fixtures` globs (each must then match a file).
- `patches/fix.diff`: a named patch (unified diff, paths relative to the case folder).
- `transcript.jsonl`: what the scripted reflector replies, one JSON object per line:
  `{{"key": "<branch>/round-<n>", "reply": "<reflection record as a JSON string>"}}`.
  The record's fields: phenomenon, evidence_ref (a test id the validator reported),
  environment, hypothesis {{cause, refuted_if}}, action, expected {{acceptance, protective}},
  diff (the unified diff, a JSON string inside the record).

`labkit check .` runs the start candidate; `labkit run .` runs the loop;
`labkit run . --reflector openai/gpt-4o-mini` asks a real model instead.
"""


def fix_diff() -> str:
    return "".join(difflib.unified_diff(MODULE.splitlines(True), FIXED.splitlines(True), "a/limits.py", "b/limits.py"))


def spec(name: str) -> dict[str, object]:
    return {
        "name": name,
        "title": "a tenant's own rate limit is ignored",
        "environment": "limits 0.1 · python 3.11 · pytest 8",
        "code": ["*.py"],
        "tests": ["tests/**/*.py"],
        "fail_to_pass": F2P,
        "pass_to_pass": P2P,
        "groups": {"override": F2P, "plan limits": P2P},
        "patches": {"fix": {"file": "patches/fix.diff", "label": "look up the tenant first"}},
        "patch_cap": {"max_hunks": 2, "max_lines": 8},
        "notes": "Written by `labkit new-case`; edit freely.",
    }


def transcript_line(environment: str) -> dict[str, str]:
    """One scripted reflection: key "<branch>/round-<n>", reply = the record as a JSON string."""
    record = {
        "phenomenon": "acme on the pro plan gets 100, the plan's limit, not its own 500",
        "evidence_ref": F2P[0],
        "environment": environment,
        "hypothesis": {
            "cause": "limit_for reads only the plan table; the tenants table is never consulted",
            "refuted_if": "with the tenants table read first, acme still gets the plan's limit",
        },
        "action": "look the tenant up in limits['tenants'] before falling back to its plan",
        "expected": {"acceptance": F2P, "protective": P2P},
        "diff": fix_diff(),
    }
    return {"key": "main/round-1", "reply": json.dumps(record, indent=1)}


def write_template(root: Path, *, force: bool = False) -> list[Path]:
    """Write the template case into `root` (which must be empty or absent unless `force`)."""
    if root.exists() and any(root.iterdir()) and not force:
        raise CaseError(f"{root} is not empty; choose a new folder (or pass --force)")
    s = spec(root.resolve().name or "my-case")
    files = {
        "case.json": json.dumps(s, indent=2) + "\n",
        "limits.py": MODULE,
        "tests/test_limits.py": TESTS,
        "tests/data/limits.json": json.dumps(FIXTURE, indent=2) + "\n",
        "patches/fix.diff": fix_diff(),
        "transcript.jsonl": json.dumps(transcript_line(str(s["environment"]))) + "\n",
        "README.md": GUIDE.format(name=s["name"]),
    }
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
