"""Real-browser helpers shared by benchmarks/step_latency.py and the e2e tests (tests/e2e/browser.py).

Debian's Chromium driven by Playwright; marimo and JupyterLab servers on free 127.0.0.1
ports, always stopped on the way out; and the labkit round stepper: where it is, how to
move it (click and keyboard), and what the view must then show.

Nothing here sleeps a fixed time: every wait polls a condition until a generous deadline,
because the machine is a shared, noisy 2-core box.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build" / "e2e"
VENV_BIN = Path(sys.executable).parent
CHROMIUM = Path(os.environ.get("LABKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INSTALL_HINT = "run: sudo bash .ci/install-system.sh (./run test does it itself as root) to install Debian's chromium"

RENDER_TIMEOUT = 900.0  # first render includes running the notebook's loops for real
STEP_TIMEOUT = 120.0  # one step re-runs only the cells that read the stepper
# coming back to a step: how long its view may take to read again what it read the first time
# (a view that never does, e.g. one that follows the clicks, fails only at this deadline)
REVISIT_TIMEOUT = STEP_TIMEOUT
SERVER_TIMEOUT = 120.0

T = TypeVar("T")


class BrowserMissing(RuntimeError):
    """Chromium (or Playwright) is not installed; the message says how to install it."""


class E2EError(AssertionError):
    """What the browser showed is not what the notebook should show."""


def marimo_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.py"))


def jupyter_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def notebook_env() -> dict[str, str]:
    """The offline default, whatever the developer's shell says; no update checks over the network."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MARIMO_SKIP_UPDATE_CHECK": "1"}
    env.pop("LABKIT_MODEL", None)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


# --- waiting ---------------------------------------------------------------------------


