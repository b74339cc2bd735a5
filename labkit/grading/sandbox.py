"""Run the protected tests on a candidate, contained by the operating system, and report facts.

How (isolated, the default where Linux namespaces work — `isolation.py`, `zygote.py`,
`confine.py`): a warm runner with pytest already imported lives in bubblewrap (only /usr,
the Python installation and the runner bound read-only; an empty environment) and dies
with the researcher's process. It never reads a job: a fresh fork of it serves each one,
so no earlier job's files, hidden tests or reports are in the memory runs fork from. That
fork starts two children in parallel, each in new mount, PID, network, IPC and UTS
namespaces (PID 1 = the run: when it ends every process it started ends, `setsid` or not;
its own loopback only), its own tmpfs /tmp with the workspace at an unpredictable path, its
own cgroup, rlimits, a fresh uid and no capabilities: one runs pytest, streaming every
report over an inherited pipe; the other, `harness.run_required`, runs each required test
labkit can cross-check (`crosscheck.py`, from the pristine text) without pytest's runner
or reports. The parent side only reads the pipes, non-blocking, with caps, under one wall
limit for both; `reply.py` reads what they wrote as facts.

The candidate may write its own files and /tmp; the workspace's folders, the protected
tests and the ini are root's and read-only to it (an honest candidate writes in /tmp).

The threat model (contained / detected / not detected, each with its test) is in the
README. A candidate's own fault — a hang, a crash, an output flood, a closed or corrupted
report channel — is its failure with the true reason, never an alarm or an exception here.
Without namespaces (no bubblewrap, or LABKIT_SANDBOX=process) the older process sandbox
runs instead (`procsandbox.py`), and every verdict says NOT ISOLATED.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from labkit.core.errors import SandboxError
from labkit.core.types import Outcome, TestResult

# Which outcome wins when pytest reports a test more than once (a failed call, then a teardown error).
CORRUPT = "the report stream holds a line no runner wrote"  # how a SandboxRun says so
SEVERITY: dict[Outcome, int] = {"passed": 0, "skipped": 1, "missing": 2, "failed": 3, "error": 4}


@dataclass(frozen=True)
class Limits:
    """What one validation run may use. Part of the validator's identity."""

    wall_seconds: float = 60.0
    memory_mb: int = 1024  # all processes of a run together (cgroup), and each one (RLIMIT_AS)
    processes: int = 64  # processes and threads a run may have at once
    file_mb: int = 64  # largest file a run may write; its /tmp holds twice this

    def __post_init__(self) -> None:
        if not self.wall_seconds > 0:
            raise SandboxError(f"wall_seconds must be positive, got {self.wall_seconds}")
        if self.memory_mb < 64:
            raise SandboxError(
                f"memory_mb must be at least 64 (pytest itself needs it), got {self.memory_mb}"
            )
        if self.processes < 2:
            raise SandboxError(f"processes must be at least 2, got {self.processes}")
        if self.file_mb < 1:
            raise SandboxError(f"file_mb must be at least 1, got {self.file_mb}")


@dataclass(frozen=True)
class SandboxRun:
    """What happened in one sandboxed pytest run, as facts. Judging them is the validator's job."""

    results: tuple[TestResult, ...]  # from pytest's report (stream or junit); empty if none
    exit_code: int | None  # None if killed (wall limit or a signal)
    wall_seconds: float
    timed_out: bool
    report_found: bool  # pytest's report was complete (it reached the end of the session)
    stderr_tail: str
    # path -> digest of the protected file after the run, None if it was deleted
    protected_after: Mapping[str, str | None] = field(default_factory=dict)
    isolation: str = (
        ""  # how the run was contained, in words: "isolated: ..." or "NOT ISOLATED: ..."
    )
    checks: Mapping[str, TestResult] = field(default_factory=dict)  # the independent runner's
    integrity: tuple[str, ...] = ()  # tampering the runner itself saw
    report_problem: str = ""  # why pytest's report is incomplete, where it is
    cross_checked: bool = False  # an independent runner ran the required tests too
    unchecked: tuple[str, ...] = ()  # required tests the independent runner cannot run
    check_status: str = ""  # why the independent runner's outcomes are incomplete, if they are

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected_after", MappingProxyType(dict(self.protected_after)))
        object.__setattr__(self, "checks", MappingProxyType(dict(self.checks)))

    @property
    def isolated(self) -> bool:
        return self.isolation.startswith("isolated")


