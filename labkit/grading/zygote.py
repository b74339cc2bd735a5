"""The warm runner: lives inside bubblewrap, never touches a job, forks one server per job.

Standalone on purpose (stdlib + pytest + the modules next to it; labkit is not visible in
here). Started once per interpreter by `labkit.grading.isolation`, it imports pytest and
then only forks: each job is read, run and answered by a fresh fork J of this pristine
process (fd 0 in, fd 1 out, 4-byte length + JSON each way), which exits when it has
answered. So no job's files, tests, hidden suites or reports ever sit in the memory that
later runs are forked from: the warm runner has never seen one.

J forks one child C per run (a pytest run, the independent cross-check, or a probe), in
parallel; what C does to confine itself is `confine.py`. J only reads the runs' pipes,
non-blocking and with hard caps, and enforces one wall limit over all of a job's runs:
at the limit it kills each run's PID 1 (so every process of the run), gives C a moment
to report the protected files as the run left them, then kills C too.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import struct
import sys
import time
from typing import Any

import _pytest.config
import pytest  # noqa: F401 - warm: every run forks with pytest and its plugins already imported

if __name__ == "__main__":  # run by bubblewrap as a script (-I leaves its folder off sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # inside the sandbox: bound next to this file (labkit itself is not there)
    import _labkit_cgroups as cgroups
    import _labkit_confine as confine
except ImportError:  # imported as labkit.grading.zygote (tools, tests): the same modules
    from labkit.grading import cgroups, confine

REPORT_CAP = 4 * 1024 * 1024  # bytes of report stream kept; more is a flood: the run is killed
ERR_TAIL = 8192  # bytes of stderr kept (the rest is read and dropped)
GRACE = 2.0  # seconds C has, after its run was killed, to report the protected files
JOB_EOF = 3  # J's exit status when labkit closed the channel: the warm runner ends too
_PROTO = 1  # the channel to labkit; main() moves it off fd 1 so stray prints are harmless


# -- one run --------------------------------------------------------------------------------


class Run:
    def __init__(self, job: dict[str, Any], mode: str, kind: str) -> None:
        self.mode = mode
        self.uid = 3_000_000 + int.from_bytes(os.urandom(4)) % 1_000_000  # fresh: its own NPROC count
        lim = job["limits"]
        self.cgroups = cgroups.make_cgroups(kind, lim["memory_mb"], lim["processes"])
        rep_r, rep_w = os.pipe()
        err_r, err_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                for fd in (rep_r, err_r, ctl_r):
                    os.close(fd)
                confine.child(job, mode, self.uid, rep_w, err_w, ctl_w, self.cgroups)
            except BaseException as e:  # noqa: BLE001 - say why on the stderr pipe, then die
                confine._last_words(err_w, "sandbox set-up failed", e)
            finally:
                os._exit(70)  # a child never returns into the serving loop
        for fd in (rep_w, err_w, ctl_w):
            os.close(fd)
        for fd in (rep_r, err_r, ctl_r):  # never block on a pipe: a writer may be held elsewhere
            os.set_blocking(fd, False)
        self.pidfd = os.pidfd_open(self.pid)
        self.open = {rep_r: "report", err_r: "stderr", ctl_r: "ctl"}
        self.report = bytearray()
        self.err = bytearray()
        self.err_bytes = 0
        self.inner: int | None = None
        self.ctl = bytearray()
        self.flags: list[str] = []
        self.status: int | None = None
        self.cpu = 0.0
        self.kill_by: float | None = None  # when C itself is killed if it has not reported

    def read(self, fd: int) -> bool:
        """Read what `fd` holds now; False once nothing more is there (EOF or would block)."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return False
        kind = self.open[fd]
        if not data:
            os.close(fd)
            del self.open[fd]
            return False
        if kind == "ctl":
            self.ctl += data
            if self.inner is None and b"\n" in self.ctl:
                self.inner = int(self.ctl.split(b"\n")[0])
        elif kind == "stderr":
            self.err_bytes += len(data)
            self.err = (self.err + data)[-ERR_TAIL:]
        elif len(self.report) + len(data) > REPORT_CAP:
            if "report flood" not in self.flags:
                self.flags.append("report flood")
            self.kill()
        else:
            self.report += data
        return True

    def kill(self) -> None:
        """Kill the run (its PID 1, so all of it); C reports the protected files, or dies at GRACE."""
        ctl = next((f for f, k in self.open.items() if k == "ctl"), None)
        if self.inner is None and ctl is not None and select.select([ctl], [], [], 1.0)[0]:
            self.read(ctl)
        if self.inner is None:
            self.kill_now()
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.inner, signal.SIGKILL)
        if self.kill_by is None:
            self.kill_by = time.monotonic() + GRACE

    def kill_now(self) -> None:
        for pid in (self.inner, self.pid):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def reap(self) -> None:
        for fd in list(self.open):  # drain what the run wrote before it ended, never waiting
            while fd in self.open and self.read(fd):
                pass
        _, status, usage = os.wait4(self.pid, 0)
        self.cpu = usage.ru_utime + usage.ru_stime  # the run's CPU seconds (C and P)
        os.close(self.pidfd)
        self.status = os.waitstatus_to_exitcode(status)
        for fd in list(self.open):
            os.close(fd)
        self.open.clear()
        hits = cgroups.cgroup_events(self.cgroups)
        cgroups.remove_cgroups(self.cgroups)
        self.flags += [f"{h} cap reached" for h in hits]

    def result(self) -> dict[str, Any]:
        lines = self.report.decode("utf-8", "replace").splitlines()
        ctl = self.ctl.decode().splitlines()
        after = json.loads(ctl[1]) if len(ctl) > 1 else None
        return {
            "mode": self.mode,
            "protected_after": after,
            "cpu": self.cpu,
            "status": self.status,
            "lines": lines,
            "flags": self.flags,
            "stderr": self.err.decode("utf-8", "replace"),
            "stderr_bytes": self.err_bytes,
        }


