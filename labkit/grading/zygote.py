"""The warm runner: lives inside bubblewrap and forks one fresh, isolated child per run.

Standalone on purpose (stdlib + pytest + the harness next to it; labkit is not visible
in here). Started once per interpreter by `labkit.grading.isolation`, it imports pytest,
then serves jobs read from fd 0 and answers on fd 1 (4-byte length + JSON each way).

Per run (a pytest run, the independent cross-check, or a probe), a fork C of this warm
process unshares new mount, PID, IPC and UTS namespaces (the network namespace is
bubblewrap's: empty), joins the run's cgroups, mounts a private size-capped tmpfs on
/tmp and lays the workspace out in an unpredictable directory there (candidate files
owned by a fresh uid; protected tests, ini and directories owned by root, read-only to
it), then forks P: PID 1 of the new PID namespace, so when P ends every process of the
run ends with it, `setsid` or not. P mounts its own /proc (the parent's processes do
not exist there), sets rlimits, keeps only fds 0-3 (/dev/null, /dev/null, stderr pipe,
report pipe), drops to the fresh uid (no capabilities left), sets no_new_privs and an
allow-listed environment, and only then runs pytest or the harness in-process, warm.
The supervisor here reads the pipes with hard caps and kills P at the wall limit.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import resource
import secrets
import select
import signal
import struct
import sys
import time
from typing import Any

import _pytest.config
import pytest  # warm: every run forks with pytest and its plugins already imported

if __name__ == "__main__":  # run by bubblewrap as a script (-I leaves its folder off sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # inside the sandbox: bound next to this file (labkit itself is not there)
    import _labkit_cgroups as cgroups
    import _labkit_harness as harness
except ImportError:  # imported as labkit.grading.zygote (tools, tests): the same two modules
    from labkit.grading import cgroups, harness

NEWNS, NEWUTS, NEWIPC, NEWPID = 0x00020000, 0x04000000, 0x08000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 0x4000, 1 << 18
MNT_DETACH, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 2, 1, 38
REPORT_CAP = 4 * 1024 * 1024  # bytes of report stream kept; more is a flood: the run is killed
ERR_TAIL = 8192  # bytes of stderr kept (the rest is read and dropped)
_libc = ctypes.CDLL(None, use_errno=True)
_PROTO = 1  # the channel to labkit; main() moves it off fd 1 so stray prints are harmless


def _ok(result: int, what: str) -> None:
    if result != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = [s.encode() if s is not None else None for s in (src, target, fstype, data)]
    _ok(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


# -- one run --------------------------------------------------------------------------------


class Run:
    def __init__(self, job: dict[str, Any], mode: str, kind: str) -> None:
        self.mode = mode
        self.uid = 3_000_000 + secrets.randbelow(1_000_000)  # fresh per run: its own NPROC count
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
                _child(job, mode, self.uid, rep_w, err_w, ctl_w, self.cgroups)
            except BaseException as e:  # noqa: BLE001 - say why on the stderr pipe, then die
                _last_words(err_w, "sandbox set-up failed", e)
            finally:
                os._exit(70)  # a child never returns into the serving loop
        for fd in (rep_w, err_w, ctl_w):
            os.close(fd)
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

    def read(self, fd: int) -> None:
        data = os.read(fd, 65536)
        kind = self.open[fd]
        if not data:
            os.close(fd)
            del self.open[fd]
        elif kind == "ctl":
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

    def kill(self) -> None:
        if self.inner is None and "ctl" in [self.open.get(f) for f in self.open]:
            ctl = next(f for f, k in self.open.items() if k == "ctl")
            if select.select([ctl], [], [], 1.0)[0]:
                self.read(ctl)
        for pid in (self.inner, self.pid):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def reap(self) -> None:
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
        return {"mode": self.mode, "protected_after": after, "cpu": self.cpu, "status": self.status, "lines": lines, "flags": self.flags,
                "stderr": self.err.decode("utf-8", "replace"), "stderr_bytes": self.err_bytes}  # fmt: skip


def _mounts_under(top: str) -> list[str]:
    """Mount points strictly below `top` (outermost first), from this namespace's mountinfo."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    below = sorted({p for p in points if p.startswith(top + "/")}, key=len)
    return [p for p in below if not any(p.startswith(q + "/") for q in below if q != p)]


