"""marimo's command line, reading probes: `python tests/marimo_probes.py PROBES RESULT <marimo args>`.

tests/conftest.py makes each notebook's one run of a session its static export
(labkit.views.export, which runs `marimo export html` through this wrapper). Before marimo
closes the run's session, the wrapper evaluates the probe expressions (PROBES, a JSON object
of name -> expression) in the notebook's own kernel, on what the run computed and showed, and
writes their values to RESULT as JSON ({"values": ...}, or {"error": traceback}). The export
is marimo's, unchanged: the probes run in marimo's scratchpad, not in a cell of the notebook.

A probe can use `defs` (every cell's definitions), `shown` (the text of every output that is
HTML or markdown, as the page shows it) and `json`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

WAIT = 300.0  # seconds the probes may take, after the whole notebook has run

_KERNEL_SIDE = """
def _labkit_probe(probes, result, shown):
    import json, traceback
    from marimo._runtime.context import get_context

    try:
        cells = get_context().graph.cells.values()
        defs = {n: globals()[n] for c in cells for n in c.defs if n in globals()}
        scope = {"defs": defs, "shown": shown.read_text(encoding="utf-8"), "json": json}
        got = {"values": {k: eval(expr, scope) for k, expr in probes.items()}}
    except Exception:
        got = {"error": traceback.format_exc()}
    part = result.with_name(result.name + ".part")
    part.write_text(json.dumps(got, default=str))
    part.replace(result)  # whole or absent: the wrapper waits for this name
"""


def main() -> None:
    probes, result, argv = json.loads(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    from marimo._runtime.commands import ExecuteScratchpadCommand
    from marimo._session.session import SessionImpl

    close = SessionImpl.close
    shown = result.with_name(result.name + ".shown")

    def probe_then_close(self: SessionImpl, *, graceful: bool = False) -> None:
        if not self._closed:
            outputs = [n.output for n in self.session_view.cell_notifications.values()]
            shows = ("text/html", "text/markdown")  # marimo sends mo.md as text/markdown (HTML)
            html = [o.data for o in outputs if o is not None and o.mimetype in shows]
            shown.write_text(" ".join(map(str, html)), encoding="utf-8")
            call = f"_labkit_probe({probes!r}, Path({str(result)!r}), Path({str(shown)!r}))"
            code = f"{_KERNEL_SIDE}\nfrom pathlib import Path\n{call}\n"
            self.put_control_request(ExecuteScratchpadCommand(code=code), from_consumer_id=None)
            deadline = time.monotonic() + WAIT
            # a kernel that died never answers: stop waiting for it
            kernel = getattr(self._kernel_manager, "kernel_task", None)
            while not result.exists() and time.monotonic() < deadline:
                if kernel is not None and hasattr(kernel, "is_alive") and not kernel.is_alive():
                    break
                time.sleep(0.05)
        close(self, graceful=graceful)

    SessionImpl.close = probe_then_close  # type: ignore[method-assign]
    from marimo._cli.cli import main as marimo

    sys.argv = ["marimo", *argv]
    marimo()


if __name__ == "__main__":
    main()
