"""Step latency: from a click on the stepper's "next"/"previous" to the updated view, in Chromium.

One command:  .venv/bin/python benchmarks/step_latency.py [notebooks/x.py ...]

For each notebook (marimo via `marimo run`, Jupyter via JupyterLab), after the first run
has finished, the page itself times each step: performance.now() at the click, and again
at the first DOM mutation after which the view (the page's text outside the stepper, or
the notebook's SPECS element) differs from before. The same-run baseline is the same
measurement on a plain button injected into the same page whose click changes a text
locally, with no kernel involved. Goal: median step -> view <= 16 ms (one frame) in every
notebook, after first render.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import _browser as e2e
from _common import figure

STEPS = 8  # measured steps per notebook (next, previous, next, ...)
GOAL_MS = 16.0  # one frame at 60 Hz: stepping must feel instant

# Times one click in the page: resolves with ms from the click to the first mutation after
# which the watched text changed. `target` is clicked; `watch` is a CSS selector whose
# (deep) text is the view, or "" for the whole page outside steppers.
_MEASURE = """async ([target, watch, scopeOfStepper]) => {
  const deep = (root) => {
    const out = [];
    const walk = (n) => {
      if (n.nodeType === Node.TEXT_NODE) { const t = n.data.trim(); if (t) out.push(t); return; }
      if (n.nodeType === Node.ELEMENT_NODE) {
        if (n.matches('.labkit-stepper, script, style, template')) return;
        if (n.shadowRoot) walk(n.shadowRoot);
      } else if (n.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
      for (const c of n.childNodes) walk(c);
    };
    walk(root);
    return out.join('\\n');
  };
  const scope = scopeOfStepper ? (() => {
    for (let n = target; n; n = n.parentNode || n.host) if (n.matches && n.matches('.jp-Cell')) return n;
    return document.body;
  })() : document.body;
  const deepQuery = (root) => {  // querySelectorAll that also looks inside open shadow roots
    const out = [];
    const walk = (n) => {
      out.push(...Array.from(n.querySelectorAll(watch)).map(e => e.textContent));
      for (const e of n.querySelectorAll('*')) if (e.shadowRoot) walk(e.shadowRoot);
    };
    walk(root);
    return out.join('\\n');
  };
  const read = () => watch ? deepQuery(scope) : deep(scope);
  const before = read();
  const roots = [document.body];
  const collect = (n) => { if (n.shadowRoot) { roots.push(n.shadowRoot); collect(n.shadowRoot); }
                           for (const c of n.children || []) collect(c); };
  collect(document.body);
  return await new Promise((resolve, reject) => {
    const t0 = performance.now();
    const obs = new MutationObserver(() => {
      if (read() !== before) { obs.disconnect(); resolve(performance.now() - t0); }
    });
    for (const r of roots) obs.observe(r, { subtree: true, childList: true, characterData: true });
    setTimeout(() => { obs.disconnect(); reject(new Error('view did not change within 60 s')); }, 60000);
    target.click();
  });
}"""

_BASELINE = """() => {
  if (document.getElementById('labkit-baseline')) return;
  const b = document.createElement('button');
  b.id = 'labkit-baseline';
  b.textContent = 'baseline';
  const out = document.createElement('span');
  out.id = 'labkit-baseline-out';
  let n = 0;
  b.addEventListener('click', () => { out.textContent = `clicked ${++n}`; });
  document.body.append(b, out);
}"""


def _time_clicks(page, target_js: str, watch: str, scoped: bool, settle=None) -> list[float]:
    times = []
    for i in range(STEPS):
        which = target_js.replace("WHICH", "next" if i % 2 == 0 else "prev")
        handle = page.evaluate_handle(which)
        mark = settle[1].seq if settle else 0
        times.append(float(page.evaluate(_MEASURE, [handle, watch, scoped])))
        if settle:
            e2e.settle_marimo(page, settle[1], mark, e2e.STEP_TIMEOUT, "the step's cells")
    return times


def _baseline(page) -> list[float]:
    page.evaluate(_BASELINE)
    return _time_clicks(page, "document.getElementById('labkit-baseline')", "#labkit-baseline-out", False)


# The stepper's buttons, found through open shadow roots (marimo renders widgets in one).
_BUTTON = """(() => {
  const find = (root) => {
    const hit = root.querySelector('.labkit-stepper .labkit-WHICH');
    if (hit) return hit;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) { const h = find(e.shadowRoot); if (h) return h; }
    return null;
  };
  return find(document);
})()"""


def _marimo(chromium, notebook: Path) -> tuple[list[float], list[float], float]:
    ctx = chromium.context()
    try:
        page = ctx.new_page()
        runs = e2e.MarimoRuns(page)
        with e2e.marimo_run(notebook) as server:
            page.goto(server.url, wait_until="domcontentloaded")
            e2e.settle_marimo(page, runs, 0, e2e.RENDER_TIMEOUT, "the first run")
            page.locator(".labkit-stepper").first.wait_for()
            spec = e2e.SPECS.get(notebook.stem)
            t = time.perf_counter()
            # A stepper that shows precomputed pages runs no cell on a step: nothing to settle.
            paged = e2e.StepperDriver.nth(page, 0, runs).shows_pages()
            settle = None if paged else (page, runs)
            steps = _time_clicks(page, _BUTTON, spec.selector if spec else "", False, settle)
            settled = (time.perf_counter() - t) / STEPS
            return steps, _baseline(page), settled
    finally:
        ctx.close()


def _jupyter(chromium, notebook: Path) -> tuple[list[float], list[float], float]:
    ctx = chromium.context()
    try:
        page = ctx.new_page()
        with e2e.jupyter_lab(notebook) as server:
            page.goto(f"{server.url}/lab/tree/{notebook.name}?token={server.token}")
            page.wait_for_function(
                "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel",
                timeout=e2e.SERVER_TIMEOUT * 1000,
            )
            e2e.wait_until(lambda: _idle(server), e2e.RENDER_TIMEOUT, "one idle kernel", every=0.5)
            page.evaluate("() => jupyterapp.commands.execute('notebook:run-all-cells')")
            page.locator(".labkit-stepper").first.wait_for()
            spec = e2e.SPECS.get(notebook.stem)
            steps = _time_clicks(page, _BUTTON, spec.selector if spec else "", True)
            return steps, _baseline(page), float("nan")
    finally:
        ctx.close()


def _idle(server) -> bool:
    kernels = e2e.get_json(f"{server.url}/api/kernels", server.headers)
    return len(kernels) == 1 and kernels[0]["execution_state"] == "idle"


def main(argv: list[str]) -> int:
    notebooks = [Path(a).resolve() for a in argv] or (e2e.marimo_notebooks() + e2e.jupyter_notebooks())
    print(f"step latency: click -> updated view, {STEPS} steps per notebook, after first render")
    print(
        f"{'notebook':32} {'median ms':>10} {'p90 ms':>8} {'baseline ms':>12} {'ratio':>7} "
        f"{'settled ms':>11}  goal <{GOAL_MS:.0f} ms"
    )
    worst = 0.0
    with e2e.shared_chromium() as chromium:
        for nb in notebooks:
            run = _jupyter if nb.suffix == ".ipynb" else _marimo
            steps, base, settled = run(chromium, nb)
            med, p90 = statistics.median(steps), sorted(steps)[int(0.9 * (len(steps) - 1))]
            bmed = statistics.median(base)
            worst = max(worst, med)
            print(
                f"{nb.name:32} {med:10.1f} {p90:8.1f} {bmed:12.1f} {med / bmed:7.1f}x "
                f"{'-' if math.isnan(settled) else f'{settled * 1000:.0f}':>11}  {'ok' if med <= GOAL_MS else 'OVER'}"
            )
            figure(f"step -> view median, {nb.name}", med, f"<= {GOAL_MS:.0f} ms", med <= GOAL_MS, unit=" ms")
    print(
        "ratio = median step / median local-button click (same page, same measurement). "
        "settled = marimo: click until every dependent cell re-ran (Python-side, 0.1 s polls)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
