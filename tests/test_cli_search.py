"""`labkit search` on a case outside data/, and the search case fields a researcher writes:
severity from `@pytest.mark.severity` marks (or a default), a stated route order, no paying
to execute a route the budget cannot also verify, and a budget stop that is not POLICY_DENIED."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from labkit.cli import main
from labkit.core.errors import CaseError
from labkit.grading.sealed import load_search_case
from labkit.grading.validator import Validator
from labkit.grading.verdicts import Checker
from labkit.loop.search.search_case import routes, search, search_run, spend
from labkit.record.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
A, B, C = "A restore the old API", "B add a compatibility layer", "C fix the callers"


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    import labkit.cli.search_command as cli

    monkeypatch.setattr(cli.out, "width", 250)


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(Validator())


def _copy(tmp_path: Path, name: str = "mine", **changes: object) -> Path:
    """data/api_change copied outside data/, with case.json fields changed (None: removed)."""
    folder = tmp_path / name
    shutil.copytree(ROOT / "data" / "api_change", folder)
    spec = json.loads((folder / "case.json").read_text())
    for key, value in changes.items():
        if value is None:
            spec.pop(key)
        else:
            spec[key] = value
    (folder / "case.json").write_text(json.dumps(spec))
    return folder


def _c_first(tmp_path: Path, name: str, **changes: object) -> Path:
    spec = json.loads((ROOT / "data" / "api_change" / "case.json").read_text())
    patches = spec["patches"]
    return _copy(
        tmp_path,
        name,
        patches={k: patches[k] for k in ("fix_callers", "restore_old_api", "compat_layer")},
        **changes,
    )


def test_labkit_search_on_a_case_outside_data(tmp_path, capsys) -> None:
    folder = _copy(tmp_path)
    ledger = tmp_path / "s.sqlite"
    assert main(["search", str(folder), "--ledger", str(ledger), "--run-id", "s1"]) == 0
    out = capsys.readouterr().out
    # the chapter's figures: pays 12, seals C, confirms it from the 2 reserved (14 spent, 1 left)
    assert "spent 12 on search + 2 on confirmation = 14 of 15 cost units (1 left)" in out
    assert f"winner: {C}" in out and "confirmation on the sealed final tests: passed" in out
    assert "routes offered by label (scripted generator: simulated)" in out
    rows = [re.split(r"\s*│\s*", line.strip("│ ")) for line in out.splitlines() if line.startswith("│ ")]
    assert [(r[1], r[2], r[-1]) for r in rows if r[0]] == [
        (A, "frontier", "3"),
        (B, "not expanded", "3"),
        (C, "sealed", "3"),
    ]
    with Ledger(ledger, read_only=True) as book:
        assert spend(book, "s1", 15).total == 14
    assert main(["search", str(folder), "--ledger", str(ledger), "--run-id", "s1"]) == 2  # id taken
    assert main(["search", str(folder), "--budget", "13"]) == 1  # incomplete: exit 1, one line why
    assert capsys.readouterr().err.strip().endswith("search incomplete: budget_exhausted")


def test_listing_c_first_does_not_change_the_outcome_at_13(tmp_path, checker) -> None:
    listed = load_search_case(_copy(tmp_path, "ab"))
    c_first = load_search_case(_c_first(tmp_path, "c"))
    assert [p.description for p in routes(c_first)] == [A, B, C] == [p.description for p in routes(listed)]
    baseline = checker.check(listed.case.start, listed.suite).verdict
    ends = []
    for case in (listed, c_first):
        with Ledger() as led:
            out = search_run(case, checker, baseline, total=13, reserve=2, ledger=led, run_id="t")
            r = out.result
            ends.append(
                (
                    r.status,
                    r.reason,
                    [(b.name, b.outcome, b.spent) for b in r.branches],
                    spend(led, "t", 13).total,
                )
            )
            budget_stops = [  # the search's decisions, read back from the engine's events
                s.detail for s in out.readback.steps if s.kind == "decision" and s.detail["where"] == "budget"
            ]
    assert ends[0] == ends[1]
    # at 13 (2 reserved) C is not executed: 11 - 9 = 2 cannot pay execute 2 + verify 1
    assert ends[0] == (
        "incomplete",
        "budget_exhausted",
        [(A, "frontier", 3), (B, "not expanded", 3), (C, "not run", 0)],
        9,
    )
    assert [(d["error_class"], d["action"]) for d in budget_stops] == [("", "stop")]  # not POLICY_DENIED


def test_a_stated_listed_order_is_followed(tmp_path, checker) -> None:
    case = load_search_case(_c_first(tmp_path, "c", route_order="listed"))
    assert [p.description for p in routes(case)] == [C, A, B]
    with Ledger() as led:
        r = search(
            case,
            checker,
            checker.check(case.case.start, case.suite).verdict,
            total=13,
            reserve=2,
            ledger=led,
            run_id="t",
        )
    assert r.success and r.winner is not None and r.winner.route == C
    assert load_search_case(_copy(tmp_path, "size", route_order="size")).route_order == "size"
    with pytest.raises(CaseError, match="route_order must be one of"):
        load_search_case(_copy(tmp_path, "bad", route_order="random"))


def test_severity_comes_from_marks_or_a_default(tmp_path) -> None:
    original = load_search_case(ROOT / "data" / "api_change")
    plain = load_search_case(_copy(tmp_path, "plain", severity=None))  # not refused
    assert {c.severity for c in plain.checks.checks} == {"medium"}
    marked = _copy(tmp_path, "marked", severity=None)
    for name, test in (
        ("test_compat.py", "test_app_runs_on_released_userlib"),
        ("test_library.py", "test_fetch_user_returns_user"),
        ("test_library.py", "test_user_records_are_frozen"),
    ):
        path = marked / "tests" / name
        text = path.read_text().replace(f"\ndef {test}(", f'\n@pytest.mark.severity("high")\ndef {test}(')
        path.write_text(text if "import pytest" in text else "import pytest\n" + text)
    from_marks = load_search_case(marked)
    assert {c.id: c.severity for c in from_marks.checks.checks} == {c.id: c.severity for c in original.checks.checks}
    bad = _copy(tmp_path, "bad", severity=None)
    path = bad / "tests" / "test_library.py"
    path.write_text(
        path.read_text().replace(
            "\ndef test_fetch_user_returns_user(",
            '\n@pytest.mark.severity("huge")\ndef test_fetch_user_returns_user(',
        )
    )
    with pytest.raises(CaseError, match="severity\\('huge'\\) is not one of"):
        load_search_case(bad)


def test_search_fields_are_checked_by_the_one_case_parser(tmp_path) -> None:
    """case.json is read once (grading/cases.py): the search view gets typed fields or a CaseError."""
    case = load_search_case(ROOT / "data" / "api_change")
    assert case.final is case.case.hidden and case.final.name == "api-change final (sealed)"
    assert dict(case.costs) == {"generate": 3.0, "execute": 2.0, "verify": 1.0, "confirm": 2.0}
    with pytest.raises(CaseError, match=r"case\.json: field 'costs': costs lacks \['confirm'\]"):
        load_search_case(_copy(tmp_path, "nocost", costs={"generate": 3, "execute": 2, "verify": 1}))
    with pytest.raises(CaseError, match=r"case\.json: field 'final\.required'"):
        load_search_case(_copy(tmp_path, "nofinal", final={"pattern": "final/*.py"}))
    with pytest.raises(CaseError, match=r"case\.json: a search case needs 'costs'"):
        load_search_case(_copy(tmp_path, "plain", costs=None))
    with pytest.raises(CaseError, match=r"fields 'hidden' and 'final' both given"):
        load_search_case(_copy(tmp_path, "both", hidden={"fail_to_pass": ["x"], "tests": ["final/*.py"]}))
