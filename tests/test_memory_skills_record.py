"""The memory notebook's skills table is a recording (data/memory/skills.json): the notebook
reads it instead of validating 1,250 candidates on open, and measuring again gives exactly it."""

from __future__ import annotations

import json

import pytest
from recordings import assert_as_recorded

from labkit.core.errors import ReferenceDataMissing
from labkit.experiments.memory import skills_measure as skills


def test_the_recording_is_what_measure_gives_now() -> None:
    rec = json.loads(skills.RECORD.read_text(encoding="utf-8"))
    assert rec["command"] == "python -m labkit.experiments.memory.skills_measure --out data/memory/skills.json"
    assert rec["setting"] == {"sizes": list(skills.SIZES), "k": 2, "seed": 0}
    assert_as_recorded(skills.measure(), skills.load(), rec, "the skills table")


def test_the_notebooks_table_is_read_from_the_recording(monkeypatch) -> None:
    from labkit.views import memory_pages as page

    def no_measure(*args: object, **kwargs: object) -> None:
        raise AssertionError("the notebook measured the skills on open")

    monkeypatch.setattr(skills, "measure", no_measure)
    out = page.skills_html()
    assert "Retrieval on held-out tasks" in out and "1000" in out.replace(",", "")


def test_a_missing_recording_names_the_command(tmp_path) -> None:
    with pytest.raises(ReferenceDataMissing, match="labkit.experiments.memory.skills_measure"):
        skills.load(tmp_path / "absent.json")
