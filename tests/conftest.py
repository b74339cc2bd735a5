"""Shared fixtures. `headless`: each marimo notebook runs headless ONCE per test session.

A notebook run costs seconds of real loops; every test that needs what a notebook computed
or showed reads it from this one run (per notebook and environment) instead of running it
again. The run is the notebook's static export, made as an instructor makes it (`python -m
labkit.views.export`: `marimo export html` in a fresh interpreter, every cell run in marimo's
kernel, any cell that raises fails it), and it reports the values its probe expressions
(NOTEBOOK_PROBES) evaluate to in that kernel; tests/e2e/test_export.py opens its HTML offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# Expressions evaluated in the notebook's kernel once every cell has run (tests/marimo_probes.py;
# names: defs, shown, json).
NOTEBOOK_PROBES: dict[str, dict[str, str]] = {
    "cache_isolation": {
        "reflector": "defs['trace'].reflector",
        "simulated": "defs['trace'].simulated",
        "resolved": "defs['trace'].final_verdict.resolved",
        "lesson": "getattr(defs.get('lesson'), 'lesson', None)",
    },
    "diminishing_returns": {  # tests/test_notebook_diminishing_returns.py
        "net": "defs['table']['net'].to_list()[1:]",
        "cumulative": "defs['table']['cumulative_fixed'].to_list()",
        "correct": "defs['table']['correct'].to_list()",
        "cases": "[c.id for c in defs['cases']]",
        "real_cases": "len(defs['result'].cases)",
        "real_rounds": "defs['result'].rounds_run",
        "real_label": "defs['repair'].label(defs['result'])",
        "real_net": "defs['real_table']['net'].to_list()",
        "real_fixed": "defs['real_table']['fixed'].to_list()",
        "real_broken": "defs['real_table']['broken'].to_list()",
        "real_correct": "defs['real_table']['correct'].to_list()",
        "decisions": "[[r, d] for r, k, d in defs['result'].events().select('round', 'kind', 'detail')"
        ".iter_rows() if k == 'decide']",
    },
    "judge_bias": {
        "recorded": "defs['lead_recorded']",
        "litellm": "'litellm' in __import__('sys').modules",
        "why": "defs['lead_why']",
        "judge": "(defs['lead'] or defs['lead_seen'][-1]).first.judge",
        "simulated": "(defs['lead'] or defs['lead_seen'][-1]).first.simulated",
        "flipped": "(defs['lead'] or defs['lead_seen'][-1]).flipped",
        "probs": "(defs['lead'] or defs['lead_seen'][-1]).first.probs is not None",
        "sim_simulated": "defs['sim'].simulated",
        "warned": "'simulated judge' in shown",
        "huang_rows": "len(defs['sc'].load_huang())",
        "pair_pages": "[defs['cj'].swap_html(s) for s in defs['shown_swaps']]"
        " == list(defs['stepper'].widget.pages) != []",
        "ae": "[round(defs['ae'].raw.r.estimate, 2), round(defs['ae'].lc.r.estimate, 2),"
        " defs['ae'].null_model.lc_rank]",
        "ae_variants": "[e.shared < e.alpacaeval for e in defs['variant_errors']]",
        # the "Real judges (LLMBar)" section (tests/test_notebook_judge_bias.py)
        "llmbar_title": "defs['llmbar_page'].TITLE in shown",
        "llmbar_labels": "shown.count('re-scored by labkit')",  # a chart's spec escapes the apostrophe
        "llmbar_strategy": "defs['llmbar_strategy'].value",
        "llmbar_table": "defs['llmbar_table'].filter(__import__('polars').col('set') == 'Natural').to_dicts()",
        "llmbar_rows": "defs['llmbar_table'].height",
        "llmbar_flips": "[(s.pair.id, s.first.winner, s.second.winner, s.pair.label) for s in defs['llmbar_flips']]",
        "llmbar_flips_shown": "'changed its verdict with the order on 143 instances' in shown",
        "llmbar_flip_pages": "[defs['cj'].swap_html(s) for s in defs['llmbar_flips']]"
        " == list(defs['llmbar_flip_stepper'].widget.pages) != []",
    },
    "reflection_worth_it": {  # tests/test_published_page.py: the "Published runs, re-graded" section
        "published_label": "defs['published'].LABEL in shown",
        "published_problem": "defs['problem'].value",
        "published_steps": "len(defs['published'].problem_stepper(defs['problem'].value, defs['published_rows']).pages)",
    },
}

PROBES_WRAPPER = ROOT / "tests" / "marimo_probes.py"

# One run of a notebook, made the way an instructor exports it (labkit.views.export), with marimo's
# command line started through the probes wrapper: the static copy and the probe values come from
# the same kernel. (A check that a cell raised fails the export: marimo exits non-zero.)
_RUN = """
import sys
from pathlib import Path
from labkit.views.export import OfflineExportError, export_offline
notebook, html, wrapper, probes, result = sys.argv[1:]
try:
    export_offline(Path(notebook), Path(html), marimo=[wrapper, probes, result])
