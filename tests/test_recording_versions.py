"""Every recording under data/ stores the versions of the packages its numbers depend on, and a
recording test that fails says in one line which of them moved (tests/recordings.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recordings import assert_as_recorded, first_difference

from labkit.core import versions
from labkit.experiments import cache_isolation as cache_case
from labkit.experiments import repair_recording, search_recording
from labkit.experiments.arms import incidents, stops
from labkit.experiments.arms.__main__ import depends_on
from labkit.experiments.judging import cascade, random_run, sim_report, simjudge
from labkit.experiments.lessons import layer_figures, triage
from labkit.experiments.lessons import verdicts as lesson_verdicts
from labkit.experiments.long_projects import merge as long_merge
from labkit.experiments.long_projects import study as long_projects
from labkit.experiments.memory import (
    counterexample,
    demo,
    ending_run,
    fork,
    loops,
    on_humaneval,
    recording,
    repair_record,
    skills_measure,
)
from labkit.experiments.published import regrade
from labkit.models import smollm2

DATA = Path(__file__).resolve().parents[1] / "data"
# what each recorder says its numbers depend on (arms: by suite and model, from the recording itself)
RECORDERS = {
    "arms/batch_incident.json": incidents.DEPENDS_ON,
    "arms/stopping.json": stops.DEPENDS_ON,
    "cache_isolation/compare.json": cache_case.DEPENDS_ON,
    "diminishing_returns/repair_run.json": repair_recording.DEPENDS_ON,
    "lessons/layer_metrics.json": layer_figures.DEPENDS_ON,
    "lessons/verdicts.json": lesson_verdicts.DEPENDS_ON,
    "long_projects/merge_recording.json": long_merge.DEPENDS_ON,
    "memory/ending_task.json": ending_run.DEPENDS_ON,
    "memory/fork.json": fork.DEPENDS_ON,
    "memory/loops.json": loops.DEPENDS_ON,
    "selector_cascade/recording.json": cascade.DEPENDS_ON,
    "memory/counterexample.json": counterexample.DEPENDS_ON,
    "memory/reflexion_demo.json": demo.DEPENDS_ON,
    "memory/simulated_reflexion.json": recording.DEPENDS_ON,
    "memory/reflexion_repair.json": repair_record.DEPENDS_ON,
    "memory/skills.json": skills_measure.DEPENDS_ON,
    "models/smollm2_speed.json": smollm2.DISTRIBUTIONS,
    "memory/smollm2_reflexion_humaneval.json": on_humaneval.DEPENDS_ON + smollm2.DISTRIBUTIONS,
    "judge/simulator_check.json": simjudge.DEPENDS_ON,
    "judge/random_reanswerer_run.json": random_run.DEPENDS_ON,
    "judge/sim_report.json": sim_report.DEPENDS_ON,
    "long_projects/shop_study.json": long_projects.DEPENDS_ON,
    "published/reflexion/ladder.meta.json": regrade.DEPENDS_ON,
    "search_budget/sweep.json": search_recording.DEPENDS_ON,
    "triage/recording.json": triage.DEPENDS_ON,
}


def _recordings() -> list[Path]:
    """Every JSON file under data/ that a labkit command wrote (it names the command)."""
    found = []
    for path in sorted(DATA.rglob("*.json")):
        if "case" in path.relative_to(DATA).parts[1:-1] or path.name == "case.json":
            continue  # case material (a case's own files), not a measurement
        rec = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(rec, dict) and ("command" in rec or "computed_by" in rec):
            found.append(path)
    return found


def test_every_recording_stores_the_versions_its_recorder_names() -> None:
    paths = _recordings()
    names = {str(p.relative_to(DATA)) for p in paths}
    assert set(RECORDERS) <= names and len(paths) >= 10, names  # the walk finds them all
    for path in paths:
        rec = json.loads(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(DATA))
        if rel.startswith("arms/") and rel not in RECORDERS:  # an arms run: by suite and model
            model = "" if rec["model"] == "simulated" else rec["model"]
            wanted = depends_on(rec["suite"], model)
        else:
            wanted = RECORDERS[rel]
        stored = rec.get("versions")
        assert isinstance(stored, dict), f"{rel} stores no package versions"
        assert sorted(stored) == sorted(set(wanted)), rel
        assert all(isinstance(v, str) and v and v != versions.NOT_INSTALLED for v in stored.values()), rel


def test_package_versions_reads_the_installed_metadata() -> None:
    import numpy

    got = versions.package_versions(["polars", "numpy", "no-such-package-xyz"])
    assert list(got) == ["no-such-package-xyz", "numpy", "polars"]
    assert got["numpy"] == numpy.__version__ and got["no-such-package-xyz"] == versions.NOT_INSTALLED


def test_a_drift_is_named_in_one_line() -> None:
    import numpy

    installed = versions.package_versions(["numpy", "polars"])
    recorded = {**installed, "numpy": "1.0.0"}
    assert versions.version_drift(recorded) == {"numpy": ("1.0.0", numpy.__version__)}
    assert versions.describe_drift(recorded) == (
        f"installed versions differ from the recording's: numpy 1.0.0 -> {numpy.__version__}"
    )
    record = {
        "command": "python -m labkit.experiments.memory.skills_measure --out x.json",
        "versions": recorded,
    }
    with pytest.raises(AssertionError) as failed:
        assert_as_recorded({"rows": [[1, 2.5]]}, {"rows": [[1, 2.25]]}, record, "the skills table")
    first, where, again = str(failed.value).splitlines()
    assert first == (
        "the skills table is not what its recording holds; installed versions differ from the "
        f"recording's: numpy 1.0.0 -> {numpy.__version__}"
    )
    assert where.strip() == "first difference at ['rows'][0][1]: recorded 2.25, now 2.5"
    assert again.strip().endswith(record["command"])
    # the same difference with the recorded versions installed: the change is labkit's
    with pytest.raises(AssertionError, match="installed versions are the recording's .*numpy"):
        assert_as_recorded([1], [2], {"versions": installed}, "x")
    assert_as_recorded([1, 2], [1, 2], record, "equal values pass whatever the versions")


def test_first_difference_names_the_place() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == "at ['b'][1]: recorded 3, now 2"
    assert first_difference([1], [1, 2]) == "at the top: 2 items recorded, 1 now"
    assert first_difference({"a": 1}, {"b": 1}) == "at ['b']: only recorded"
