"""Run a short Python script against a candidate's files, contained like a validation.

Used for discriminating-experiment probes. Isolated (the warm runner's "probe" mode: own
namespaces, fresh uid, private /tmp, caps, an allow-listed environment — no keys) where
namespaces work; otherwise a subprocess started as the process sandbox starts pytest (its
allow-listed environment and rlimits: memory, file size, processes), in its own session,
killed with its group at the timeout, what it printed redacted of known secrets, and
labelled NOT ISOLATED.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from labkit.core.redact import redact_all
from labkit.grading import isolation
from labkit.grading.procsandbox import allowed_env, not_isolated, rlimits, sweep
from labkit.grading.sandbox import Limits, SandboxError, describe, unsafe_path

SCRIPT = "_labkit_probe.py"
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "USER": "sandbox"}
_ERR_TAIL = 2000


@dataclass(frozen=True, kw_only=True)
class ScriptRun:
    stdout: str
    stderr_tail: str
    exit_code: int | None  # None if killed
    timed_out: bool
    wall_seconds: float
    isolation: str


def run_script(
    files: Mapping[str, str | bytes], script: str, limits: Limits, python: str = sys.executable
) -> ScriptRun:
    """Lay out `files` plus the script, run it with the files importable, say what it printed."""
    for rel in files:
        reason = unsafe_path(rel)
        if reason:
            raise SandboxError(reason)
    why_not = isolation.status(python)
    start = time.monotonic()
    if why_not is not None:
        return _subprocess(files, script, limits, python, why_not)
    job = {
        "files": {k: ({"hex": v.hex()} if isinstance(v, bytes) else v) for k, v in files.items()}
        | {SCRIPT: script},
        "protected": {}, "tests": [], "required": [], "roots": [""], "noconftest": True,
        "limits": {"wall_seconds": limits.wall_seconds, "memory_mb": limits.memory_mb,
                   "processes": limits.processes, "file_mb": limits.file_mb,
                   "tmp_mb": 2 * limits.file_mb + 16},
        "env": _ENV, "modes": ["probe"], "script": SCRIPT,
    }  # fmt: skip
    try:
        reply = isolation.call(job, python, limits.wall_seconds + isolation.GRACE_SECONDS)
    except isolation.IsolationUnavailable as e:
        raise SandboxError(f"the isolated runner failed: {e}") from e
    run = reply["runs"][0]
    status = run["status"]
    killed = reply["timed_out"] or status is None or status >= 128
    return ScriptRun(
        stdout="\n".join(run["lines"]),
        stderr_tail=run["stderr"][-_ERR_TAIL:],
        exit_code=None if killed else status,
        timed_out=bool(reply["timed_out"]),
        wall_seconds=time.monotonic() - start,
        isolation=describe(isolation.cgroup_kind(python), limits),
    )


def _subprocess(files: Mapping[str, str | bytes], script: str, limits: Limits, python: str, why: str) -> ScriptRun:
    sweep()
    with tempfile.TemporaryDirectory(prefix=f"labkit-probe-{os.getpid()}-") as tmp:
        root = Path(tmp)
        for rel, text in {**files, SCRIPT: script}.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        (root / ".tmp").mkdir()
        env = allowed_env(root, root / ".tmp", PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
        t0 = time.monotonic()
        # Output to files, not pipes: a child that escapes the group cannot hold the read open.
        with open(root / ".out", "w+b") as out_f, open(root / ".err", "w+b") as err_f:
            proc = subprocess.Popen(
                [python, SCRIPT],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out_f,
                stderr=err_f,
                start_new_session=True,
                preexec_fn=rlimits(limits),
            )
            try:
                code, timed_out = proc.wait(timeout=limits.wall_seconds), False
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code, timed_out = None, True
            out, err = redact_all([_head(out_f, 1024 * 1024), _head(err_f, 1024 * 1024)[-_ERR_TAIL:]])
        return ScriptRun(
            stdout=out,
            stderr_tail=err[-_ERR_TAIL:],
            exit_code=code if code is None or code >= 0 else None,
            timed_out=timed_out,
            wall_seconds=time.monotonic() - t0,
            isolation=not_isolated(why),
        )


def _head(f: BinaryIO, cap: int) -> str:
    f.seek(0)
    return f.read(cap).decode("utf-8", "replace")