except OfflineExportError as e:
    sys.exit(f"labkit.views.export: {e}")
"""


@dataclass(frozen=True)
class HeadlessRun:
    notebook: Path
    returncode: int
    stderr: str
    values: dict[str, object] = field(default_factory=dict)
    html: Path | None = None  # the run's static copy (labkit.views.export), opened by tests/e2e/test_export.py
    probe_error: str = ""  # a probe that raised: its traceback

    def check(self) -> dict[str, object]:
        """The probe values, after asserting the run exited cleanly (stderr tail otherwise)."""
        assert self.returncode == 0, f"{self.notebook.name} failed:\n{self.stderr[-4000:]}"
        assert not self.probe_error, f"{self.notebook.name}: a probe failed:\n{self.probe_error[-4000:]}"
        return self.values


def notebook_env(**extra: str) -> dict[str, str]:
    """The offline default, whatever the developer's shell says, plus `extra`."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("LABKIT_MODEL", None)
    env.pop("OPENAI_API_KEY", None)  # nothing here may need a key
    env.update(extra)
    return env


def run_headless(notebook: Path, html: Path, probes: dict[str, str] | None = None, **extra_env: str) -> HeadlessRun:
    """Export `notebook` to `html` (a static copy, labkit.views.export) and read its probes
    (by default its NOTEBOOK_PROBES)."""
    probes = NOTEBOOK_PROBES.get(notebook.stem, {}) if probes is None else probes
    result = html.with_suffix(".probes.json")
    result.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(notebook), str(html), str(PROBES_WRAPPER), json.dumps(probes), str(result)],
        cwd=ROOT,
        env=notebook_env(**extra_env),
        capture_output=True,
        text=True,
        timeout=900,
    )
    got = json.loads(result.read_text()) if result.is_file() else {"error": "the probes never reported"}
    return HeadlessRun(notebook, proc.returncode, proc.stderr, got.get("values", {}), html, got.get("error", ""))


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory shared by every process of this test session (all pytest-xdist workers)."""
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is <session>/popen-gwN: the session's is its parent
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def headless(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., HeadlessRun]:
    """headless("judge_bias") -> that notebook's one run this session (per extra env).

    With pytest-xdist the run is shared across workers too: the first worker to ask runs it
    (holding a file lock) and writes the result; the others wait for it and read it.
    """
    from filelock import FileLock

    shared = session_dir(tmp_path_factory) / "headless"
    shared.mkdir(parents=True, exist_ok=True)
    runs: dict[tuple[str, tuple[tuple[str, str], ...]], HeadlessRun] = {}

    def get(stem: str, **extra_env: str) -> HeadlessRun:
        key = (stem, tuple(sorted(extra_env.items())))
        if key not in runs:
            name = "-".join([stem, *(f"{k}={v}" for k, v in key[1])]).replace("/", "_")
            done = shared / f"{name}.json"
            with FileLock(str(done) + ".lock"):
                if done.exists():
                    fields = json.loads(done.read_text())
                    runs[key] = HeadlessRun(NOTEBOOKS / f"{stem}.py", **{**fields, "html": Path(fields["html"])})
                else:
                    run = run_headless(NOTEBOOKS / f"{stem}.py", shared / f"{name}.html", **extra_env)
                    fields = {"returncode": run.returncode, "stderr": run.stderr, "values": run.values,
                              "html": str(run.html), "probe_error": run.probe_error}  # fmt: skip
                    done.write_text(json.dumps(fields))
                    runs[key] = run
        return runs[key]

    return get


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_servers() -> Any:
    """The real-browser tests share one JupyterLab and one `marimo run` per notebook folder within a
    worker (benchmarks/_browser.py); they are stopped when the session ends."""
    yield
    browser = sys.modules.get("e2e.browser")
    if browser is not None:
        browser.stop_shared_servers()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that uses no browser runs without one: Playwright's sync API keeps an event loop
    running in this thread while Chromium lives, which breaks a later asyncio.run(). The browser
    tests' Chromium (tests/e2e/conftest.py) relaunches on the next one that asks for it."""
    browser = sys.modules.get("e2e.browser")
    if browser is not None and "chromium" not in getattr(item, "fixturenames", ()):
        browser.close_shared_chromium()


