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
from pathlib import PurePosixPath
from typing import Any

from labkit.core.errors import SandboxError
from labkit.grading import isolation, procsandbox
from labkit.grading.reply import from_reply
from labkit.grading.sandbox_facts import (
    CORRUPT,
    SEVERITY,
    Limits,
    SandboxRun,
    describe,
    unsafe_path,
)

__all__ = [
    "CORRUPT",
    "SEVERITY",
    "Limits",
    "SandboxRun",
    "describe",
    "run_pytest",
    "unsafe_path",
]


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
            results=(),
            exit_code=None,
            wall_seconds=limits.wall_seconds + isolation.GRACE_SECONDS,
            timed_out=True,
            report_found=False,
            isolation=describe(isolation.cgroup_kind(python), limits),
            stderr_tail=f"[labkit] the runner did not answer within the wall limit of "
            f"{limits.wall_seconds:g}s (+{isolation.GRACE_SECONDS:g}s): killed from outside",
        )
    except isolation.IsolationUnavailable as e:
        raise SandboxError(f"the isolated runner failed: {e}") from e
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
        },
        "env": {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "USER": "sandbox",
            "LOGNAME": "sandbox",
        },
        "modes": ["pytest", "check"] if required else ["pytest"],
    }
