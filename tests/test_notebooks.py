"""Every notebook is a tested product: it runs headless on the offline default and lints clean."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARIMO = sorted((ROOT / "notebooks").glob("*.py"))
JUPYTER = sorted((ROOT / "notebooks").glob("*.ipynb"))
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ENV.pop("LABKIT_MODEL", None)  # the offline default, whatever the developer's shell says


def test_there_are_notebooks():
    assert MARIMO and JUPYTER


@pytest.mark.parametrize("path", MARIMO, ids=lambda p: p.name)
def test_marimo_notebook_runs_headless(path):
    proc = subprocess.run(
        [sys.executable, str(path)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.mark.parametrize("path", MARIMO, ids=lambda p: p.name)
def test_marimo_check_is_clean(path):
    marimo = Path(sys.executable).with_name("marimo")
    proc = subprocess.run(
        [str(marimo), "check", str(path)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


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
