"""Run pytest on a candidate in a throwaway workspace, under limits, and read the junit report.

The recipe, in order: lay the candidate's files into a fresh temp directory; write the
pristine protected tests over them; start `python -I -B -m pytest` in a new session with
RLIMIT_AS for memory and a wall-clock deadline after which the whole process group is
killed; give pytest its own ini file via `-c` (so the candidate's pytest.ini, tox.ini,
setup.cfg or pyproject.toml cannot change options), no plugin autoload, no cache, no
conftest unless the suite ships one; have it write junit XML to a directory outside
the workspace; read results only from that XML, never from stdout; hash the protected
files again; delete everything.

What this is not: a security boundary. Code under test runs inside the pytest process
as the same user, so code written to attack this runner (rewrite the report, chmod its
way around) could. The defences here catch the tamperings that change the grader by
accident or by laziness — each one has a hostile-candidate test — and the validator
cross-checks what is left (exit code vs report, protected hashes, missing tests).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from labkit.core.errors import SandboxError
from labkit.core.types import Outcome, TestResult, digest

_TAIL = 2000  # characters of stderr kept as evidence
_MESSAGE = 500  # characters of a failure message kept per test
# Which outcome wins when pytest reports a test more than once (a failed call, then a teardown error).
SEVERITY: dict[Outcome, int] = {"passed": 0, "skipped": 1, "missing": 2, "failed": 3, "error": 4}
_TAGS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}



@dataclass(frozen=True)
class Limits:
    """What one validation run may use. Part of the validator's identity."""

    wall_seconds: float = 60.0
    memory_mb: int = 1024  # address space (RLIMIT_AS) of the pytest process and each child

    def __post_init__(self) -> None:
        if not self.wall_seconds > 0:
            raise SandboxError(f"wall_seconds must be positive, got {self.wall_seconds}")
        if self.memory_mb < 64:
            raise SandboxError(
                f"memory_mb must be at least 64 (pytest itself needs it), got {self.memory_mb}"
            )


@dataclass(frozen=True)
class SandboxRun:
    """What happened in one sandboxed pytest run, as facts. Judging them is the validator's job."""

    results: tuple[TestResult, ...]  # from the junit XML only; empty if no report
    exit_code: int | None  # None if killed (wall limit or a signal)
    wall_seconds: float
    timed_out: bool
    report_found: bool
    stderr_tail: str
    # path -> digest of the protected file after the run, None if it was deleted
    protected_after: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected_after", MappingProxyType(dict(self.protected_after)))


def unsafe_path(rel: str) -> str | None:
    """Why `rel` may not be written into a workspace, or None if it is a plain relative path."""
    p = PurePosixPath(rel)
    if not rel or rel in (".", "/") or p.is_absolute():
        return f"path {rel!r} is empty or absolute"
    if ".." in p.parts or str(p) != rel or "\\" in rel or "\x00" in rel:
        return f"path {rel!r} is not a normalised relative path inside the workspace"
    return None


def run_pytest(
    files: Mapping[str, str],
    protected: Mapping[str, str],
    limits: Limits,
    python: str = sys.executable,
) -> SandboxRun:
    """Lay out `files`, overwrite with `protected`, run pytest on the protected files, report facts."""
    if not any(p.endswith(".py") for p in protected):
        raise SandboxError("no protected test files (*.py) to run")
    for rel in [*files, *protected]:
        reason = unsafe_path(rel)
        if reason:
            raise SandboxError(reason)
    workspace = Path(tempfile.mkdtemp(prefix="labkit-ws-"))
    outside = Path(tempfile.mkdtemp(prefix="labkit-run-"))
    try:
        for rel, text in files.items():
            _write(workspace, rel, text)
        for rel, text in protected.items():
            _write(workspace, rel, text)
        return _run(workspace, outside, protected, limits, python)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


