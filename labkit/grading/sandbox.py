"""Run the protected tests on a candidate, contained by the operating system, and report facts.

How (isolated, the default where Linux namespaces work — `isolation.py`, `zygote.py`):
a warm runner with pytest already imported lives in bubblewrap (own PID, network, IPC and
UTS namespaces; only /usr, the Python installation and the runner bound read-only; an
empty environment) and dies with the researcher's process. Each validation forks two
fresh children of it, in parallel, each in new mount + PID namespaces (PID 1 = the run:
when it ends every process it started ends, `setsid` or not), its own tmpfs /tmp with the
workspace at an unpredictable path, its own cgroup, rlimits, a fresh uid and no
capabilities: one runs pytest, streaming every report over an inherited pipe; the other,
`harness.run_required`, runs each required test from the pristine text without pytest's
runner or reports. The parent side only reads the pipes, with caps.

The candidate may write its own files and /tmp; the workspace's folders, the protected
tests and the ini are root's and read-only to it (an honest candidate writes in /tmp).

Threat model — a candidate is code written to pass, possibly by attacking the grader.
Contained (the OS enforces it): processes outliving the run or escaping its kill; other
runs' workspaces and the researcher's files (not mounted); the researcher's environment
and memory (/proc shows only the run; the environment is an allow-list); network; the
protected tests, ini, Python install and runner (root-owned or read-only); process count
(RLIMIT_NPROC for a fresh uid, and cgroup pids.max where writable); total memory of all
the run's processes (cgroup memory limit where writable, else RLIMIT_AS per process:
the verdict says which holds); file size (RLIMIT_FSIZE) and /tmp size; stderr and report
size (read with hard caps; a report flood kills the run).
Detected (integrity alarm, verdict quarantined): results forged inside pytest — patched
runner or report functions, plugins registered at run time, rewritten tests, a forged or
truncated report stream, exit codes that disagree with it — because the independent
runner's outcome for a required test disagrees, the runner saw pytest's functions
swapped, or the stream and exit status disagree; plus the validator's static checks.
Not contained or detected: a candidate that recognises BOTH runners and forges both
consistently (each runs its code in-process; the cross-check raises the bar, it is not
a proof); required tests the independent runner cannot run (fixtures other than tmp_path
and monkeypatch, marks other than parametrize: the verdict counts them as unchecked);
CPU time within the wall limit; kernel exploits. Without namespaces (no bubblewrap, or
LABKIT_SANDBOX=process) the older process sandbox runs instead (`procsandbox.py`), and
every verdict says NOT ISOLATED.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from labkit.core.errors import SandboxError
from labkit.core.types import Outcome, TestResult

_TAIL = 2000  # characters of stderr kept as evidence
_MESSAGE = 500  # characters of a failure message kept per test
_COLLECT_MESSAGE = 2000  # characters of a collection error kept
# Which outcome wins when pytest reports a test more than once (a failed call, then a teardown error).
SEVERITY: dict[Outcome, int] = {"passed": 0, "skipped": 1, "missing": 2, "failed": 3, "error": 4}
_OUTCOMES = frozenset(SEVERITY)


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
        reply = isolation.call(job, python, limits.wall_seconds + 30)
    except isolation.IsolationUnavailable as e:
        raise SandboxError(f"the isolated runner failed: {e}") from e
    return _from_reply(reply, protected, limits, isolation.cgroup_kind(python))


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


def _lines(lines: list[str], problems: list[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict) or not isinstance(item.get("k"), str):
            problems.append(f"the report stream holds a line no runner wrote: {line[:80]!r}")
            continue
        out.append(item)
    return out


def _outcome(item: dict[str, Any], problems: list[str]) -> Outcome:
    value = item.get("outcome")
    if value not in _OUTCOMES:
        problems.append(f"the report stream holds an unknown outcome {str(value)[:40]!r}")
        return "error"
    return value


def _from_reply(
    reply: dict[str, Any], protected: Mapping[str, str | bytes], limits: Limits, cgroup: str
) -> SandboxRun:
    runs = {r["mode"]: r for r in reply["runs"]}
    main = runs["pytest"]
    timed_out = bool(reply["timed_out"])
    problems: list[str] = []
    notes: list[str] = []
    merged: dict[str, TestResult] = {}
    called: set[str] = set()
    ends = []
    for item in _lines(main["lines"], problems):
        if item["k"] == "end":
            ends.append(item)
            continue
        if item["k"] not in ("test", "collect"):
            problems.append(f"the report stream holds a {str(item['k'])[:20]!r} line")
            continue
        nodeid = str(item.get("id", ""))
        outcome = _outcome(item, problems)
        cap = _COLLECT_MESSAGE if item["k"] == "collect" or outcome == "error" else _MESSAGE
        result = TestResult(
            nodeid, outcome, str(item.get("msg", ""))[:cap], float(item.get("s", 0))
        )
        if item["k"] == "test" and item.get("when") == "call":
            called.add(nodeid)
        prev = merged.get(nodeid)
        if prev is None or SEVERITY[outcome] > SEVERITY[prev.outcome]:
            merged[nodeid] = result
    # A test passed only if its call ran and passed: setup alone (then an interrupt) is not a pass.
    merged = {n: r for n, r in merged.items() if r.outcome != "passed" or n in called}
    status = main["status"]
    exit_code = None if timed_out or status is None or status >= 128 else status
    if timed_out:
        notes.append(f"[labkit] killed after the wall limit of {limits.wall_seconds:g}s")
    elif exit_code is None:
        notes.append(f"[labkit] killed by signal {status - 128 if status else '?'}")
    if len(ends) > 1:
        problems.append(f"the report stream has {len(ends)} session ends: lines were forged")
    end = ends[-1] if ends else None
    if end is not None and exit_code is not None and end.get("exit") != exit_code:
        problems.append(
            f"pytest ended with status {end.get('exit')} but the process exited {exit_code}"
        )
    if end is not None and end.get("swapped"):
        problems.append(f"pytest's own functions were replaced during the run: {end['swapped']}")
    if end is not None and end.get("added"):
        problems.append(f"pytest plugins were registered during the run: {end['added']}")
    for run in reply["runs"]:
        for flag in run["flags"]:
            if flag == "report flood":
                problems.append("the report channel was flooded (over 4 MiB): the run was killed")
            else:
                notes.append(f"[labkit] {run['mode']} run: {flag} (limit enforced)")
    checks, check_note = _checks(runs.get("check"), timed_out, problems)
    after = main.get("protected_after") or {}
    stderr = main["stderr"]
    if main["stderr_bytes"] > len(stderr.encode()):
        notes.append(
            f"[labkit] stderr: {main['stderr_bytes']} bytes written, last {len(stderr)} kept"
        )
    tail = (stderr + ("\n" if notes else "") + "\n".join(notes))[-_TAIL:]
    return SandboxRun(
        results=tuple(merged.values()),
        exit_code=exit_code,
        wall_seconds=float(reply.get("wall", 0.0)),
        timed_out=timed_out,
        report_found=end is not None,
        stderr_tail=tail,
        protected_after={rel: after.get(rel) for rel in protected},
        isolation=describe(cgroup, limits) + check_note,
        checks=checks,
        integrity=tuple(problems),
    )


def _checks(
    run: dict[str, Any] | None, timed_out: bool, problems: list[str]
) -> tuple[dict[str, TestResult], str]:
    if run is None:
        return {}, ""
    checks: dict[str, TestResult] = {}
    finished = False
    unsupported = 0
    for item in _lines(run["lines"], problems):
        if item["k"] == "checked":
            finished = True
        elif item["k"] == "check":
            if item.get("outcome") == "unsupported":
                unsupported += 1
                continue
            nodeid = str(item.get("id", ""))
            checks[nodeid] = TestResult(
                nodeid, _outcome(item, problems), str(item.get("msg", ""))[:_MESSAGE]
            )
    if not finished and not timed_out:
        problems.append(
            f"the independent runner did not finish (exit {run['status']}): "
            f"{run['stderr'][-300:].strip()}"
        )
    note = f"; {len(checks)} required tests cross-checked by an independent runner"
    if unsupported:
        note += f", {unsupported} not cross-checked (need pytest fixtures or marks)"
    return checks, note
