"""Every notebook is a tested product: it runs headless on the offline default (lint: ./run lint).

A marimo notebook's one run is its static export (tests/conftest.py: headless). A JupyterLab
twin's one run is Run All in a real JupyterLab (tests/e2e/test_jupyter_browser.py), which also
holds the saved notebook to what an nbclient run was checked for: no error output, a widget
displayed, charts that need no network.
"""

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


@pytest.mark.timeout(1200)  # the first test to ask runs (exports) the notebook
@pytest.mark.parametrize("path", MARIMO, ids=lambda p: p.name)
def test_marimo_notebook_runs_headless(path, headless):
    # the session's one headless run of this notebook (tests/conftest.py: its static export),
    # shared by the notebook's own tests; `marimo check` is part of the lint step (./run lint)
    headless(path.stem, **HOSTILE.get(path.stem, {})).check()


_RAISES = """import marimo

app = marimo.App()


@app.cell
def _():
    answer = 42
    return (answer,)


@app.cell
def _(answer):
    answer / 0
    return


if __name__ == "__main__":
    app.run()
"""


@pytest.mark.slow
def test_a_run_fails_on_a_cell_that_raises_and_reports_a_probe_that_raises(tmp_path):
    # what makes the shared run (tests/conftest.py) a check: marimo keeps running past a cell
    # that raises, but the export exits non-zero; a probe that raises is reported, not dropped
    from conftest import run_headless

    notebook = tmp_path / "raises.py"
    notebook.write_text(_RAISES)
    run = run_headless(
        notebook, tmp_path / "raises.html", probes={"answer": "defs['answer']", "nothing": "defs['nothing']"}
    )
    assert run.returncode != 0 and "division by zero" in run.stderr, run.stderr[-3000:]
    assert "KeyError: 'nothing'" in run.probe_error, run.probe_error
    with pytest.raises(AssertionError, match="raises.py failed"):
        run.check()


def test_cache_isolation_storylines_stay_scripted_when_labkit_model_is_set(headless):
    # A real provider in the shell and no key: the scripted storyline neither calls it nor
    # fails; it keeps the fix and shows the lesson. (Only "ask a real model" reads LABKIT_MODEL.)
    got = headless("cache_isolation", **HOSTILE["cache_isolation"]).check()
    assert got["simulated"] and str(got["reflector"]).startswith("scripted")
    assert got["resolved"] and "tenant boundary" in str(got["lesson"])