def wait_until(check: Callable[[], T | None], timeout: float, what: str, every: float = 0.1) -> T:
    """Poll `check` until it returns something truthy; raise E2EError naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise E2EError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, headers: dict[str, str] | None = None) -> bool:
    try:
        req = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(req, timeout=5) as r:
            return 200 <= r.status < 300
    except OSError:
        return False


def get_json(url: str, headers: dict[str, str] | None = None) -> Any:
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


# --- Chromium ----------------------------------------------------------------------------


class Chromium:
    """One headless Chromium for a whole test session; each test gets a fresh `Context`.

    Every launch in a process uses the same profile (build/e2e/profile/<xdist worker>, emptied
    at the process's first launch), so its HTTP and code caches outlive a test and a relaunch:
    JupyterLab's and marimo's frontends are fetched and compiled once, not once per test (2-3 s
    of CPU per page). What a test could leave for the next (cookies, site storage) is cleared
    when its Context closes. Launching is lazy and its failure is remembered: every test that
    asks for a page then fails with the same clear message instead of erroring in a fixture.
    """

    _fresh_profile = True  # the first launch of this process empties the profile

    def __init__(self) -> None:
        self._pw: Any = None
        self._browser: Any = None  # the profile's one persistent browser context
        self._error: BrowserMissing | None = None

    def _launch(self) -> Any:
        if self._error:
            raise self._error
        if self._browser is None:
            if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
                self._error = BrowserMissing(f"no Chromium at {CHROMIUM}: {INSTALL_HINT}")
                raise self._error
            try:
                from playwright.sync_api import sync_playwright
            except ImportError as e:
                self._error = BrowserMissing(
                    f"the python package playwright is missing ({e}); install the dev dependencies"
                )
                raise self._error from e
            profile = BUILD / "profile" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")
            if Chromium._fresh_profile:
                shutil.rmtree(profile, ignore_errors=True)
                Chromium._fresh_profile = False
            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.launch_persistent_context(
                str(profile),
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900},  # a projector-ish size
                accept_downloads=True,
                timeout=120_000,
            )
        return self._browser

    def context(self, **kwargs: Any) -> Context:
        """A test's pages, on a profile with no cookies or site storage from earlier tests."""
        if kwargs.pop("accept_downloads", True) is not True or kwargs:
            raise TypeError(f"a Context takes no options but accept_downloads=True, got {kwargs}")
        return Context(self._launch())

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
        if self._pw is not None:
            self._pw.stop()
        self._browser = self._pw = None


_SITE_STORAGE = "local_storage,indexeddb,websql,cache_storage,service_workers,file_systems,shared_storage"


class Context:
    """A test's share of the browser: the pages it opened and the routes it added. Closing it
    closes them, and clears the cookies and the site storage of every origin its pages visited
    (the HTTP and code caches stay)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self._pages: list[Any] = []
        self._routes: list[tuple[Any, Any]] = []
        self._origins: set[str] = set()

    def new_page(self) -> Any:
        page = self._browser.new_page()
        page.set_default_timeout(STEP_TIMEOUT * 1000)
        page.on("framenavigated", lambda f: self._origins.add(_origin(f.url)))
        self._pages.append(page)
        return page

    def route(self, url: Any, handler: Any) -> None:
        self._browser.route(url, handler)
        self._routes.append((url, handler))

    def close(self) -> None:
        pages, self._pages = self._pages, []
        routes, self._routes = self._routes, []
        origins = {_origin(p.url) for p in pages if not p.is_closed()} | self._origins
        try:
            for url, handler in routes:
                self._browser.unroute(url, handler)
            for page in pages:
                page.close()
            self._browser.clear_cookies()
            cdp = self._browser.new_cdp_session(self._browser.pages[0])  # the profile's first tab, never closed
            for origin in origins - {""}:
                cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": _SITE_STORAGE})
            cdp.detach()
        except Exception as e:
            if "has been closed" not in str(e):  # a browser closed meanwhile took all of it along
                raise


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


_shared: Chromium | None = None
_users = 0


@contextlib.contextmanager
def shared_chromium() -> Iterator[Chromium]:
    """The process-wide Chromium; closed when the last user leaves (end of the pytest session)."""
    global _shared, _users
    if _shared is None:
        _shared = Chromium()
    _users += 1
    try:
        yield _shared
    finally:
        _users -= 1
        if _users == 0:
            _shared.close()
            _shared = None


def close_shared_chromium() -> None:
    """Close the process-wide Chromium if it is up; its users keep it and it relaunches on
    next use (tests/conftest.py: before a test that uses no browser, see there why)."""
    if _shared is not None:
        _shared.close()


# --- servers -----------------------------------------------------------------------------


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    headers: dict[str, str] = field(default_factory=dict)
    token: str = ""
    root: str = ""  # the folder a JupyterLab serves

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


@contextlib.contextmanager
def _serving(
    cmd: list[str],
    url: str,
    ready: str,
    log: Path,
    env: dict[str, str],
    cwd: Path,
    headers: dict[str, str] | None = None,
) -> Iterator[Server]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, so teardown reaches its children
        )
        server = Server(url, proc, log, headers or {})
        try:
            wait_until(
                lambda: proc.poll() is not None or _answers(ready, headers),
                SERVER_TIMEOUT,
                f"{Path(cmd[0]).name} to answer at {ready}",
                every=0.25,
            )
            if proc.poll() is not None:
                raise E2EError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{server.log_tail()}")
            yield server
        finally:
            stop(proc)


def stop(proc: subprocess.Popen[bytes], grace: float = 20) -> None:
    """SIGTERM the process group we started, SIGKILL it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


# Servers are shared within a process (a pytest-xdist worker, a benchmark): starting one costs
# seconds (JupyterLab 5-10 s idle, 40 s under load; marimo 2-3 s), and a test needs a fresh page
# and kernel, not a fresh server. Each test borrows one (`marimo_run`, `jupyter_lab`) and gets it
# back as it found it; `stop_shared_servers()` (tests/conftest.py, at session end; atexit too)
# stops them all.
_SERVERS: dict[tuple[str, ...], tuple[contextlib.ExitStack, Server]] = {}


def _borrow(key: tuple[str, ...], start: Callable[[], contextlib.AbstractContextManager[Server]]) -> Server:
    """The process's server for `key`, started by `start()` the first time (restarted if it died)."""
    if key in _SERVERS and _SERVERS[key][1].proc.poll() is not None:
        _SERVERS.pop(key)[0].close()
    if key not in _SERVERS:
        stack = contextlib.ExitStack()
        try:
            server = stack.enter_context(start())
        except BaseException:
            stack.close()
            raise
        _SERVERS[key] = (stack, server)
    return _SERVERS[key][1]


def stop_shared_servers() -> None:
    """Stop every server this process started (each one's own teardown: kernels, then the group)."""
    while _SERVERS:
        _SERVERS.popitem()[1][0].close()


atexit.register(stop_shared_servers)


@contextlib.contextmanager
def marimo_run(notebook: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`marimo run` serving `notebook`'s folder on a free 127.0.0.1 port, as apps (read-only);
    the server's url is this notebook's page (`/?file=<name>`).

    `env` is added to the offline default environment (e.g. a LABKIT_MODEL to check that
    only the real-model controls read it). One server per folder and `env` in this process, as
    a course serves its notebooks: every page that opens one gets its own session (kernel), as
    every student of a class does, and the server imports what the notebooks share once."""
    extra = env or {}
    folder = notebook.resolve().parent
    key = ("marimo-run", str(folder), json.dumps(extra, sort_keys=True))
    server = _borrow(key, lambda: _marimo_run_server(folder, extra))
    yield dataclasses.replace(server, url=f"{server.url}/?file={urllib.parse.quote(notebook.name)}")


@contextlib.contextmanager
def _marimo_run_server(folder: Path, env: dict[str, str]) -> Iterator[Server]:
    port = free_port()
    cmd = [
        str(VENV_BIN / "marimo"),
        "run",
        str(folder),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--headless",
        "--no-token",
        "--no-sandbox",
    ]
    url = f"http://127.0.0.1:{port}"
    log = _log(f"marimo-run-{folder.name}-{len(_SERVERS)}")
    with _serving(cmd, url, f"{url}/health", log, {**notebook_env(), **env}, ROOT) as server:
        yield server


@contextlib.contextmanager
def marimo_edit(notebook: Path) -> Iterator[Server]:
    """`marimo edit` for one notebook, as `./run lab` opens it (the project's pyproject config applies)."""
    port = free_port()
    cmd = [
        str(VENV_BIN / "marimo"),
        "edit",
        str(notebook),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--headless",
        "--no-token",
        "--skip-update-check",
    ]
    url = f"http://127.0.0.1:{port}"
    log = _log(f"marimo-edit-{notebook.stem}")
    with _serving(cmd, url, f"{url}/health", log, notebook_env(), ROOT) as server:
        yield server


@contextlib.contextmanager
def jupyter_lab(notebook: Path, leave_running: bool = False) -> Iterator[Server]:
    """This process's JupyterLab on a free 127.0.0.1 port, serving a fresh copy of `notebook`
    (so no run writes to the repo), with no kernel, no session and no saved layout: a page that
    opens the notebook starts its one kernel, as on a fresh server. On the way out every
    kernel the borrower started is shut down, unless `leave_running` (a page kept open for
    the next test, tests/e2e/pages.py): the next borrower's way in shuts them down anyway."""
    server = _borrow(("jupyter-lab",), _jupyter_lab_server)
    _quiet_lab(server)
    shutil.copy(notebook, Path(server.root) / notebook.name)
    try:
        yield server
    except BaseException:
        _quiet_lab(server)
        raise
    if not leave_running:
        _quiet_lab(server)


def _quiet_lab(server: Server) -> None:
    """No sessions, no kernels, no saved workspace (JupyterLab would reopen the last notebook)."""
    _shutdown_kernels(server)
    wait_until(
        lambda: (
            not get_json(f"{server.url}/api/kernels", server.headers)
            and not get_json(f"{server.url}/api/sessions", server.headers)
        ),
        SERVER_TIMEOUT,
        "JupyterLab to have shut down the last test's kernels",
        every=0.25,
    )
    workspaces = Path(server.root).parent / "workspaces"
    shutil.rmtree(workspaces, ignore_errors=True)
    workspaces.mkdir()


@contextlib.contextmanager
def _jupyter_lab_server() -> Iterator[Server]:
    """JupyterLab whose config, data, runtime, workspaces and work folders live under
    build/e2e/jupyter/<xdist worker or 'main'>/; the python3 kernel spec there points at this
    venv's interpreter. Kernels are shut down through the API before the server is stopped."""
    # one home per pytest-xdist worker: two workers serving notebooks at once must not
    # delete each other's folder (the second's rmtree pulled the first's kernel out from under it)
    home = BUILD / "jupyter" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")
    shutil.rmtree(home, ignore_errors=True)
    dirs = {k: home / k for k in ("config", "data", "runtime", "work", "workspaces")}
    for d in dirs.values():
        d.mkdir(parents=True)
    spec = dirs["data"] / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (labkit venv)",
                "language": "python",
            }
        )
    )
    settings = dirs["config"] / "lab" / "user-settings" / "@jupyterlab"
    _write(settings / "docmanager-extension" / "plugin.jupyterlab-settings", {"autosave": False})
    _write(
        settings / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )
    # a saved notebook keeps its widgets' state (what they show), as nbconvert --execute does:
    # tests/e2e/test_jupyter_browser.py checks the notebook as JupyterLab ran and saved it
    _write(
        settings.parent / "@jupyter-widgets" / "jupyterlab-manager" / "plugin.jupyterlab-settings",
        {"saveState": True},
    )
    token = uuid.uuid4().hex
    port = free_port()
    env = {
        **notebook_env(),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(home / "ipython"),
    }
    cmd = [
        str(VENV_BIN / "jupyter"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.root_dir={dirs['work']}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.open_browser=False",
        "--ServerApp.terminals_enabled=False",
        "--allow-root",  # CI runs as root; harmless otherwise
    ]
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"token {token}"}
    log = _log("jupyter-lab")
    with _serving(cmd, url, f"{url}/api/status", log, env, dirs["work"], auth) as server:
        server.token = token
        server.root = str(dirs["work"])
        try:
            yield server
        finally:
            _shutdown_kernels(server)


