"""What runs inside the sandbox: pytest's report stream, and a second, independent runner.

Standalone on purpose (stdlib + pytest, no labkit import): the warm runner imports it
inside the namespaces, where labkit is not visible. Two ways to run the protected tests,
each in its own fresh child of the warm runner, each writing JSON lines to an inherited
pipe (fd 3) that only the parent side reads:

- `ReportPlugin` rides along `pytest.main` and streams every collect/test report, then an
  `end` line with pytest's exit status and any of pytest's item-running or reporting
  functions that are no longer the genuine ones (a candidate patched them at import).
- `run_required` is the cross-check: it imports each protected test module from the
  pristine text held in memory (not from the workspace) and calls each required test
  function itself, without pytest's collection, runner, hooks or reports. It supports
  plain functions, test classes and `pytest.mark.parametrize`, plus the `tmp_path` and
  `monkeypatch` fixtures; a test it cannot run that way is reported `unsupported` and is
  not cross-checked (the verdict says so).
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import os
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

try:  # inside the sandbox: bound next to this file (labkit itself is not there)
    import _labkit_watch as watch
except ImportError:  # imported as labkit.grading.harness (tools, tests)
    from labkit.grading import watch

_MESSAGE = 2000  # characters of a failure message or collection error kept per report
_TRACE = 1500  # characters of an error's traceback tail kept (the cause is at the end)


_closed: list[str] = []  # why the report channel stopped working, once it has


def emit(fd: int, **line: Any) -> None:
    """One JSON line on the report channel. If the code under test closed it, say so once on
    stderr and write nothing more: the report ends there, and the verdict says why."""
    if _closed:
        return
    data = (json.dumps(line, allow_nan=False, default=str) + "\n").encode("utf-8")
    try:
        while data:
            data = data[os.write(fd, data) :]
    except (OSError, ValueError) as e:
        _closed.append(f"{type(e).__name__}: {e}")
        note = f"[labkit] report channel closed by the code under test ({_closed[0]}): the report ends here\n"
        with contextlib.suppress(OSError):
            os.write(2, note.encode())


def _genuine() -> dict[str, object]:
    """pytest's item-running and reporting functions, as imported before candidate code."""
    import _pytest.main
    import _pytest.python
    import _pytest.reports
    import _pytest.runner

    found = {
        f"runner.{n}": getattr(_pytest.runner, n, None)
        for n in (
            "runtestprotocol",
            "call_and_report",
            "call_runtest_hook",
            "check_interactive_exception",
            "pytest_runtest_makereport",
            "pytest_runtest_protocol",
            "show_test_item",
        )
    }
    found["python.Function.runtest"] = _pytest.python.Function.runtest
    found["python.pytest_pyfunc_call"] = _pytest.python.pytest_pyfunc_call
    found["reports.TestReport.from_item_and_call"] = _pytest.reports.TestReport.__dict__["from_item_and_call"]
    found["reports.TestReport.__init__"] = _pytest.reports.TestReport.__init__
    found["main.pytest_runtestloop"] = _pytest.main.pytest_runtestloop
    return {k: v for k, v in found.items() if v is not None}


