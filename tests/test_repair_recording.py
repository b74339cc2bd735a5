"""The recorded repair runs notebooks/diminishing_returns.{py,ipynb} show on open
(data/diminishing_returns/repair_run.*): recorded at the page's default setting on today's cases,
what labkit computes again on a real slice, and read only when the setting and the cases match."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import polars as pl
import pytest
from recordings import assert_as_recorded, what_happened

from labkit.experiments import repair
from labkit.experiments import repair_recording as recording
from labkit.loop.engine import accounting
from labkit.views import diminishing as page

# how an event was obtained or how long it took, not what happened: a cache hit, wall seconds, the
# run-wide spend a decision quotes (a slice spends less than all cases); and what names the machine:
# the validator id digests the interpreter's path, and verdict digests are made from it
ASIDE = {"cached", "wall_seconds", "cost_so_far", "digest", "validator"}


def _content(value: Any) -> Any:
    return what_happened(value, ASIDE)


def _by_case(frame: pl.DataFrame, cases: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Every event naming one of `cases`, in ledger order per case, timings and machine aside."""
    out: dict[str, list[dict[str, Any]]] = {c: [] for c in sorted(cases)}
    for e in frame.sort("seq").iter_rows(named=True):
        detail = json.loads(e["detail"])
        if detail.get("case") in cases:
            evidence = json.loads(e["evidence"]) if e["evidence"] else ""
            out[detail["case"]].append(
                {
                    "round": e["round"],
                    "role": e["role"],
                    "kind": e["kind"],
                    "calls": e["calls"],
                    "tokens": e["tokens"],
                    "cost_units": e["cost_units"],
                    "detail": _content(detail),
                    "evidence": _content(evidence),
                }
            )
    return out