def _log(name: str) -> Path:
    """A server's log file; per pytest-xdist worker, so two workers never write the same one."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return BUILD / "logs" / (f"{name}-{worker}.log" if worker else f"{name}.log")


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _shutdown_kernels(server: Server) -> None:
    """Delete every session (which shuts its kernel down), then any kernel left."""
    with contextlib.suppress(OSError, ValueError):
        for what in ("sessions", "kernels"):
            for k in get_json(f"{server.url}/api/{what}", server.headers):
                req = urllib.request.Request(
                    f"{server.url}/api/{what}/{k['id']}", method="DELETE", headers=server.headers
                )
                urllib.request.urlopen(req, timeout=20).close()


# --- marimo's run state, read from its websocket -----------------------------------------


class MarimoRuns:
    """Follows the kernel's cell statuses as marimo streams them to the page.

    Every frame gets a sequence number. `quiet(mark)` is true once a run started after
    `mark` (a cell queued or running), a `completed-run` came after that start, and no
    cell is queued or running. This is marimo's own protocol (`cell-op`, `completed-run`),
    checked against marimo 0.25; if it changes, the waits time out naming what they saw.
    """

    def __init__(self, page: Any) -> None:
        self.status: dict[str, str] = {}
        self.seq = 0
        self.started = 0  # seq of the last cell that became queued or running
        self.completed = 0  # seq of the last completed-run
        page.on("websocket", self._attach)

    def _attach(self, ws: Any) -> None:
        if "/ws" in ws.url:
            ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        if not isinstance(payload, str) or '"op"' not in payload[:40]:
            return
        try:
            msg = json.loads(payload)
        except ValueError:
            return
        self.seq += 1
        op, data = msg.get("op"), msg.get("data") or {}
        if op == "cell-op" and data.get("status"):
            self.status[data["cell_id"]] = data["status"]
            if data["status"] in ("queued", "running"):
                self.started = self.seq
        elif op == "completed-run":
            self.completed = self.seq

    def busy(self) -> list[str]:
        return sorted(c for c, s in self.status.items() if s in ("queued", "running"))

    def quiet(self, mark: int) -> bool:
        return self.started > mark and self.completed > self.started and not self.busy()


def settle_marimo(page: Any, runs: MarimoRuns, mark: int, timeout: float, what: str) -> None:
    """Wait until a run that started after `mark` has completed and every cell is idle."""
    deadline = time.monotonic() + timeout
    while not runs.quiet(mark):
        if time.monotonic() > deadline:
            raise E2EError(
                f"timed out after {timeout:.0f}s waiting for {what}; cells still busy: "
                f"{runs.busy()}; frames seen: {runs.seq}"
            )
        page.wait_for_timeout(100)  # lets Playwright deliver websocket frames: a poll, not a sleep


# --- the stepper -------------------------------------------------------------------------

# Text of a subtree, through open shadow roots, leaving out steppers, scripts and styles,
# and the chart's own chrome: vega-embed's action menu ("Save as SVG", "Open in Vega
# Editor"), which says nothing about the round and appears only after the chart rendered.
_DEEP_TEXT = """(root) => {
  const out = [];
  const walk = (n) => {
    if (n.nodeType === Node.TEXT_NODE) { const t = n.data.trim(); if (t) out.push(t); return; }
    if (n.nodeType !== Node.ELEMENT_NODE && n.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
    if (n.nodeType === Node.ELEMENT_NODE) {
      if (n.matches('.labkit-stepper, script, style, template, .vega-embed > details')) return;
      if (n.shadowRoot) walk(n.shadowRoot);
    }
    for (const c of n.childNodes) walk(c);
  };
  walk(root);
  return out.join('\\n');
}"""

# The element a stepper's view lives in: its Jupyter cell, else the whole page.
# querySelectorAll that also looks inside open shadow roots (marimo renders widgets there).
_DEEP_QUERY = """(root, sel) => {
  const out = [];
  const walk = (n) => {
    if (n.querySelectorAll) out.push(...Array.from(n.querySelectorAll(sel)).map(e => e.innerText));
    const all = n.querySelectorAll ? n.querySelectorAll('*') : [];
    for (const e of all) if (e.shadowRoot) walk(e.shadowRoot);
  };
  walk(root);
  return out;
}"""

# True once every vega chart in the subtree (through shadow roots) has finished its first
# render. vega-embed marks its container `.vega-embed` (and `.has-actions` when it will add
# the action menu), awaits the view's runAsync(), and only then appends the menu's
# <details>: its own "rendered" signal. A chart without a menu must at least hold its marks.
_CHART_PLACEHOLDER = "Loading chart..."
_CHARTS_RENDERED = """(root) => {
  const charts = [];
  const walk = (n) => {
    if (n.querySelectorAll) charts.push(...n.querySelectorAll('.vega-embed'));
    const all = n.querySelectorAll ? n.querySelectorAll('*') : [];
    for (const e of all) if (e.shadowRoot) walk(e.shadowRoot);
  };
  walk(root);
  return charts.every(c => c.classList.contains('has-actions')
    ? !!c.querySelector(':scope > details .vega-actions')
    : !!c.querySelector('.marks'));
}"""

_SCOPE = """(el) => {
  for (let n = el; n; n = n.parentNode || n.host) {
    if (n.matches && n.matches('.jp-Cell')) return n;
  }
  return document.body;
}"""

# One read of a stepper's view, from the stepper element itself: its scope's text, or null while
# a chart there is still loading or rendering (one round trip and one walk of the page per read).
_VIEW = f"""(el) => {{
  const scope = ({_SCOPE})(el);
  const text = ({_DEEP_TEXT})(scope);
  if (text.includes({json.dumps(_CHART_PLACEHOLDER)})) return null;
  return ({_CHARTS_RENDERED})(scope) ? text : null;
}}"""
_SPEC_TEXTS = f"(el, sel) => ({_DEEP_QUERY})(({_SCOPE})(el), sel)"
# The stepper's label as a reader sees it: scrolled to first if off-screen. JupyterLab skips
# rendering off-screen cells, and an unrendered element's innerText is empty until it is laid
# out again after the scroll (the caller polls until it reads).
_LABEL_TEXT = """(el) => {
  if (el.scrollIntoViewIfNeeded) el.scrollIntoViewIfNeeded(true); else el.scrollIntoView({block: 'nearest'});
  const label = el.querySelector('.labkit-label');
  return label ? label.innerText : '';
}"""

_LABEL = re.compile(r"^\s*(?P<unit>.*?)\s*(?P<i>\d+) of (?P<n>\d+)(?:\s*·\s*(?P<name>.*))?$", re.S)


@dataclass(frozen=True)
class ViewSpec:
    """What "the right round's content" is for a notebook, beyond the generic rule.

    `selector` finds, inside the stepper's scope (its Jupyter cell, or the marimo page),
    the element that names the round shown; `expect` maps the stepper's item label to
    the text that element must then read.
    """

    selector: str
    expect: Callable[[str], str]


def _trace_title(label: str) -> str:
    """labkit.views.report.step_labels -> StepView.title: 'start · v1' -> 'Start: v1', 'round 2 · keep' -> 'Round 2: keep'."""
    head, _, tail = label.partition(" · ")
    return f"{head[:1].upper()}{head[1:]}: {tail}"


# Per-notebook specs, by notebook stem (the .py and .ipynb of one worked example share one).
# A notebook without an entry is held to the generic rule only (see walk_stepper).
SPECS: dict[str, ViewSpec] = {
    "cache_isolation": ViewSpec(".labkit-step h3", _trace_title),
}


@dataclass
class StepperDriver:
    """Moves one stepper on a page and reads what the page shows for it."""

    page: Any
    root: Any  # Locator of the .labkit-stepper element
    runs: MarimoRuns | None = None  # in marimo, each move is followed until its run completed
    _mark: int = 0

    @classmethod
    def nth(cls, page: Any, k: int, runs: MarimoRuns | None = None) -> StepperDriver:
        return cls(page, page.locator(".labkit-stepper").nth(k), runs)

    def shows_pages(self) -> bool:
        """True if the widget shows precomputed pages itself: a step then runs no cell at all."""
        return bool(
            self.root.evaluate(
                "(r) => { const p = r.nextElementSibling;"
                " return !!(p && p.matches('.labkit-page') && p.childNodes.length); }"
            )
        )

    def settle(self) -> None:
        """Wait until the app finished reacting to the last move (marimo: its cells re-ran)."""
        if self.runs is not None and not self.shows_pages():
            settle_marimo(self.page, self.runs, self._mark, STEP_TIMEOUT, "the step's cells to re-run")

    def index(self) -> int:
        return int(self.root.get_attribute("data-index"))

    def label(self) -> tuple[int, int, str]:
        """(1-based position, count, item name) as the live label reads."""
        try:
            text = wait_until(lambda: str(self.root.evaluate(_LABEL_TEXT)), 10.0, "the stepper label to be laid out")
        except E2EError:
            text = ""
        m = _LABEL.match(text)
        if m is None:
            raise E2EError(f"stepper label {text!r} does not read '<unit> i of n[ · name]'")
        return int(m["i"]), int(m["n"]), (m["name"] or "").strip()

    def count(self) -> int:
        return self.label()[1]

    def view(self) -> str:
        """The text shown around the stepper, read once every chart in it has rendered (marimo
        shows "Loading chart..." before a chart's .vega-embed even exists: not yet rendered)."""

        def read() -> list[str] | None:
            text = self.root.evaluate(_VIEW)
            return None if text is None else [str(text)]

        return wait_until(read, STEP_TIMEOUT, "the charts on the page to finish rendering")[0]

    def spec_texts(self, selector: str) -> list[str]:
        return [str(t).strip() for t in self.root.evaluate(_SPEC_TEXTS, selector)]

    def click(self, which: str) -> None:
        self._mark = self.runs.seq if self.runs else 0
        self.root.locator(f".labkit-{which}").click()

    def press(self, key: str) -> None:
        self.root.focus()
        self._mark = self.runs.seq if self.runs else 0
        self.page.keyboard.press(key)

    def screenshot(self, path: Path) -> None:
        """The stepper's scope: its Jupyter cell, or the whole marimo page."""
        path.parent.mkdir(parents=True, exist_ok=True)
        scope = self.root.evaluate_handle(_SCOPE).as_element()
        if scope is None or scope.evaluate("e => e === document.body"):
            self.page.screenshot(path=str(path), full_page=True)
        else:
            scope.screenshot(path=str(path))


def _diff(expected: str, actual: str) -> str:
    import difflib

    lines = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "shown", n=1, lineterm="")
    return "\n".join(list(lines)[:40])


WALK = 4  # steps walked one by one at each end; a long stepper (200 pairs) is sampled, not walked
# LABKIT_STEP_SHOTS=1 takes pictures for a review in build/e2e/: every step walked (about 150 in
# the whole suite, a tenth of its browser time), and each test's page at its full length (a long
# notebook's costs 1-2 s of CPU). By default each test saves one picture of its window.
STEP_SHOTS = os.environ.get("LABKIT_STEP_SHOTS", "") not in ("", "0")


def page_shot(page: Any, path: Path) -> None:
    """A test's picture of its page: the 1280x900 window, or (LABKIT_STEP_SHOTS=1) the whole page."""
    page.screenshot(path=str(path), full_page=STEP_SHOTS)


def walk_stepper(s: StepperDriver, spec: ViewSpec | None, shots: Path | None = None, name: str = "") -> dict[int, str]:
    """Step forward by clicks and back by keys through the rounds, checking what is shown.

    Generic rule, for every notebook: after each move the stepper's label says the new
    position; the view around it (outside the stepper) changes when the round changes;
    coming back to a round shows exactly what it showed the first time (the view is a
    function of the round, not of the clicks); prev/next disable at the ends. With a
    spec, the element it names must read the round's own text, e.g. "Round 1: keep".
    Up to WALK steps are walked from the start (clicking "next") and back (left arrow);
    End, the left arrow, Home, the right arrow and "previous" cover the far end and the
    remaining keys. Returns the view text per visited index.
    """
    n = s.count()
    if n < 2:
        raise E2EError(f"{name}: the stepper has {n} item(s); there is nothing to step through")
    if s.index() != 0:
        raise E2EError(f"{name}: the stepper should open on the first item, opened on {s.index()}")
    views: dict[int, str] = {0: _arrive(s, 0, None, spec, name)}
    _ends(s, 0, n, name)

    def shot(i: int) -> None:  # a picture of each step walked, when asked for (STEP_SHOTS)
        if shots and STEP_SHOTS:
            s.screenshot(shots / f"{name}-step{i}.png")

    shot(0)
    far = min(n - 1, WALK)
    for i in range(1, far + 1):  # forward, clicking "next"
        s.click("next")
        views[i] = _arrive(s, i, None, spec, name, changed_from=views[i - 1])
        shot(i)
    for i in range(far - 1, -1, -1):  # back, with the left arrow key
        s.press("ArrowLeft")
        _arrive(s, i, views[i], spec, name)
    s.press("End")
    if n - 1 in views:
        _arrive(s, n - 1, views[n - 1], spec, name)
    else:
        views[n - 1] = _arrive(s, n - 1, None, spec, name, changed_from=views[0])
        shot(n - 1)
    _ends(s, n - 1, n, name)
    if n > 2:  # (every move must change the index: a no-op move re-runs nothing to wait for)
        s.press("ArrowLeft")
        if n - 2 in views:
            _arrive(s, n - 2, views[n - 2], spec, name)
        else:
            views[n - 2] = _arrive(s, n - 2, None, spec, name, changed_from=views[n - 1])
    s.press("Home")
    _arrive(s, 0, views[0], spec, name)
    s.press("ArrowRight")  # forward by key, back by click
    _arrive(s, 1, views[1], spec, name)
    s.click("prev")
    _arrive(s, 0, views[0], spec, name)
    return views


STABLE_GAP = 0.5  # seconds between two reads of a first view that must agree


def _stable_view(s: StepperDriver, name: str) -> str:
    deadline = time.monotonic() + STEP_TIMEOUT
    last = s.view()
    while True:
        s.page.wait_for_timeout(STABLE_GAP * 1000)
        now = s.view()
        if now == last:
            return now
        if time.monotonic() > deadline:
            raise E2EError(f"{name}: the first view kept changing for {STEP_TIMEOUT:.0f}s:\n" + _diff(last, now))
        last = now


def _arrive(
    s: StepperDriver,
    i: int,
    same_as: str | None,
    spec: ViewSpec | None,
    name: str,
    changed_from: str | None = None,
) -> str:
    """Wait until the stepper sits at `i` and the view is settled; check it; return the view text."""
    wait_until(lambda: s.index() == i, STEP_TIMEOUT, f"{name}: the stepper to move to index {i}")
    pos, n, item = s.label()
    if pos != i + 1:
        raise E2EError(f"{name}: stepper at index {i} but its label says {pos} of {n}")
    s.settle()
    if changed_from is not None:
        wait_until(
            lambda: s.view() != changed_from,
            STEP_TIMEOUT,
            f"{name}: the view to change for step {i}",
        )
        s.settle()
    if spec is not None:
        want = spec.expect(item)
        try:
            wait_until(lambda: want in s.spec_texts(spec.selector), STEP_TIMEOUT, "")
        except E2EError:
            raise E2EError(
                f"{name}: at step {i} ({item!r}) {spec.selector} should read {want!r}, "
                f"shows {s.spec_texts(spec.selector)!r}"
            ) from None
    # the page's first look (nothing to compare with yet): a widget elsewhere on the page may still
    # be mounting (marimo's code editor), so read until two reads STABLE_GAP apart agree
    view = s.view() if same_as is not None or changed_from is not None else _stable_view(s, name)
    if same_as is not None and view != same_as:
        try:
            view = wait_until(lambda: (v := s.view()) == same_as and v, REVISIT_TIMEOUT, "")
        except E2EError:
            raise E2EError(
                f"{name}: coming back to step {i} shows something else than the first time:\n"
                + _diff(same_as, s.view())
            ) from None
    return view


def _ends(s: StepperDriver, i: int, n: int, name: str) -> None:
    prev_off = s.root.locator(".labkit-prev").is_disabled()
    next_off = s.root.locator(".labkit-next").is_disabled()
    if prev_off != (i == 0) or next_off != (i == n - 1):
        raise E2EError(f"{name}: at step {i} of {n}, prev disabled={prev_off}, next disabled={next_off}")