class ReportPlugin:
    """Streams pytest's reports over `fd`. Registered by the runner, before any test imports."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.genuine = _genuine()
        self.plugins: set[int] = set()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: Any) -> None:  # before collection imports candidate code
        self.config = session.config
        self.plugins = {id(p) for p in self.config.pluginmanager.get_plugins()}

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed or report.skipped:
            outcome = "error" if report.failed else "skipped"
            emit(self.fd, k="collect", id=report.nodeid, outcome=outcome, msg=str(report.longrepr)[-_MESSAGE:])

    def pytest_runtest_logreport(self, report: Any) -> None:
        outcome = report.outcome
        if outcome == "failed" and report.when != "call":
            outcome = "error"
        msg = ""
        if report.longrepr is not None:
            crash = getattr(report.longrepr, "reprcrash", None)
            msg = crash.message if crash is not None else str(report.longrepr)
            if outcome == "error":  # setup/teardown: the traceback's tail says where it broke
                msg = f"{msg}\n{str(report.longrepr)[-_TRACE:]}"
        elif hasattr(report, "wasxfail"):
            msg = f"xfail: {report.wasxfail}"
        emit(
            self.fd,
            k="test",
            id=report.nodeid,
            when=report.when,
            outcome=outcome,
            msg=msg[-_MESSAGE:] if outcome == "error" else msg[:_MESSAGE],
            s=float(report.duration),
        )

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        now = _genuine()
        swapped = sorted(k for k, f in self.genuine.items() if now[k] is not f)
        added = [
            type(p).__name__
            for p in self.config.pluginmanager.get_plugins()
            if id(p) not in self.plugins and not isinstance(p, types.ModuleType)
        ]
        added += [  # plugin modules registered after start-up (conftests are registered at collection)
            p.__name__
            for p in self.config.pluginmanager.get_plugins()
            if id(p) not in self.plugins and isinstance(p, types.ModuleType) and not p.__name__.endswith("conftest")
        ]
        watch.import_hooks()
        emit(self.fd, k="end", exit=int(exitstatus), swapped=swapped, added=added)


# -- the independent runner --------------------------------------------------------------


def run_required(fd: int, required: list[str], tests: dict[str, str], roots: list[str]) -> None:
    """Run each required test from the pristine text, without pytest's machinery; one line each."""
    import pytest

    skip_exc, xfail_exc, exit_exc = (
        pytest.skip.Exception,
        pytest.xfail.Exception,
        pytest.exit.Exception,
    )
    modules: dict[str, types.ModuleType | BaseException] = {}
    for nodeid in required:
        path, _, rest = nodeid.partition("::")
        if path not in modules:
            modules[path] = _load(path, tests[path], roots) if path in tests else KeyError(path)
        mod = modules[path]
        if isinstance(mod, BaseException):
            emit(fd, k="check", id=nodeid, outcome="error", msg=_describe(mod))
            continue
        try:
            cases = list(_cases(mod, rest))
        except NotImplementedError as e:  # the harness cannot run this test without pytest
            emit(fd, k="check", id=nodeid, outcome="unsupported", msg=str(e))
            continue
        worst, msg = "passed", ""
        for call in cases:
            try:
                call()
                outcome, m = "passed", ""
            except (skip_exc, xfail_exc) as e:
                outcome, m = "skipped", _describe(e)
            except exit_exc as e:
                outcome, m = "error", _describe(e)
            except BaseException as e:  # noqa: BLE001 - any other exception fails the test
                outcome, m = "failed", _describe(e)
            if _RANK[outcome] > _RANK[worst]:
                worst, msg = outcome, m
        emit(fd, k="check", id=nodeid, outcome=worst, msg=msg)
    watch.import_hooks()
    emit(fd, k="checked", n=len(required))


_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_FIXTURES = {"tmp_path", "monkeypatch"}


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:_MESSAGE]


def _load(path: str, text: str, roots: list[str]) -> types.ModuleType | BaseException:
    """Import a protected test module from its pristine text, the way pytest's prepend mode does."""
    full = os.path.abspath(path)
    folder = os.path.dirname(full)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder = os.path.dirname(folder)
    name = os.path.relpath(full, folder)[:-3].replace(os.sep, ".")
    for entry in [folder, *(os.path.abspath(r) for r in roots)]:
        if entry not in sys.path:
            sys.path.insert(0, entry)
    mod = types.ModuleType(name)
    mod.__file__ = full
    mod.__dict__["__labkit_eq__"] = watch.eq  # every == and != in it goes through the check
    sys.modules[name] = mod
    try:
        code = watch.compile_watched(text, full, path)
        exec(code, mod.__dict__)  # noqa: S102 - the pristine protected test
    except BaseException as e:  # noqa: BLE001 - a collection error, as pytest would report it
        return e
    return mod


def _marks(obj: object) -> list[Any]:
    marks = getattr(obj, "pytestmark", [])
    return list(marks) if isinstance(marks, list | tuple) else [marks]


