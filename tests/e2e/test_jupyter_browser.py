"""Every Jupyter notebook, opened in a real JupyterLab in Chromium: run all, then step.

Known trap: right after a notebook opens, its kernel can restart, and a "Run All" sent
then silently drops cells. So the test waits until exactly one kernel is idle and stays
so, runs all once, and fails (never retries) if any code cell did not run or errored.
"""

from __future__ import annotations

import time

import pytest

from e2e import browser as e2e

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # notebooks run their loops for real

STABLE = 2.0  # seconds the one kernel must stay idle, same id, before "Run All"

_CELLS = """() => {
  const cells = jupyterapp.shell.currentWidget.content.model.cells;
  const out = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    out.push({
      index: i,
      count: c.executionCount,
      source: c.sharedModel.getSource().slice(0, 80),
      outputs: c.outputs.toJSON().map(o => o.output_type === 'error'
        ? `error: ${o.ename}: ${o.evalue}` : o.output_type),
    });
  }
  return out;
}"""


# Module scope: Playwright's sync API keeps an event loop running in this thread while
# the browser lives, which would break any later test that calls asyncio.run().
@pytest.fixture(scope="module")
def chromium():
    with e2e.shared_chromium() as c:
        yield c


def _one_idle_kernel(server, name):
    """Wait until exactly one kernel exists, runs `name`'s session, and stays idle for STABLE s."""
    since: list[tuple[str, float]] = []

    def stable():
        kernels = e2e.get_json(f"{server.url}/api/kernels", server.headers)
        sessions = e2e.get_json(f"{server.url}/api/sessions", server.headers)
        if len(kernels) != 1 or kernels[0]["execution_state"] != "idle":
            since.clear()
            return False
        kid = kernels[0]["id"]
        if not any(s["path"].endswith(name) and s["kernel"]["id"] == kid for s in sessions):
            since.clear()
            return False
        if not since or since[0][0] != kid:
            since[:] = [(kid, time.monotonic())]
        return time.monotonic() - since[0][1] >= STABLE

    e2e.wait_until(stable, e2e.RENDER_TIMEOUT, f"exactly one idle, stable kernel for {name}", 0.25)


def open_and_run_all(page, server, name):
    """Open notebook `name` in JupyterLab, wait for its one idle kernel, run all cells, and fail
    if any cell did not run or raised."""
    page.goto(f"{server.url}/lab/tree/{name}?token={server.token}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=e2e.SERVER_TIMEOUT * 1000)
    page.wait_for_function(
        "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel",
        timeout=e2e.SERVER_TIMEOUT * 1000,
    )
    _one_idle_kernel(server, name)
    page.evaluate("() => jupyterapp.commands.execute('notebook:run-all-cells')")
    cells = page.evaluate(_CELLS)
    failed = [c for c in cells if c["count"] is None or any(o.startswith("error") for o in c["outputs"])]
    assert not failed, f"cells not run or raised: {failed}"


@pytest.mark.parametrize("notebook", e2e.jupyter_notebooks(), ids=lambda p: p.name)
def test_jupyterlab_runs_all_and_steps(chromium, notebook):
    ctx = chromium.context()  # fails with the install hint if Chromium is missing
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        with e2e.jupyter_lab(notebook) as server:
            try:
                page.goto(f"{server.url}/lab/tree/{notebook.name}?token={server.token}")
                page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(
                    timeout=e2e.SERVER_TIMEOUT * 1000
                )
                page.wait_for_function(
                    "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel",
                    timeout=e2e.SERVER_TIMEOUT * 1000,
                )
                _one_idle_kernel(server, notebook.name)
                page.evaluate(
                    "() => jupyterapp.commands.execute('notebook:run-all-cells')"
                )  # resolves when the last cell finished (or was dropped)
                cells = page.evaluate(_CELLS)
            except Exception as err:
                page.screenshot(path=str(e2e.BUILD / f"jupyter-{notebook.stem}-FAILED.png"))
                raise e2e.E2EError(f"{err}\n--- jupyter log ---\n{server.log_tail()}") from None
            not_run = [c for c in cells if c["count"] is None]
            assert not not_run, f"Run All left cells unexecuted (kernel restarted?): {not_run}"
            failed = [c for c in cells if any(o.startswith("error") for o in c["outputs"])]
            assert not failed, f"cells raised: {failed}"
            silent = [c for c in cells if not c["outputs"]]
            assert not silent, f"cells ran but show nothing (outputs missing): {silent}"
            page.screenshot(path=str(e2e.BUILD / f"jupyter-{notebook.stem}.png"))
            steppers = page.locator(".labkit-stepper")
            e2e.wait_until(steppers.count, e2e.STEP_TIMEOUT, "a round stepper in the outputs")
            spec = e2e.SPECS.get(notebook.stem)
            for k in range(steppers.count()):
                s = e2e.StepperDriver.nth(page, k)
                e2e.walk_stepper(s, spec, e2e.BUILD, f"jupyter-{notebook.stem}-{k}")
        assert not errors, f"uncaught errors in the page: {errors}"
    finally:
        ctx.close()
