"""What a sandboxed run may use (`Limits`) and what happened in it (`SandboxRun`), as facts.

Shared by both runners (`sandbox.py`, the isolated one; `procsandbox.py`, the fallback) and by
`reply.py`, which reads a runner's reply into a `SandboxRun`. Judging the facts is the validator's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType

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
            raise SandboxError(f"memory_mb must be at least 64 (pytest itself needs it), got {self.memory_mb}")
        if self.processes < 2:
            raise SandboxError(f"processes must be at least 2, got {self.processes}")
        if self.file_mb < 1:
            raise SandboxError(f"file_mb must be at least 1, got {self.file_mb}")


@dataclass(frozen=True, kw_only=True)
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
    isolation: str = ""  # how the run was contained, in words: "isolated: ..." or "NOT ISOLATED: ..."
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


def describe(cgroup: str, limits: Limits) -> str:
    """The isolation an isolated run had, in words (shown on every verdict)."""
    if cgroup:
        memory = f"{limits.memory_mb} MB for all its processes together (cgroup {cgroup} memory)"
        procs = f"{limits.processes} processes (cgroup {cgroup} pids + RLIMIT_NPROC)"
    else:
        memory = (
            f"{limits.memory_mb} MB per process (RLIMIT_AS; no writable cgroup, so all "
            f"processes together may use up to {limits.processes} x that)"
        )
        procs = f"{limits.processes} processes (RLIMIT_NPROC for a fresh uid)"
    return (
        f"isolated: bubblewrap + namespaces (pid, mount, net, ipc, uts), fresh uid, private "
        f"/tmp; caps: {procs}, {memory}, {limits.file_mb} MB per file"
    )
