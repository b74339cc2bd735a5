"""One run's own side: new namespaces, the workspace, limits, then pytest, the harness or a probe.

Standalone (stdlib + pytest + the two modules next to it), bound into bubblewrap next to the
warm runner (`zygote.py`), which forks C and calls `child` in it. C unshares new mount, PID,
network, IPC and UTS namespaces (a fresh network namespace per run: nothing a run leaves in
one — a port in TIME_WAIT, an abstract socket — reaches another run, and sibling runs cannot
hand each other file descriptors), brings up its loopback, joins the run's cgroups, mounts a
private size-capped tmpfs on /tmp and lays the workspace out at an unpredictable path there
(candidate files owned by a fresh uid; protected tests, ini and directories by root,
read-only to it), then forks P: PID 1 of the new PID namespace, so when P ends every process
of the run ends with it. P mounts its own /proc, sets rlimits, keeps only fds 0-3, drops to
the fresh uid (no capabilities left), sets no_new_privs and an allow-listed environment, and
only then runs pytest or the harness in-process, warm. C waits for P, then hashes the
protected files as they are after the run and reports them on the control pipe.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import resource
import secrets
import signal
import socket
import struct
import sys
from typing import Any

import pytest

try:  # inside the sandbox: bound next to this file (labkit itself is not there)
    import _labkit_cgroups as cgroups
    import _labkit_harness as harness
    import _labkit_kernel as kernel
    import _labkit_watch as watch
except ImportError:  # imported as labkit.grading.confine (tools, tests): the same modules
    from labkit.grading import cgroups, harness, kernel, watch

NEWNS, NEWUTS, NEWIPC, NEWPID, NEWNET = 0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 0x4000, 1 << 18
MNT_DETACH, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 2, 1, 38
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
STARTED = 72  # P's exit status when the run itself raised (set-up went through)
_libc = ctypes.CDLL(None, use_errno=True)


def _ok(result: int, what: str) -> None:
    if result != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = [s.encode() if s is not None else None for s in (src, target, fstype, data)]
    _ok(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _loopback_up() -> None:
    """A fresh network namespace has only `lo`, and it is down: bring it up (tests bind 127.0.0.1)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH22x", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def _mounts_under(top: str) -> list[str]:
    """Mount points strictly below `top` (outermost first), from this namespace's mountinfo."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    below = sorted({p for p in points if p.startswith(top + "/")}, key=len)
    return [p for p in below if not any(p.startswith(q + "/") for q in below if q != p)]


def child(job: dict[str, Any], mode: str, uid: int, rep: int, err: int, ctl: int, groups: list[str]) -> None:
    """C: new namespaces, workspace, cgroups; fork P (PID 1 there) and wait for it."""
    for path in groups:  # join before anything is allocated, so all of it is counted
        cgroups.write(f"{path}/cgroup.procs", os.getpid())
    _ok(_libc.unshare(NEWNS | NEWPID | NEWIPC | NEWUTS | NEWNET), "unshare")
    _loopback_up()
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


def _inner(job: dict[str, Any], mode: str, uid: int, ws: str, rep: int, err: int, grouped: bool) -> None:
    """P: PID 1 of the run. Lock down, then run pytest, the harness or the probe, warm."""
    _ok(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    lim = job["limits"]
    mb = 1024 * 1024
    # With a pids cgroup, it is the bound that binds (and says so); the rlimit is a backstop.
    nproc = lim["processes"] + 8 if grouped else lim["processes"]
    for res, value in (
        (resource.RLIMIT_AS, lim["memory_mb"] * mb),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, nproc),
        (resource.RLIMIT_FSIZE, lim["file_mb"] * mb),
    ):
        resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead
    null = os.open("/dev/null", os.O_RDWR)
    high_rep, high_err = os.dup(rep), os.dup(err)
    os.dup2(null, 0)
    os.dup2(high_rep if mode == "probe" else null, 1)
    os.dup2(high_err, 2)
    os.dup2(high_rep, 3)
    os.closerange(4, 65536)
    kernel.drop_capabilities(_libc)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # a fresh uid: every capability is gone from here on
    _ok(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    unfiltered = kernel.deny()  # no user namespaces, io_uring, ptrace, mount, keyrings, bpf, ...
    if unfiltered:
        os.write(2, f"[labkit] no seccomp filter: {unfiltered}\n".encode())
    os.chdir(ws)
    os.environ.clear()
    os.environ.update(job["env"])
    os.environ.update({"HOME": "/tmp/home", "TMPDIR": "/tmp", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    sys.dont_write_bytecode = True
    sys.path[:] = [p for p in sys.path if not p.startswith("/run/labkit")]
    roots = [os.path.join(ws, r) if r else ws for r in job["roots"]]
    sys.path[:0] = roots
    if mode != "probe":  # last, so nothing of the runner's own set-up trips it
        watch.install(3, ws, frozenset(job["protected"]))
    try:
        _run(job, mode, ws, roots)
    except BaseException as e:  # noqa: BLE001 - the run itself raised (set-up went through)
        _last_words(2, f"the {mode} run raised", e)
        os._exit(STARTED)


def _run(job: dict[str, Any], mode: str, ws: str, roots: list[str]) -> None:
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
