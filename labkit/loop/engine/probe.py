"""Discriminating experiments: when the cause is unclear, observe before you patch.

A reflector may ask for a probe (a short Python script run against the candidate, e.g.
"print the cache keys users A and B generate for the same product"). Its output is an
observation: new external evidence that narrows many possible causes to one hypothesis.
The probe runs contained exactly like a validation (`labkit.grading.script`): its own
namespaces, a throwaway copy of the candidate, a time limit, caps, and an allow-listed
environment, so it can neither change the candidate nor read the researcher's keys.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from labkit.core.types import Candidate, digest
from labkit.grading.sandbox import Limits
from labkit.grading.script import run_script


@dataclass(frozen=True)
class Experiment:
    question: str  # what the observation will discriminate between
    probe: str  # Python source run with the candidate's files on sys.path
    # What the asker expects the probe to print, one line each, written to the ledger (the
    # `reflect` event) BEFORE the probe runs; `labkit.loop.control.predictions` scores it afterwards.
    prediction: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Observation:
    experiment: Experiment
    candidate: str  # candidate digest
    output: str  # stdout + stderr tail, as observed
    exit_code: int | None
    timed_out: bool
    wall_seconds: float
    isolation: str = ""  # how the probe was contained: "isolated: ..." or "NOT ISOLATED: ..."

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
    run = run_script(candidate.files, experiment.probe, Limits(wall_seconds=timeout), python)
    out = run.stdout + run.stderr_tail
    if run.timed_out:
        out += f"\n[probe killed after {timeout:.0f} s]"
    return Observation(
        experiment=experiment,
        candidate=candidate.digest,
        output=out.strip(),
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        wall_seconds=run.wall_seconds,
        isolation=run.isolation,
    )