def unsafe_path(rel: str) -> str | None:
    """Why `rel` may not be written into a workspace, or None if it is a plain relative path."""
    p = PurePosixPath(rel)
    if not rel or rel in (".", "/") or p.is_absolute():
        return f"path {rel!r} is empty or absolute"
    if ".." in p.parts or str(p) != rel or "\\" in rel or "\x00" in rel:
        return f"path {rel!r} is not a normalised relative path inside the workspace"
    return None


def run_pytest(
    files: Mapping[str, str | bytes],
    protected: Mapping[str, str | bytes],
    limits: Limits,
    python: str = sys.executable,
    *,
    required: Iterable[str] = (),
    import_roots: Iterable[str] = ("",),
) -> SandboxRun:
    """Lay out `files`, overwrite with `protected`, run pytest on the protected files, report facts.

    `required` tests are also run by the independent runner; `import_roots` are workspace
    folders put on sys.path ("" is the workspace itself; e.g. "src" for a src layout).
    Any file type goes in (bytes as they are, text as UTF-8).
    """
    from labkit.grading import isolation, procsandbox

    if not any(p.endswith(".py") for p in protected):
        raise SandboxError("no protected test files (*.py) to run")
    roots = list(dict.fromkeys(import_roots))
    for rel in [*files, *protected, *(r for r in roots if r)]:
        reason = unsafe_path(rel)
        if reason:
            raise SandboxError(reason)
    why_not = isolation.status(python)
    if why_not is not None:
        return procsandbox.run(files, protected, limits, python, roots, why_not)
    job = _job(files, protected, limits, list(required), roots)
    try:
        reply = isolation.call(job, python, limits.wall_seconds + isolation.GRACE_SECONDS)
    except isolation.RunnerTimeout:  # one wall limit for the whole validation, from outside too
        return SandboxRun(
            results=(), exit_code=None, wall_seconds=limits.wall_seconds + isolation.GRACE_SECONDS,
            timed_out=True, report_found=False, isolation=describe(isolation.cgroup_kind(python), limits),
            stderr_tail=f"[labkit] the runner did not answer within the wall limit of "
            f"{limits.wall_seconds:g}s (+{isolation.GRACE_SECONDS:g}s): killed from outside",
        )  # fmt: skip
    except isolation.IsolationUnavailable as e:
        raise SandboxError(f"the isolated runner failed: {e}") from e
    from labkit.grading.reply import from_reply

    return from_reply(reply, protected, limits, isolation.cgroup_kind(python))


def _job(
    files: Mapping[str, str | bytes],
    protected: Mapping[str, str | bytes],
    limits: Limits,
    required: list[str],
    roots: list[str],
) -> dict[str, Any]:
    def wire(data: str | bytes) -> str | dict[str, str]:
        return {"hex": data.hex()} if isinstance(data, bytes) else data

    size_mb = sum(len(v) for v in [*files.values(), *protected.values()]) // (1024 * 1024)
    return {
        "files": {k: wire(v) for k, v in files.items()},
        "protected": {k: wire(v) for k, v in protected.items()},
        "tests": sorted(p for p in protected if p.endswith(".py")),
        "required": required,
        "roots": roots,
        "noconftest": not any(PurePosixPath(p).name == "conftest.py" for p in protected),
        "limits": {
            "wall_seconds": limits.wall_seconds,
            "memory_mb": limits.memory_mb,
            "processes": limits.processes,
            "file_mb": limits.file_mb,
            "tmp_mb": 2 * limits.file_mb + 2 * size_mb + 16,
        },  # fmt: skip
        "env": {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "USER": "sandbox",
            "LOGNAME": "sandbox",
        },  # fmt: skip
        "modes": ["pytest", "check"] if required else ["pytest"],
    }


def describe(cgroup: str, limits: Limits) -> str:
    """The isolation an isolated run had, in words (shown on every verdict)."""
    if cgroup:
        memory = f"{limits.memory_mb} MB for all its processes together (cgroup {cgroup} memory)"
        procs = f"{limits.processes} processes (cgroup {cgroup} pids + RLIMIT_NPROC)"
    else:
        memory = (f"{limits.memory_mb} MB per process (RLIMIT_AS; no writable cgroup, so all "
                  f"processes together may use up to {limits.processes} x that)")  # fmt: skip
        procs = f"{limits.processes} processes (RLIMIT_NPROC for a fresh uid)"
    return (f"isolated: bubblewrap + namespaces (pid, mount, net, ipc, uts), fresh uid, private "
            f"/tmp; caps: {procs}, {memory}, {limits.file_mb} MB per file")  # fmt: skip