# -- one job --------------------------------------------------------------------------------


def run_job(job: dict[str, Any], kind: str) -> dict[str, Any]:
    """Every run of `job` in parallel, under one wall limit for all of them together."""
    start = time.monotonic()
    runs = [Run(job, m, kind) for m in job["modes"]]
    deadline = start + job["limits"]["wall_seconds"]
    timed_out = False
    live = list(runs)
    while live:
        now = time.monotonic()
        if now >= deadline and not timed_out:
            timed_out = True
            for r in live:
                r.kill()
        for r in live:
            if r.kill_by is not None and now >= r.kill_by:
                r.kill_now()
        waits = {fd: r for r in live for fd in r.open} | {r.pidfd: r for r in live}
        wake = min([deadline if not timed_out else now + 0.25] + [r.kill_by for r in live if r.kill_by])
        try:
            ready = select.select(list(waits), [], [], max(0.0, min(wake - now, 1.0)))[0]
        except InterruptedError:
            continue
        for fd in ready:
            r = waits[fd]
            if fd == r.pidfd:
                r.reap()
                live.remove(r)
            elif fd in r.open:
                r.read(fd)
    return {"runs": [r.result() for r in runs], "timed_out": timed_out, "wall": time.monotonic() - start}


def _read_exact(fd: int, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def send(obj: object) -> None:
    data = json.dumps(obj).encode("utf-8")
    data = struct.pack(">I", len(data)) + data
    while data:
        data = data[os.write(_PROTO, data) :]


def serve_one(kind: str) -> int:
    """J: read one job, run it, answer; the exit status for the warm runner."""
    try:
        size = struct.unpack(">I", _read_exact(0, 4))[0]
        job = json.loads(_read_exact(0, size))
    except EOFError:
        return JOB_EOF
    try:
        reply = run_job(job, kind)
    except Exception as e:  # noqa: BLE001 - the runner's own failure, reported as such
        import traceback

        reply = {"error": f"{type(e).__name__}: {e}", "where": traceback.format_exc()[-1500:]}
    send(reply)
    return 0


# -- the warm runner ------------------------------------------------------------------------


def warm() -> None:
    """Import every built-in pytest plugin and what a run imports lazily, once, before forking."""
    for _name in _pytest.config.default_plugins:  # import every built-in plugin once, here
        __import__(f"_pytest.{_name}")
    for _name in (
        "_pytest._argcomplete",
        "pdb",
        "faulthandler",
        "encodings.unicode_escape",
        "runpy",
    ):
        __import__(_name)  # what a pytest run imports lazily


def main() -> None:
    global _PROTO
    _PROTO = os.dup(1)
    os.dup2(2, 1)
    warm()
    cgroups.sweep_cgroups()
    kind = cgroups.cgroup_kind()
    import gc

    gc.freeze()  # the warm heap is never collected again: cheaper collections, fewer copied pages
    send({"ready": True, "cgroup": kind, "pid": os.getpid()})
    while True:  # pristine: this process never reads a job; a fresh fork serves each one
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                code = serve_one(kind)
            finally:
                os._exit(code)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code == JOB_EOF:
            return
        if code != 0:
            try:
                send({"error": f"the job's server ended with status {code} before answering"})
            except BrokenPipeError:
                return


if __name__ == "__main__":
    main()
