"""Every notebook is a tested product: it runs headless on the offline default (lint: ./run lint)."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARIMO = sorted((ROOT / "notebooks").glob("*.py"))
JUPYTER = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert MARIMO and JUPYTER


# A real provider named in the shell, with no key: the harder case for a notebook that must call
# no model on open. cache_isolation's one headless run is made in it (its offline default runs
# in the browser tests: tests/e2e/test_marimo_browser.py and test_export.py).
HOSTILE = {"cache_isolation": {"LABKIT_MODEL": "openai/gpt-4o-mini"}}


@pytest.mark.parametrize("path", MARIMO, ids=lambda p: p.name)
def test_marimo_notebook_runs_headless(path, headless):
    # the session's one headless run of this notebook (tests/conftest.py), shared by the
    # notebook's own tests; `marimo check` is part of the lint step (./run lint)
    headless(path.stem, **HOSTILE.get(path.stem, {})).check()


def test_cache_isolation_storylines_stay_scripted_when_labkit_model_is_set(headless):
    # A real provider in the shell and no key: the scripted storyline neither calls it nor
    # fails; it keeps the fix and shows the lesson. (Only "ask a real model" reads LABKIT_MODEL.)
    got = headless("cache_isolation", **HOSTILE["cache_isolation"]).check()
    assert got["simulated"] and str(got["reflector"]).startswith("scripted")
    assert got["resolved"] and "tenant boundary" in str(got["lesson"])


@pytest.mark.parametrize("path", JUPYTER, ids=lambda p: p.name)
def test_jupyter_notebook_executes(path, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors, json.dumps(errors)[:4000]
    widgets = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widgets, "the stepper widget was not displayed"
    # charts render offline: altair's own renderer (vega from a CDN) shows nothing here;
    # outputs inside widgets (ipywidgets Output) are part of the stored widget state
    executed = nbformat.writes(nb)
    for online in ("application/vnd.vegalite", "cdn.jsdelivr.net"):
        assert online not in executed, f"{path.name}: a chart needs the network ({online})"