def _meta() -> dict[str, Any]:
    return dict(json.loads(recording.RECORD.with_suffix(".json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def cases() -> tuple[repair.RepairCase, ...]:
    return repair.load_cases()


def test_the_recording_is_the_pages_default_setting_on_todays_cases(cases) -> None:
    meta = _meta()
    assert meta["command"].startswith("python -m labkit.experiments.repair_recording --out ")
    default = meta["runs"][recording.RUN_ID]
    assert recording.Setting(**default["setting"]) == recording.DEFAULT
    sliders = {k: c.value for k, c in page.REPAIR.items()}
    assert sliders == {"p_fix": 0.6, "fix_decay": 0.7, "p_break": 0.03, "break_growth": 2.0, "n_rounds": 4, "seed": 0}
    settings = recording.Setting(
        p_fix=sliders["p_fix"],
        fix_decay=sliders["fix_decay"],
        p_break=sliders["p_break"],
        break_growth=sliders["break_growth"],
        rounds=sliders["n_rounds"],
        seed=sliders["seed"],
    )
    assert settings == recording.DEFAULT
    # every case as it is today (re-record when a case changes: data/diminishing_returns/README.md)
    assert default["cases"] == {c.id: recording.fingerprint(c) for c in cases}
    assert default["pytest_runs"] > 100 and default["rounds_run"] == 4 and default["simulated"]
    osc = meta["runs"][recording.OSCILLATION_RUN_ID]
    assert recording.Setting(**osc["setting"]) == recording.OSCILLATION
    assert list(osc["cases"]) == [next(c.id for c in cases if c.oscillates)]


def test_the_page_reads_the_recording_at_the_defaults_and_runs_any_other_setting(cases, monkeypatch) -> None:
    # the sliders' defaults, with a slider's float noise: the recording, read and not run
    shown = page.real_run(cases, repair.Checker(), 0.6000000000000001, 0.7, 0.03, 2.0, 4, 0)
    assert isinstance(shown, recording.RecordedRepairRun) and shown.run_id == recording.RUN_ID
    assert [c.id for c in shown.cases] == [c.id for c in cases] and shown.rounds_run == 4
    said = page.real_md(shown, 0, True)
    assert recording.RECORDED_NOTE in said and _meta()["command"] in said
    assert recording.RECORDED_NOTE in page.real_title(shown)
    assert shown.correctness().equals(accounting.from_ledger(shown.events()))
    osc = page.oscillation_md(cases, repair.Checker())
    assert "**oscillation**" in osc and "a recorded run" in osc

    asked: list[tuple[Any, ...]] = []

    def run(on, repairer, *, rounds, checker, rules):  # stands in for the engine: which run is asked for
        asked.append((len(on), repairer, rounds, rules))
        return "run now"

    monkeypatch.setattr(repair, "run", run)
    assert page.real_run(cases, repair.Checker(), 0.6, 0.7, 0.03, 2.0, 3, 0) == "run now"
    assert page.real_run(cases, repair.Checker(), 0.6, 0.7, 0.03, 2.0, 4, 1) == "run now"
    assert page.real_run(cases[1:], repair.Checker(), 0.6, 0.7, 0.03, 2.0, 4, 0) == "run now"
    assert [(n, r.seed, k) for n, r, k, _ in asked] == [(33, 0, 3), (33, 1, 4), (32, 0, 4)]
    # a case changed since the recording: run now, not the stale recording
    first = cases[0]
    renamed = replace(first, case=replace(first.case, title="renamed"))
    assert recording.recorded(recording.DEFAULT, (renamed, *cases[1:])) is not None
    name, spec = first.patches[0].name, first.case.spec.patches
    edited = _with_spec(first, patches={**spec, name: spec[name].model_copy(update={"effect": "incomplete"})})
    assert recording.recorded(recording.DEFAULT, (edited, *cases[1:])) is None


def _with_spec(c: repair.RepairCase, **changes: object) -> repair.RepairCase:
    """The same repair case with its case.json changed as `changes` say (an edit since the recording)."""
    return replace(c, case=replace(c.case, spec=c.case.spec.model_copy(update=changes)))


def _slice(shown: recording.RecordedRepairRun, cases: tuple[repair.RepairCase, ...]) -> list[repair.RepairCase]:
    """Three steady cases the recording moved differently: the first fixed, the first broken, the
    first still wrong at the end. The known-flaky case is left out: its verdicts vary run to run,
    and the repairer's choices follow them (so its events can differ, as they may on any re-run)."""
    frame = shown.correctness()
    steady = {c.id for c in cases if not c.flaky}
    fixed = [c for r in range(1, shown.rounds_run + 1) for c in accounting.moved(frame, r)["fixed"]]
    broken = [c for r in range(1, shown.rounds_run + 1) for c in accounting.moved(frame, r)["broken"]]
    last = frame.filter((pl.col("round") == shown.rounds_run) & ~pl.col("correct"))["case"].to_list()
    picked = [next(c for c in sorted(group) if c in steady) for group in (fixed, broken, last)]
    assert len(set(picked)) == 3, picked
    return [c for c in cases if c.id in picked]


def test_the_recording_is_what_labkit_computes_on_a_real_slice(cases) -> None:
    """Re-run three of the recorded cases, and the oscillating one, with fresh pytest runs and
    compare every event of theirs with the recording's, exactly (timings and the machine aside)."""
    meta = _meta()
    shown = recording.recorded(recording.DEFAULT, cases)
    assert shown is not None
    some = _slice(shown, cases)
    ids = {c.id for c in some}
    fresh = repair.Checker()
    again = repair.run(
        some,
        recording.DEFAULT.repairer(),
        rounds=recording.DEFAULT.rounds,
        checker=fresh,
        run_id=recording.RUN_ID,
        rules=(),
    )
    assert fresh.runs >= 2 * len(some)  # real pytest runs, every one of them
    recorded_events = _by_case(shown.events(), ids)
    assert all(len(v) > 10 for v in recorded_events.values())
    assert_as_recorded(
        _by_case(again.events(), ids), recorded_events, meta, f"the recorded run's events of {sorted(ids)}"
    )

    case = next(c for c in cases if c.oscillates)
    osc = recording.recorded(recording.OSCILLATION, [case], recording.OSCILLATION_RUN_ID)
    assert osc is not None and osc.case_stop(case.id) is not None
    assert re.match(r"escalate: case \w+: test \S+ flips between states", osc.case_stop(case.id)[1])
    now = repair.run(
        [case],
        recording.OSCILLATION.repairer(),
        rounds=recording.OSCILLATION.rounds,
        checker=repair.Checker(),
        run_id=recording.OSCILLATION_RUN_ID,
        rules=(),
    )
    assert_as_recorded(
        _by_case(now.events(), {case.id}),
        _by_case(osc.events(), {case.id}),
        meta,
        "the recorded oscillation run's events",
    )
    assert [(s.rule, s.reason) for s in now.stops] == [osc.case_stop(case.id)]


def test_the_stability_recheck_on_open_is_recorded_and_the_button_reruns_now(cases, monkeypatch) -> None:
    """On open the page shows the known-flaky original's recorded re-check; re-run now (fresh pytest
    runs, bypassing the cache), the same rule fires on it. Not compared run for run: its test is
    flaky by construction, so how many re-runs find the disagreement varies."""
    recorded_rows = _meta()["stability"]["rows"]
    flaky = [c for c in cases if c.flaky]
    assert [r["case"] for r in recorded_rows] == [c.id for c in flaky] != []
    assert page.stability_rows(repair.Checker(), cases, every=False) == recorded_rows
    unstable = re.compile(
        r"report unknowns: case \w+: candidate \w+: \d+ runs of validator \w+ gave \d+ different verdicts"
    )
    assert all(unstable.match(str(r["verdict"])) for r in recorded_rows)
    now = repair.stability(repair.Checker(), flaky)
    assert [r["case"] for r in now] == [c.id for c in flaky]
    assert all(unstable.match(str(r["verdict"])) and 2 <= int(str(r["runs"])) <= 13 for r in now), now

    asked: list[list[str]] = []
    monkeypatch.setattr(repair, "stability", lambda checker, on: asked.append([c.id for c in on]) or [])
    page.stability_rows(repair.Checker(), cases, every=True)  # the button: every original, now
    changed = [
        _with_spec(c, flaky=(*c.flaky, "tests/test_visible.py::test_highest_wins")) if c.flaky else c for c in cases
    ]
    page.stability_rows(repair.Checker(), changed, every=False)  # the flaky case changed: now
    assert asked == [[c.id for c in cases], [c.id for c in flaky]]
