"""The researcher's side of the isolated runner: start it in bubblewrap, hand it jobs.

One warm runner (`zygote.py`) per interpreter, started on first use inside
`bwrap --unshare-pid --unshare-net --unshare-ipc --unshare-uts --die-with-parent`, with
only /usr, the interpreter's installation and the two runner files bound read-only
(labkit, the researcher's files and home are not there at all), a fresh /dev, /proc and
/tmp, and an environment of a few fixed variables. It dies with this process. Jobs are
serialised (one at a time per runner); each job's runs go in parallel inside it.

`status(python)` says whether isolation works here and, if not, why; callers fall back
to the process sandbox and say "not isolated" on every verdict. Set LABKIT_SANDBOX=process
to choose the fallback on purpose.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from labkit.core.errors import IsolationUnavailable, RunnerTimeout

_HERE = Path(__file__).resolve().parent
GRACE_SECONDS = 15.0  # past a job's wall limit, how long labkit waits before killing the runner

_REPLY_CAP = 64 * 1024 * 1024  # the runner caps each run's report at 4 MiB; this is a backstop
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


class _Runner:
    def __init__(self, python: str) -> None:
        self.python = python
        self.proc = _spawn(
            _command(python),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if not os.environ.get("LABKIT_SANDBOX_DEBUG") else None,
            env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"},
            start_new_session=True,  # its own group: killed as a whole if it ever hangs
        )
        try:
            hello = self._read(time.monotonic() + 30)
        except IsolationUnavailable:
            self.close()
            raise
        self.cgroup: str = hello.get("cgroup", "")

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        head = self._exact(fd, 4, deadline)
        size = struct.unpack(">I", head)[0]
        if size > _REPLY_CAP:
            raise IsolationUnavailable(f"the isolated runner sent {size} bytes (cap {_REPLY_CAP})")
        reply: dict[str, Any] = json.loads(self._exact(fd, size, deadline))
        return reply

    def _exact(self, fd: int, n: int, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RunnerTimeout("the isolated runner did not answer in time")
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                code = self.proc.poll()
                raise IsolationUnavailable(f"the isolated runner ended (exit code {code})")
            buf += chunk
        return bytes(buf)

    def call(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        data = json.dumps(job).encode("utf-8")
        self.proc.stdin.write(struct.pack(">I", len(data)) + data)
        self.proc.stdin.flush()
        return self._read(time.monotonic() + timeout)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


# bwrap --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
# runner ends, not the process. A runner first used from a worker thread (a marimo cell, a
# thread pool) was SIGKILLed as soon as that thread finished, under the next caller's feet.
# So every runner is forked from one daemon thread that lives exactly as long as the process.
_spawn_jobs: queue.SimpleQueue[tuple[Callable[[], subprocess.Popen[bytes]], Future[Any]]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None


def _spawner_loop() -> None:
    while True:
        make, done = _spawn_jobs.get()
        try:
            done.set_result(make())
        except BaseException as e:  # noqa: BLE001 - handed to the caller, who raises it
            done.set_exception(e)


def _spawn(cmd: list[str], **options: Any) -> subprocess.Popen[bytes]:
    global _spawner
    with _spawn_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawner_loop, name="labkit-runner-spawner", daemon=True)
            _spawner.start()
    done: Future[subprocess.Popen[bytes]] = Future()
    _spawn_jobs.put((lambda: subprocess.Popen(cmd, **options), done))
    return done.result()


_spawn_lock = threading.Lock()


_runners: dict[str, _Runner] = {}
_failed: dict[str, str] = {}
_lock = threading.Lock()


def _command(python: str) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise IsolationUnavailable("bubblewrap is not installed (apt-get install bubblewrap, or .ci/install-system.sh)")
    cmd = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-add", "ALL",
           "--ro-bind", "/usr", "/usr", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]  # fmt: skip
    for top in ("bin", "lib", "lib32", "lib64", "sbin"):
        p = Path("/") / top
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            cmd += ["--ro-bind", str(p), str(p)]
    made: set[str] = set()
    for path in _install_paths(python):
        for parent in reversed(Path(path).parents[:-1]):  # bwrap would make them 0700
            if str(parent) not in made:
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
        cmd += ["--ro-bind", os.path.realpath(path), path]
    if _cgroup_writable():
        cmd += ["--bind", "/sys/fs/cgroup", "/sys/fs/cgroup"]
    cmd += [
        "--ro-bind",
        str(_HERE / "zygote.py"),
        "/run/labkit/_labkit_zygote.py",
        "--ro-bind",
        str(_HERE / "harness.py"),
        "/run/labkit/_labkit_harness.py",
        "--ro-bind",
        str(_HERE / "cgroups.py"),
        "/run/labkit/_labkit_cgroups.py",
        "--ro-bind",
        str(_HERE / "confine.py"),
        "/run/labkit/_labkit_confine.py",
        "--ro-bind",
        str(_HERE / "kernel.py"),
        "/run/labkit/_labkit_kernel.py",
        "--ro-bind",
        str(_HERE / "watch.py"),
        "/run/labkit/_labkit_watch.py",
        "--chdir",
        "/",
        python,
        "-I",
        "-B",
        "/run/labkit/_labkit_zygote.py",
    ]
    return cmd


def _install_paths(python: str) -> list[str]:
    """The interpreter's installation (venv and base), to be bound read-only at the same paths."""
    code = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix]))"
    try:
        out = subprocess.run(
            [python, "-I", "-c", code],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env={"PATH": SANDBOX_PATH},
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise IsolationUnavailable(f"cannot start the test interpreter {python!r}: {e}") from e
    paths = {p for p in json.loads(out) if not p.startswith("/usr")}
    real = {os.path.dirname(os.path.dirname(os.path.realpath(python)))}  # the binary's own prefix
    return sorted(p for p in paths | real if not p.startswith("/usr") and os.path.isdir(p))


def _cgroup_writable() -> bool:
    base = Path("/sys/fs/cgroup")
    return any(os.access(p, os.W_OK) for p in (base / "memory", base / "pids", base))


def mode() -> str:
    """'isolated' or 'process': the sandbox this process will use (cheap; part of a validator's id)."""
    if os.environ.get("LABKIT_SANDBOX") == "process" or shutil.which("bwrap") is None:
        return "process"
    return "isolated"


def status(python: str = sys.executable) -> str | None:
    """None if isolated runs work for `python` here; else why not, in one sentence."""
    if os.environ.get("LABKIT_SANDBOX") == "process":
        return "LABKIT_SANDBOX=process chose the process sandbox"
    with _lock:
        if python in _failed:
            return _failed[python]
        try:
            _get(python)
        except IsolationUnavailable as e:
            _failed[python] = str(e)
            return str(e)
    return None


def _get(python: str) -> _Runner:
    runner = _runners.get(python)
    if runner is None or runner.proc.poll() is not None:
        runner = _runners[python] = _Runner(python)
    return runner


def cgroup_kind(python: str = sys.executable) -> str:
    with _lock:
        return _get(python).cgroup


def call(job: dict[str, Any], python: str, timeout: float) -> dict[str, Any]:
    """Run one job in the warm runner (started or restarted as needed). Serialised."""
    with _lock:
        runner = _get(python)
        try:
            reply = runner.call(job, timeout)
        except (IsolationUnavailable, OSError):
            runner.close()  # a runner that failed once is not trusted again
            _runners.pop(python, None)
            raise
    if "error" in reply:
        raise IsolationUnavailable(f"the isolated runner failed: {reply['error']}")
    return reply


def shutdown() -> None:
    """Stop every warm runner (tests use it to start from scratch)."""
    with _lock:
        for runner in _runners.values():
            runner.close()
        _runners.clear()
        _failed.clear()
