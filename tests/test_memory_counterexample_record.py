"""The memory notebook's counterexample is a recording (data/memory/counterexample.json): the real
cache-isolation run's kept correction and the probes' per-seed rows. Opening the notebook runs
neither; running them again gives exactly the record, and the page built from it is the page a
live run builds."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.memory import counterexample as ce


def test_the_recording_is_what_a_real_run_gives_now() -> None:
    from labkit.views import memory_pages as page

    rec = json.loads(ce.RECORD.read_text(encoding="utf-8"))
    assert rec["command"] == "python -m labkit.experiments.memory.counterexample --out data/memory/counterexample.json"
    recorded = {k: v for k, v in rec.items() if k not in ("command", "versions")}
    now = json.loads(json.dumps(ce.record(ce.NOTEBOOK_MIX)))  # tuples as JSON lists
    assert_as_recorded(now, recorded, rec, "the counterexample")
    live, recorded = ce.run(ce.NOTEBOOK_MIX), ce.load()
    assert recorded.result.frame.equals(live.result.frame)
    assert page.counterexample_section(recorded) == page.counterexample_section(live)
    assert page.replay_html(recorded) == page.replay_html(live)


def test_the_notebook_opens_without_running_the_engine_or_the_probes(monkeypatch) -> None:
    from labkit.views import memory_pages as page

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the notebook ran the counterexample on open")

    monkeypatch.setattr(ce, "measure", refuse)
    monkeypatch.setattr(ce, "run", refuse)
    monkeypatch.setattr("labkit.experiments.cache_isolation.run", refuse)
    run = page.counterexample_run()
    assert run.tenant and run.catalogue.withheld  # the gate still decides, on the recorded correction
    assert "public catalogue: withheld" in page.counterexample_section(run)


def test_a_missing_recording_names_the_command(tmp_path) -> None:
    with pytest.raises(ReferenceDataMissing, match="labkit.experiments.memory.counterexample"):
        ce.load(tmp_path / "absent.json")
