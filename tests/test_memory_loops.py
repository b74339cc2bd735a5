"""The memory notebook's sections 6 and 7 (data/memory/loops.json; SIMULATED actor and critic, real
verdicts): re-measured on a subset of cases and compared exactly, and the directions the page
teaches asserted on the recording: a false belief stalls the buffer, the revision rule recovers
it; the external oracle stops proposing once the tests pass, self-critique stores nothing."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.experiments.memory import loops
from labkit.views import memory_loops as page

SUBSET = (
    "days_until_birthday",
    "lcm",
)  # the stepped example's case, and one the oracle stores correctly


@pytest.fixture(scope="module")
def rec() -> dict:
    return json.loads(loops.RECORD.read_text(encoding="utf-8"))


def _only(section: dict, cases: tuple[str, ...]) -> list:
    return [r for r in section["rows"] if r[2] in cases]


def test_a_subset_measured_now_equals_the_recording(rec: dict) -> None:
    assert rec["command"] == "python -m labkit.experiments.memory.loops --out data/memory/loops.json"
    setting = loops.Setting(rec["setting"]["n_cases"], (0, 1), rec["setting"]["trials"])
    now = loops.measure(setting, cases=SUBSET)
    assert [c for c, _ in now["cases"]] == list(SUBSET)
    for part in ("belief", "unified"):
        recorded = [r for r in _only(rec[part], SUBSET) if r[1] in (0, 1)]
        assert_as_recorded(now[part]["rows"], recorded, rec, f"loops {part} rows")
    assert_as_recorded(
        now["unified"]["stored"],
        {a: [s for s in v if s[0] in SUBSET] for a, v in rec["unified"]["stored"].items()},
        rec,
        "loops stored skills",
    )


def test_the_false_belief_stalls_and_the_revision_rule_recovers(rec: dict) -> None:
    ok = page.belief_success(rec)
    last = rec["setting"]["trials"]
    buffer, stuck, revised = rec["belief"]["arms"]
    assert ok[stuck, last].estimate == ok[stuck, 1].estimate < ok[buffer, last].estimate  # never revised: no gain
    assert ok[revised, last].low > ok[stuck, last].estimate
    ex = rec["belief"]["example"]
    assert any("REVISED: retrying" in t for t in ex["read"][revised])
    assert not any("REVISED" in t for t in ex["read"][stuck])
    assert sum("Belief: the idea was right" in t for t in ex["read"][stuck]) == len(ex["read"][stuck]) - 1
    assert f"<code>{ex['case']}</code>, seed {ex['seed']}" in page.belief_html(rec)


def test_the_external_oracle_stops_and_stores_self_critique_does_neither(rec: dict) -> None:
    t = {r["loop"]: r for r in page.unified_summary(rec).iter_rows(named=True)}
    oracle, blind, guarded = rec["unified"]["arms"]
    n = len(rec["cases"]) * rec["setting"]["trials"]
    assert t[blind]["proposals per seed"] == n  # unguarded self-critique proposes every round of every case
    assert t[oracle]["proposals per seed"] < t[guarded]["proposals per seed"] < n
    assert t[oracle]["skills stored"] > 0 == t[blind]["skills stored"] == t[guarded]["skills stored"]
    assert 0 < t[oracle]["of which pass hidden tests"] < t[oracle]["skills stored"]  # the visible oracle's blind spot
    assert "self-critique" in page.unified_html(rec)
