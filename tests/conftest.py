"""Shared fixtures. `headless`: each marimo notebook runs headless ONCE per test session.

A notebook run costs seconds of real loops; every test that needs what a notebook computed
or showed reads it from this one run (per notebook and environment) instead of running it
again. The run happens in a fresh interpreter, exactly as `python notebooks/<nb>.py` would,
and reports the values its probe expressions (NOTEBOOK_PROBES) evaluate to.
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

# Expressions evaluated after `outputs, defs = app.run()` (names: defs, outputs, shown, json).
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

_PROBE = """
import importlib.util, json, sys
path, probes = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("notebook_under_test", path)
nb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nb)
outputs, defs = nb.app.run()
shown = " ".join(str(getattr(o, "text", "")) for o in outputs if o is not None)
scope = {"defs": defs, "outputs": outputs, "shown": shown, "json": json}
values = {k: eval(expr, scope) for k, expr in probes.items()}
print("LABKIT-PROBE " + json.dumps(values, default=str))
"""


@dataclass(frozen=True)
class HeadlessRun:
    notebook: Path
    returncode: int
    stderr: str
    values: dict[str, object] = field(default_factory=dict)

    def check(self) -> dict[str, object]:
        """The probe values, after asserting the run exited cleanly (stderr tail otherwise)."""
        assert self.returncode == 0, f"{self.notebook.name} failed headless:\n{self.stderr[-4000:]}"
        return self.values


def notebook_env(**extra: str) -> dict[str, str]:
    """The offline default, whatever the developer's shell says, plus `extra`."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("LABKIT_MODEL", None)
    env.pop("OPENAI_API_KEY", None)  # nothing here may need a key
    env.update(extra)
    return env


def run_headless(notebook: Path, **extra_env: str) -> HeadlessRun:
    probes = NOTEBOOK_PROBES.get(notebook.stem, {})
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(notebook), json.dumps(probes)],
        cwd=ROOT,
        env=notebook_env(**extra_env),
        capture_output=True,
        text=True,
        timeout=900,
    )
    values: dict[str, object] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("LABKIT-PROBE "):
            values = json.loads(line.removeprefix("LABKIT-PROBE "))
    return HeadlessRun(notebook, proc.returncode, proc.stderr, values)


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
                    runs[key] = HeadlessRun(**{**json.loads(done.read_text()), "notebook": NOTEBOOKS / f"{stem}.py"})
                else:
                    run = run_headless(NOTEBOOKS / f"{stem}.py", **extra_env)
                    fields = {"returncode": run.returncode, "stderr": run.stderr, "values": run.values}
                    done.write_text(json.dumps(fields))
                    runs[key] = run
        return runs[key]

    return get



@pytest.fixture(scope="session", autouse=True)
def _stop_shared_servers() -> Any:
    """The real-browser tests share one JupyterLab and one `marimo run` per notebook within a
    worker (benchmarks/_browser.py); they are stopped when the session ends."""
    yield
    browser = sys.modules.get("e2e.browser")
    if browser is not None:
        browser.stop_shared_servers()


# Tests that each run a whole notebook (headless, in nbclient or in a real browser): spread one by
# one over the xdist workers and started first, so no worker is left with a queue of them at the end.
NOTEBOOK_RUNS = ("tests/e2e/", "tests/test_notebooks.py")


def _runs_a_notebook(nodeid: str) -> bool:
    return nodeid.startswith(NOTEBOOK_RUNS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`./run test`), the notebook runs come first (every worker collects
    the same order); a plain `pytest` keeps the collection order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: not _runs_a_notebook(item.nodeid))  # stable: order kept within


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`./run test` runs the suite with pytest-xdist, `--dist loadscope`: here a module's tests
    stay together on one worker (its module-scoped fixtures, a compared table or a Chromium,
    are built once), except the tests that run a whole notebook (NOTEBOOK_RUNS), which are
    spread one by one: each goes to whichever worker is free. (xdist's own `loadgroup` marks
    do not take effect with pytest 9: it rewrites a node id pytest no longer reads.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    # Keep the collection's order (notebook runs first): xdist's default reorder sends the
    # biggest scopes first, i.e. every single-test notebook run last. A `pytest -n auto --dist
    # loadscope` without ./run's --no-loadscope-reorder ran all the browser tests at the end.
    config.option.loadscopereorder = False

    class ModulesAndNotebookRuns(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if _runs_a_notebook(nodeid) else nodeid.split("::", 1)[0]

    return ModulesAndNotebookRuns(config, log)


@pytest.fixture
def template_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A fresh `labkit new-case` template in tmp_path/c (its output swallowed)."""
    from labkit.cli import main

    folder = tmp_path / "c"
    assert main(["new-case", str(folder)]) == 0
    capsys.readouterr()
    return folder