def _child(job: dict[str, Any], mode: str, uid: int, rep: int, err: int, ctl: int,
           groups: list[str]) -> None:  # fmt: skip
    """C: new namespaces, workspace, cgroups; fork P (PID 1 there) and wait for it."""
    for path in groups:  # join before anything is allocated, so all of it is counted
        cgroups.write(f"{path}/cgroup.procs", os.getpid())
    _ok(_libc.unshare(NEWNS | NEWPID | NEWIPC | NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    if os.path.ismount(cgroups.ROOT):
        _ok(_libc.umount2(cgroups.ROOT.encode(), MNT_DETACH), "umount cgroup")
    lim = job["limits"]
    # The interpreter's installation may itself live under /tmp (a checkout cloned there): keep
    # those read-only binds visible through the run's private /tmp, or its subprocesses fail.
    kept = _mounts_under("/tmp")
    for i, path in enumerate(kept):
        os.makedirs(f"/run/labkit-keep/{i}", exist_ok=True)
        _mount(path, f"/run/labkit-keep/{i}", None, MS_BIND | MS_REC, None)
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={lim['tmp_mb']}m,mode=1777")
    for i, path in enumerate(kept):
        os.makedirs(path, exist_ok=True)
        _mount(f"/run/labkit-keep/{i}", path, None, MS_BIND | MS_REC, None)
    ws = f"/tmp/ws-{secrets.token_hex(8)}"
    _lay_out(ws, job, uid)
    pid = os.fork()
    if pid == 0:
        try:
            _inner(job, mode, uid, ws, rep, err, bool(groups))
        except BaseException as e:  # noqa: BLE001
            _last_words(2, "run failed to start", e)
        finally:
            os._exit(71)
    os.write(ctl, f"{pid}\n".encode())
    for fd in (rep, err):
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    after = {rel: _hash(f"{ws}/{rel}") for rel in job["protected"]}  # read back what ran
    os.write(ctl, (json.dumps(after) + "\n").encode())
    os._exit(code if code >= 0 else 128 - code)


def _last_words(fd: int, what: str, e: BaseException) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, f"[labkit] {what}: {type(e).__name__}: {e}\n".encode())


def _hash(path: str) -> str | None:
    import hashlib

    try:
        if os.path.islink(path) or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return None


def _lay_out(ws: str, job: dict[str, Any], uid: int) -> None:
    os.mkdir(ws, 0o755)
    for rel, text in job["files"].items():
        _put(ws, rel, text, owner=uid, mode=0o644)
    for rel, text in job["protected"].items():  # written over any candidate copy: the tests win
        _put(ws, rel, text, owner=0, mode=0o444)
    os.mkdir("/tmp/home", 0o700)
    os.chown("/tmp/home", uid, uid)
    with open("/tmp/labkit-pytest.ini", "w") as f:
        f.write("[pytest]\n")
    os.chmod("/tmp/labkit-pytest.ini", 0o444)


def _put(ws: str, rel: str, data: str | dict[str, str], owner: int, mode: int) -> None:
    here = ws
    parts = rel.split("/")
    for part in parts[:-1]:
        here = f"{here}/{part}"
        if os.path.islink(here) or os.path.isfile(here):
            os.unlink(here)
        if not os.path.isdir(here):
            os.mkdir(here, 0o755)
    target = f"{here}/{parts[-1]}"
    if os.path.isdir(target) and not os.path.islink(target):
        import shutil

        shutil.rmtree(target)
    elif os.path.lexists(target):
        os.unlink(target)
    raw = bytes.fromhex(data["hex"]) if isinstance(data, dict) else data.encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, raw)
        os.fchmod(fd, mode)
        os.fchown(fd, owner, owner)
    finally:
        os.close(fd)