def _run(
    workspace: Path, outside: Path, protected: Mapping[str, str], limits: Limits, python: str
) -> SandboxRun:
    report = outside / "report.xml"
    ini = outside / "pytest.ini"
    # pythonpath is relative to the ini's directory; relative also survives spaces in TMPDIR.
    rel_ws = os.path.relpath(workspace, outside)
    ini.write_text(f"[pytest]\npythonpath = {rel_ws}\njunit_family = xunit1\n", encoding="utf-8")
    for d in ("home", "tmp"):
        (outside / d).mkdir()
    cmd = [
        python, "-I", "-B", "-m", "pytest",  # -I: no PYTHON* env, no cwd/user site on sys.path
        "-c", str(ini), "--rootdir", str(workspace),
        "-p", "no:cacheprovider", "--continue-on-collection-errors",
        f"--junitxml={report}", f"--basetemp={outside / 'basetemp'}", "-q", "--color=no",
    ]  # fmt: skip
    if not any(PurePosixPath(p).name == "conftest.py" for p in protected):
        cmd.append("--noconftest")
    cmd += ["--", *sorted(p for p in protected if p.endswith(".py"))]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(outside / "home"),
        "TMPDIR": str(outside / "tmp"),
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    errfile = outside / "stderr"
    start = time.monotonic()
    with open(errfile, "wb") as err:
        proc = _start(
            cmd,
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never read: results come from the junit XML
            stderr=err,
            start_new_session=True,  # its own process group, killed as a whole
            preexec_fn=_rlimits(limits.memory_mb),
        )
        try:
            timed_out = not _wait_exited(proc.pid, start + limits.wall_seconds)
        finally:
            _kill_group(proc.pid)  # the leader is unreaped here, so its group id cannot be reused
            code = proc.wait()
    wall = time.monotonic() - start

    notes = []
    if timed_out:
        notes.append(f"[labkit] killed after the wall limit of {limits.wall_seconds:g}s")
    elif code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        notes.append(f"[labkit] killed by signal {name}")
    results: tuple[TestResult, ...] = ()
    report_found = report.is_file()
    if report_found:
        try:
            results = _read_report(report, protected)
        except ET.ParseError as e:
            report_found = False
            notes.append(f"[labkit] junit report unreadable: {e}")
    after = {rel: _hash_file(workspace / rel) for rel in protected}
    tail = _tail(errfile) + ("\n" if notes else "") + "\n".join(notes)
    return SandboxRun(
        results=results,
        exit_code=None if timed_out or code < 0 else code,
        wall_seconds=wall,
        timed_out=timed_out,
        report_found=report_found,
        stderr_tail=tail[-_TAIL:],
        protected_after=after,
    )


def _write(root: Path, rel: str, text: str) -> None:
    parts = PurePosixPath(rel).parts
    here = root
    for part in parts[:-1]:  # a candidate file where a protected directory goes: the tests win
        here = here / part
        if here.is_symlink() or here.is_file():
            here.unlink()
    here.mkdir(parents=True, exist_ok=True)
    target = here / parts[-1]
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.is_symlink():
        target.unlink()
    target.write_bytes(text.encode("utf-8"))


def _start(cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(cmd, **kw)
    except OSError as e:
        raise SandboxError(f"cannot start the test interpreter {cmd[0]!r}: {e}") from e


def _rlimits(memory_mb: int) -> Callable[[], None]:
    limit = memory_mb * 1024 * 1024

    def apply() -> None:  # runs in the child between fork and exec: keep it to syscalls
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _wait_exited(pid: int, deadline: float) -> bool:
    """Wait until `pid` exits, without reaping it. False if the deadline passed first."""
    pause = 0.001
    while True:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None and info.si_pid == pid:
            return True
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.05)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _hash_file(path: Path) -> str | None:
    try:
        return digest(path.read_bytes()) if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _tail(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 4 * _TAIL))
        return f.read().decode("utf-8", "replace")[-_TAIL:]


def _read_report(path: Path, protected: Mapping[str, str]) -> tuple[TestResult, ...]:
    """One TestResult per node id; if pytest wrote a test twice (call + teardown), the worst wins."""
    merged: dict[str, TestResult] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if not case.get("name"):  # pytest leaves an empty <testcase/> when a run is interrupted
            continue
        nodeid = _nodeid(
            case.get("classname", ""), case.get("name", ""), case.get("file"), protected
        )
        outcome: Outcome = "passed"
        message = ""
        for child in case:
            kind = _TAGS.get(child.tag)
            if kind and SEVERITY[kind] > SEVERITY[outcome]:
                outcome = kind
                message = (child.get("message") or child.text or "")[:_MESSAGE]
        try:
            seconds = float(case.get("time") or 0.0)
        except ValueError:
            seconds = 0.0
        prev = merged.get(nodeid)
        if prev is None or SEVERITY[outcome] > SEVERITY[prev.outcome]:
            merged[nodeid] = TestResult(nodeid, outcome, message, seconds)
    return tuple(merged.values())


def _nodeid(classname: str, name: str, file: str | None, protected: Mapping[str, str]) -> str:
    """Undo junit's mangling ('tests.test_a.TestC', 'test_m') -> 'tests/test_a.py::TestC::test_m'."""
    dotted = {p[:-3].replace("/", "."): p for p in protected if p.endswith(".py")}
    if not classname:  # a collection report: name is the dotted module path
        return file or dotted.get(name, name)
    parts = classname.split(".")
    for k in range(len(parts), 0, -1):
        path = dotted.get(".".join(parts[:k]))
        if path:
            return "::".join([path, *parts[k:], name])
    return "::".join([file or classname, name])
