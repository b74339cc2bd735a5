"""The memory notebook's Reflexion demo is a recording (data/memory/reflexion_demo.json): opening
the notebook runs no pytest, and running the demo again gives exactly the recorded record."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.memory import demo


def test_the_recording_is_what_the_demo_measures_now() -> None:
    rec = json.loads(demo.RECORD.read_text(encoding="utf-8"))
    assert rec["command"] == "python -m labkit.experiments.memory.demo --out data/memory/reflexion_demo.json"
    recorded = {k: v for k, v in rec.items() if k not in ("command", "versions")}
    assert recorded["setting"] == {"n_cases": 3, "trials": 4, "seed": 2}
    assert_as_recorded(demo.measure(demo.Setting(**recorded["setting"])), recorded, rec, "the Reflexion demo")


def test_the_notebook_steps_through_the_recording_without_running_pytest(monkeypatch) -> None:
    from labkit.grading.validator import Validator
    from labkit.views import memory_pages as page

    def no_pytest(*args: object, **kwargs: object) -> None:
        raise AssertionError("the notebook validated a state on open")

    monkeypatch.setattr(Validator, "run", no_pytest)
    d = page.reflexion_demo()
    labels, pages = page.reflexion_pages(d)
    assert labels == [f"trial {t}" for t in range(1, 5)] and len(pages) == 4
    assert any(t.text for t in d.trials), "the stepped case must have a reflection to step through"
    assert all(t.correct is not None for t in d.trials)
    # each card shows the patch tried (its diff) and what the visible tests decided about it
    assert any(t.tried and t.decision == "roll back" for t in d.trials) and any(not t.tried for t in d.trials)
    for t, card in zip(d.trials, pages, strict=True):
        assert f"<b>{t.decision}</b>" in card and t.reason.split(":")[0] in card
        if t.tried:
            assert f"Patch tried: <code>{t.tried}</code>" in card and t.diff and t.diff.splitlines()[0] in card
        else:
            assert "Patch tried: none" in card


def test_a_missing_recording_names_the_command(tmp_path) -> None:
    with pytest.raises(ReferenceDataMissing, match="labkit.experiments.memory.demo"):
        demo.load(tmp_path / "absent.json")