# Tests that each run a whole notebook (its export, or in a real browser): spread one by
# one over the xdist workers and started first, so no worker is left with a queue of them at the end.
NOTEBOOK_RUNS = ("tests/e2e/", "tests/test_notebooks.py")


# Modules that take several seconds (`--durations`, idle machine; heaviest first): started
# right after the notebook runs, so the end of the run is many small modules that the two
# workers share out evenly, never one worker finishing a long module while the other idles.
HEAVY_MODULES = (
    "tests/test_smollm2.py",  # ~35 s: real generations
    "tests/test_arms.py",  # ~20 s: a Ray cluster, process pools
    "tests/test_hostile_runner.py",  # ~12 s: sandboxed pytest runs, a hang killed at the wall limit
    "tests/test_install.py",  # ~8 s: a real non-editable install
    "tests/test_sweep.py",
    "tests/test_experiment.py",
    "tests/test_engine_faults.py",
    "tests/test_hostile.py",
    "tests/test_budget.py",
    "tests/test_notebook_judge_bias.py",
)


# Tests that reuse what another test opened or ran, each by that test: under xdist they run on its
# worker, right after it (two workers asking for one run at once: one runs it, the other idles).
# Browser tests take over the page a walk left, its notebook already run (tests/e2e/pages.py);
# cache_isolation's headless run with LABKIT_MODEL set is read by two tests.
_MARIMO_WALK = "tests/e2e/test_marimo_browser.py::test_marimo_app_steps_through_rounds[{}.py]"
_JUPYTER_WALK = "tests/e2e/test_jupyter_browser.py::test_jupyterlab_runs_all_and_steps[{}.ipynb]"
RIGHT_AFTER = {
    "tests/e2e/test_classroom_browser.py::test_the_control_suite_is_captioned_as_breaking_a_right_answer":
        _MARIMO_WALK.format("reflection_worth_it"),
    "tests/e2e/test_classroom_browser.py::test_search_budget_says_success_and_incomplete_in_words":
        _MARIMO_WALK.format("search_budget"),
    "tests/e2e/test_glossary_browser.py::test_a_first_use_link_opens_its_glossary_entry_in_marimo":
        _MARIMO_WALK.format("lessons"),
    "tests/e2e/test_repair_patch_browser.py::test_marimo_try_your_own_patch_on_a_repair_case":
        _MARIMO_WALK.format("diminishing_returns"),
    "tests/e2e/test_cache_isolation_browser.py::test_jupyterlab_try_your_own_patch":
        _JUPYTER_WALK.format("cache_isolation"),
    "tests/e2e/test_cache_isolation_browser.py::test_jupyterlab_storyline_picker_downloads_and_real_model":
        _JUPYTER_WALK.format("cache_isolation"),
    "tests/e2e/test_glossary_browser.py::test_a_first_use_link_opens_its_glossary_entry_in_jupyterlab":
        _JUPYTER_WALK.format("lessons"),
    "tests/e2e/test_repair_patch_browser.py::test_jupyterlab_try_your_own_patch_on_a_repair_case":
        _JUPYTER_WALK.format("diminishing_returns"),
    "tests/test_notebooks.py::test_cache_isolation_storylines_stay_scripted_when_labkit_model_is_set":
        "tests/test_notebooks.py::test_marimo_notebook_runs_headless[cache_isolation.py]",
}  # fmt: skip


