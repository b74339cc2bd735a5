"""Discriminating experiments: when the cause is unclear, observe before you patch.

A reflector may ask for a probe (a short Python script run against the candidate, e.g.
"print the cache keys users A and B generate for the same product"). Its output is an
observation: new external evidence that narrows many possible causes to one hypothesis.
The probe runs in a throwaway copy of the candidate, in a subprocess with a time limit;
it cannot change the candidate or the protected tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from labkit.core.types import Candidate, digest


@dataclass(frozen=True)
class Experiment:
    question: str  # what the observation will discriminate between
    probe: str  # Python source run with the candidate's files on sys.path


@dataclass(frozen=True)
class Observation:
    experiment: Experiment
    candidate: str  # candidate digest
    output: str  # stdout + stderr tail, as observed
    exit_code: int | None
    timed_out: bool
    wall_seconds: float

    @property
    def digest(self) -> str:
        return digest(f"{self.candidate}\n{self.experiment.probe}\n{self.output}")


def observe(
    candidate: Candidate,
    experiment: Experiment,
    timeout: float = 10.0,
    python: str = sys.executable,
) -> Observation:
    """Run the experiment's probe against a copy of the candidate and return what it printed."""
    with tempfile.TemporaryDirectory(prefix="labkit-probe-") as tmp:
        root = Path(tmp)
        for rel, text in candidate.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / "_labkit_probe.py").write_text(experiment.probe)
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        t0 = time.monotonic()
        # Own process group, so a hung probe and anything it spawned die together.
        proc = subprocess.Popen(
            [python, "_labkit_probe.py"],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            out, code, timed_out = stdout + stderr[-2000:], proc.returncode, False
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, _ = proc.communicate()
            out, code, timed_out = stdout + f"\n[probe killed after {timeout:.0f} s]", None, True
        return Observation(
            experiment, candidate.digest, out.strip(), code, timed_out, time.monotonic() - t0
        )