def _cases(mod: types.ModuleType, rest: str) -> Iterator[Callable[[], object]]:
    """Zero-argument callables, one per parametrisation of the test `rest` names in `mod`."""
    names, _, param = rest.partition("[")
    parts = names.split("::")
    owner: Any = mod
    cls = None
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if not isinstance(owner, type):
            raise NotImplementedError(f"{part} is not a test class")
        cls = owner
    func = getattr(owner, parts[-1], None)
    if not callable(func) or inspect.iscoroutinefunction(func):
        raise NotImplementedError(f"{parts[-1]} is not a plain test function")
    marks = _marks(mod) + (_marks(cls) if cls else []) + _marks(func)
    other = {m.name for m in marks} - {"parametrize", "slow"}
    if other:
        raise NotImplementedError(f"marks {sorted(other)} need pytest to interpret")
    grids = [_grid(m) for m in marks if m.name == "parametrize"]
    if param:
        if len(grids) != 1:
            raise NotImplementedError(f"cannot match [{param} to one parametrisation")
        grids = [[_select(grids[0], marks, param[:-1])]]
    signature = inspect.signature(func)
    wanted = [p for p in signature.parameters if p != "self"]
    for combo in itertools.product(*grids):
        kwargs: dict[str, Any] = {}
        for row, _ in combo:
            kwargs.update(row)
        missing = [p for p in wanted if p not in kwargs]
        if set(missing) - _FIXTURES:
            raise NotImplementedError(f"fixtures {sorted(set(missing) - _FIXTURES)} need pytest")
        yield _bind(func, cls, kwargs, missing)


def _grid(mark: Any) -> list[tuple[dict[str, Any], Any]]:
    """(arguments, pytest ParameterSet) per row of one `parametrize` mark."""
    from _pytest.mark.structures import ParameterSet

    argnames, values = mark.args[0], list(mark.args[1])
    if isinstance(argnames, str):
        argnames = [a.strip() for a in argnames.split(",") if a.strip()]
    rows = []
    for v in values:
        ps = ParameterSet.extract_from(v, force_tuple=len(argnames) == 1)
        rows.append((dict(zip(argnames, ps.values, strict=True)), ps))
    return rows


def _select(grid: list[tuple[dict[str, Any], Any]], marks: list[Any], target: str) -> tuple[dict[str, Any], Any]:
    """The one row of `grid` that pytest names `target`, by pytest's own id rules."""
    from _pytest.python import IdMaker

    mark = next(m for m in marks if m.name == "parametrize")
    names = list(grid[0][0]) if grid else []
    ids = mark.kwargs.get("ids")
    try:
        made = IdMaker(
            names,
            [ps for _, ps in grid],
            ids if callable(ids) else None,
            None if callable(ids) else ids,
            None,
            None,
        ).make_unique_parameterset_ids()
    except Exception as e:  # noqa: BLE001 - pytest's id maker changed: say so, do not guess
        raise NotImplementedError(f"cannot name parametrisations: {e}") from None
    chosen = [row for row, i in zip(grid, made, strict=True) if str(i) == target]
    if len(chosen) != 1:
        raise NotImplementedError(f"cannot match [{target}] to one parametrisation")
    return chosen[0]


def _bind(func: Any, cls: type | None, kwargs: dict[str, Any], fixtures: list[str]) -> Callable[[], object]:
    def call() -> object:
        import pytest

        with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
            import pathlib

            given = {"tmp_path": pathlib.Path(tmp), "monkeypatch": mp}
            args = {**kwargs, **{f: given[f] for f in fixtures}}
            if cls is None:
                return func(**args)
            obj = cls()
            for hook in ("setup_method",):
                if hasattr(obj, hook):
                    getattr(obj, hook)(getattr(obj, func.__name__))
            try:
                return getattr(obj, func.__name__)(**args)
            finally:
                if hasattr(obj, "teardown_method"):
                    obj.teardown_method(getattr(obj, func.__name__))

    return call