def _runs_a_notebook(nodeid: str) -> bool:
    return nodeid.startswith(NOTEBOOK_RUNS)


# The browser tests that open JupyterLab (each names it: test_jupyter_browser.py, or "jupyterlab"
# in the test's name) run on ONE worker, one after another: a worker's first JupyterLab (its
# server and frontend, booted once per worker, benchmarks/_browser.py) cost ~20 s more than
# the next ones, and two workers booted it twice. tests/test_suite_schedule.py checks that the
# rule finds every test that opens JupyterLab, and that outside test_jupyter_browser.py (all of
# which goes, its one small check that opens none included) it finds no other.
JUPYTERLAB_SCOPE = "JupyterLab"


def _opens_jupyterlab(nodeid: str) -> bool:
    module, _, name = nodeid.partition("::")
    return module == "tests/e2e/test_jupyter_browser.py" or (module.startswith("tests/e2e/") and "jupyterlab" in name)


def _start_order(nodeid: str) -> int:
    """0 for a notebook run, then the heavy modules in HEAVY_MODULES' order, then the rest."""
    if _runs_a_notebook(nodeid):
        return 0
    module = nodeid.split("::", 1)[0]
    return 1 + HEAVY_MODULES.index(module) if module in HEAVY_MODULES else 1 + len(HEAVY_MODULES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`./run test`), the notebook runs come first, then the heavy modules
    (every worker collects the same order); a plain `pytest` keeps the collection order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: _start_order(item.nodeid))  # stable: order kept within
        items[:] = right_after(items)


def right_after(items: list[Any]) -> list[Any]:
    """`items` with each test of RIGHT_AFTER moved right after the test it follows (if both are here)."""
    ids = {item.nodeid for item in items}
    moved = {n: w for n, w in RIGHT_AFTER.items() if n in ids and w in ids}
    out: list[Any] = []
    for item in items:
        if item.nodeid in moved:
            continue
        out.append(item)
        out.extend(i for i in items if moved.get(i.nodeid) == item.nodeid)
    return out


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`./run test` runs the suite with pytest-xdist, `--dist loadscope`: here a module's tests
    stay together on one worker (its module-scoped fixtures, a compared table for instance,
    are built once), except the tests that run a whole notebook (NOTEBOOK_RUNS), which are
    spread one by one: each goes to whichever worker is free (a test that reuses another's page
    or run goes with that test, RIGHT_AFTER), and those that open JupyterLab, which go together
    to one worker. (xdist's own `loadgroup` marks do not take effect with pytest 9: it rewrites
    a node id pytest no longer reads.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    # Keep the collection's order (notebook runs first): xdist's default reorder sends the
    # biggest scopes first, i.e. every single-test notebook run last. A `pytest -n auto --dist
    # loadscope` without ./run's --no-loadscope-reorder ran all the browser tests at the end.
    config.option.loadscopereorder = False

    class ModulesAndNotebookRuns(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if _opens_jupyterlab(nodeid):
                return JUPYTERLAB_SCOPE
            if _runs_a_notebook(nodeid):
                return RIGHT_AFTER.get(nodeid, nodeid)  # one scope: a test and those that follow it
            return nodeid.split("::", 1)[0]

    return ModulesAndNotebookRuns(config, log)


@pytest.fixture
def template_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A fresh `labkit new-case` template in tmp_path/c (its output swallowed)."""
    from labkit.cli import main

    folder = tmp_path / "c"
    assert main(["new-case", str(folder)]) == 0
    capsys.readouterr()
    return folder