def _inner(job: dict[str, Any], mode: str, uid: int, ws: str, rep: int, err: int,
           grouped: bool) -> None:  # fmt: skip
    """P: PID 1 of the run. Lock down, then run pytest, the harness or the probe, warm."""
    _ok(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    lim = job["limits"]
    mb = 1024 * 1024
    # With a pids cgroup, it is the bound that binds (and says so); the rlimit is a backstop.
    nproc = lim["processes"] + 8 if grouped else lim["processes"]
    for res, value in ((resource.RLIMIT_AS, lim["memory_mb"] * mb), (resource.RLIMIT_CORE, 0),
                       (resource.RLIMIT_NPROC, nproc),
                       (resource.RLIMIT_FSIZE, lim["file_mb"] * mb)):  # fmt: skip
        resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead
    null = os.open("/dev/null", os.O_RDWR)
    high_rep, high_err = os.dup(rep), os.dup(err)
    os.dup2(null, 0)
    os.dup2(high_rep if mode == "probe" else null, 1)
    os.dup2(high_err, 2)
    os.dup2(high_rep, 3)
    os.closerange(4, 65536)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # a fresh uid: every capability is gone from here on
    _ok(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.chdir(ws)
    os.environ.clear()
    os.environ.update(job["env"])
    os.environ.update(
        {"HOME": "/tmp/home", "TMPDIR": "/tmp", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    sys.dont_write_bytecode = True
    sys.path[:] = [p for p in sys.path if not p.startswith("/run/labkit")]
    roots = [os.path.join(ws, r) if r else ws for r in job["roots"]]
    sys.path[:0] = roots
    if mode == "pytest":
        args = ["-c", "/tmp/labkit-pytest.ini", "--rootdir", ws, "-p", "no:cacheprovider",
                "-p", "no:junitxml", "--continue-on-collection-errors", "-q", "--color=no",
                "--basetemp", f"/tmp/basetemp-{secrets.token_hex(4)}"]  # fmt: skip
        if job["noconftest"]:
            args.append("--noconftest")
        sys.argv = ["pytest"]
        code = pytest.main([*args, "--", *job["tests"]], plugins=[harness.ReportPlugin(3)])
        os._exit(int(code))
    if mode == "check":
        sys.argv = ["harness"]
        harness.run_required(3, job["required"], job["protected"], roots)
        os._exit(0)
    os.close(3)
    _probe(job["script"])


def _probe(script: str) -> None:
    import runpy
    import traceback

    sys.argv = [script]
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - the probe's own error is its observation
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# -- serving ------------------------------------------------------------------------------


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


def run_job(job: dict[str, Any], kind: str) -> dict[str, Any]:
    runs = [Run(job, m, kind) for m in job["modes"]]
    deadline = time.monotonic() + job["limits"]["wall_seconds"]
    timed_out = False
    live = list(runs)
    while live:
        waits = {fd: r for r in live for fd in r.open} | {r.pidfd: r for r in live}
        left = deadline - time.monotonic()
        if left <= 0 and not timed_out:
            timed_out = True
            for r in live:
                r.kill()
        try:
            ready = select.select(
                list(waits), [], [], max(0.0, min(left, 1.0)) if not timed_out else 0.05
            )[0]
        except InterruptedError:
            continue
        for fd in ready:
            r = waits[fd]
            if fd == r.pidfd:
                while r.open:  # drain what the run wrote before it ended
                    fd2 = next(iter(r.open))
                    r.read(fd2)
                r.reap()
                live.remove(r)
            elif fd in r.open:
                r.read(fd)
    return {"runs": [r.result() for r in runs], "timed_out": timed_out,
            "wall": time.monotonic() - deadline + job["limits"]["wall_seconds"]}  # fmt: skip


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
    while True:
        try:
            size = struct.unpack(">I", _read_exact(0, 4))[0]
            job = json.loads(_read_exact(0, size))
        except EOFError:
            return
        try:
            send(run_job(job, kind))
        except OSError as e:
            if e.errno == errno.EPIPE:
                return
            import traceback

            send({"error": f"{type(e).__name__}: {e}", "where": traceback.format_exc()[-1500:]})


if __name__ == "__main__":
    main()
