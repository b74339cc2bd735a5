"""The fallback when namespaces are unavailable: a process sandbox, NOT a security boundary.

Lays the candidate's files into a fresh temp directory (named with the owner's pid, so a
later start removes what a killed owner left), writes the pristine protected tests over
them, starts `python -I -B -m pytest` in a new session with RLIMIT_AS, RLIMIT_FSIZE and
RLIMIT_NPROC (which the kernel does not apply to root) and a wall-clock deadline after
which the process group is killed; its own ini via `-c`, no plugin autoload, no cache, an
allow-listed environment (`allowed_env`: nothing of the caller's, so no keys or tokens);
junit XML outside the workspace, read only if it is small; hashes the protected files
again; deletes everything. Known secrets are redacted from what the run reports (messages,
stderr), as a last line: see below.

What this is not: isolation. Code under test runs as the same user, sees the same files,
the network and other processes, and can outlive the run with `setsid`. Being the same
user, it can read the environment of the researcher's processes in /proc/<pid>/environ
(labkit's own and its parents', which hold any key they were started with): the
allow-list keeps keys out of the candidate's own environment, not out of its reach. Every
verdict from here says NOT ISOLATED and why isolation was unavailable.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from labkit.core.errors import SandboxError
from labkit.core.redact import redact_all
from labkit.core.types import Outcome, TestResult, digest
from labkit.grading.sandbox_facts import SEVERITY, Limits, SandboxRun

_TAIL = 2000  # characters of stderr kept as evidence
_MESSAGE = 500  # characters of a failure message kept per test
_REPORT_CAP = 4 * 1024 * 1024  # a junit report larger than this is not read
_TAGS: dict[str, Outcome] = {"error": "error", "failure": "failed", "skipped": "skipped"}
_PREFIXES = ("labkit-ws-", "labkit-run-", "labkit-probe-")
_swept = False


def not_isolated(why: str) -> str:
    return (
        f"NOT ISOLATED: process sandbox ({why}); same user and filesystem, network on, "
        "no process or total-memory cap, no independent cross-check"
    )


def allowed_env(home: Path, tmp: Path, **extra: str) -> dict[str, str]:
    """A fallback child's whole environment: an allow-list, nothing of the caller's (no keys)."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8", **extra}


def sweep() -> None:
    """Remove workspaces left by owners that died (SIGKILL leaves no chance to clean up)."""
    global _swept
    if _swept:
        return
    _swept = True
    for entry in Path(tempfile.gettempdir()).iterdir():
        if not entry.name.startswith(_PREFIXES) or not entry.is_dir():
            continue
        owner = entry.name.split("-")[2]
        if owner.isdigit() and _pid_alive(int(owner)):
            continue
        if not owner.isdigit() and time.time() - entry.stat().st_mtime < 3600:
            continue  # an old-style name: only once it is clearly abandoned
        shutil.rmtree(entry, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run(
    files: Mapping[str, str | bytes],
    protected: Mapping[str, str | bytes],
    limits: Limits,
    python: str,
    roots: list[str],
    why: str,
) -> SandboxRun:
    """Lay out `files`, overwrite with `protected`, run pytest on the protected files, report facts."""
    sweep()
    workspace = Path(tempfile.mkdtemp(prefix=f"labkit-ws-{os.getpid()}-"))
    outside = Path(tempfile.mkdtemp(prefix=f"labkit-run-{os.getpid()}-"))
    try:
        for rel, text in files.items():
            _write(workspace, rel, text)
        for rel, text in protected.items():
            _write(workspace, rel, text)
        return _run(workspace, outside, protected, limits, python, roots, why)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


def _run(
    workspace: Path,
    outside: Path,
    protected: Mapping[str, str | bytes],
    limits: Limits,
    python: str,
    roots: list[str],
    why: str,
) -> SandboxRun:
    report = outside / "report.xml"
    ini = outside / "pytest.ini"
    # pythonpath is relative to the ini's directory; relative also survives spaces in TMPDIR.
    rel_ws = os.path.relpath(workspace, outside)
    paths = " ".join(os.path.join(rel_ws, r) if r else rel_ws for r in roots)
    ini.write_text(f"[pytest]\npythonpath = {paths}\njunit_family = xunit1\n", encoding="utf-8")
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
    env = allowed_env(outside / "home", outside / "tmp", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
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
            preexec_fn=rlimits(limits),
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
    if report_found and report.stat().st_size > _REPORT_CAP:
        report_found = False
        notes.append(f"[labkit] junit report over {_REPORT_CAP} bytes: not read")
    if report_found:
        try:
            results = _read_report(report, protected)
        except ET.ParseError as e:
            report_found = False
            notes.append(f"[labkit] junit report unreadable: {e}")
    after = {rel: _hash_file(workspace / rel) for rel in protected}
    tail = _tail(errfile) + ("\n" if notes else "") + "\n".join(notes)
    # The candidate could read a key through /proc (above); what it reports leaves redacted.
    *messages, tail = redact_all([*(r.message for r in results), tail])
    results = tuple(
        r if r.message == m else TestResult(r.nodeid, r.outcome, m, r.seconds)
        for r, m in zip(results, messages, strict=True)
    )
    return SandboxRun(
        results=results,
        exit_code=None if timed_out or code < 0 else code,
        wall_seconds=wall,
        timed_out=timed_out,
        report_found=report_found,
        stderr_tail=tail[-_TAIL:],
        protected_after=after,
        isolation=not_isolated(why),
    )


def _write(root: Path, rel: str, text: str | bytes) -> None:
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
    target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


def _start(cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(cmd, **kw)
    except OSError as e:
        raise SandboxError(f"cannot start the test interpreter {cmd[0]!r}: {e}") from e


def rlimits(limits: Limits) -> Callable[[], None]:
    """The fallback's per-process limits (memory, file size, processes, no core dumps)."""
    memory, files = limits.memory_mb * 1024 * 1024, limits.file_mb * 1024 * 1024

    def apply() -> None:  # runs in the child between fork and exec: keep it to syscalls
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (files, files))  # stderr file included
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

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


def _read_report(path: Path, protected: Mapping[str, str | bytes]) -> tuple[TestResult, ...]:
    """One TestResult per node id; if pytest wrote a test twice (call + teardown), the worst wins."""
    merged: dict[str, TestResult] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if not case.get("name"):  # pytest leaves an empty <testcase/> when a run is interrupted
            continue
        nodeid = _nodeid(case.get("classname", ""), case.get("name", ""), case.get("file"), protected)
        outcome: Outcome = "passed"
        message = ""
        for child in case:
            kind = _TAGS.get(child.tag)
            if kind and SEVERITY[kind] > SEVERITY[outcome]:
                outcome = kind
                message = (child.get("message") or child.text or "")[:_MESSAGE]
                if not case.get("classname"):  # a collection error: its text says why
                    message = (child.text or message)[-2000:]
        try:
            seconds = float(case.get("time") or 0.0)
        except ValueError:
            seconds = 0.0
        prev = merged.get(nodeid)
        if prev is None or SEVERITY[outcome] > SEVERITY[prev.outcome]:
            merged[nodeid] = TestResult(nodeid, outcome, message, seconds)
    return tuple(merged.values())


def _nodeid(classname: str, name: str, file: str | None, protected: Mapping[str, str | bytes]) -> str:
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
