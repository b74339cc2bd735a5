"""Fault injection: SIGKILL a real run at random points, resume it, compare with a run never killed.

The run is the cache-isolation case through three rounds (roll back, roll back by size, keep)
with real pytest validations, recorded in a SQLite ledger file. After each kill the run is
resumed with resume=True until it finishes. What must hold: every event acknowledged before
the kill is still there, unchanged; the decisions per round, the final candidate and the
stop match the uninterrupted run; exactly one final stop is recorded.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from labkit.record.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import sys
from labkit.grading.cases import load_case
from labkit.grading.validator import Validator
from labkit.loop.engine import Proposal, run_loop
from labkit.loop.engine.reflection import check_record
from labkit.record.ledger import Ledger

CASE = load_case("cache_isolation")
ISO = list(CASE.suite.groups["isolation"])
HITS = list(CASE.suite.groups["same-user hit"])
STEPS = ["disable_cache", "five_changes", "composite_key"]


class Plan:
    name, simulated = "plan", True

    def propose(self, situation):
        p = CASE.patch(STEPS[situation.round - 1])
        record = {"phenomenon": "B gets A's price", "evidence_ref": ISO[0], "environment": CASE.environment,
                  "hypothesis": {"cause": p.description, "refuted_if": "B still gets A's price"},
                  "action": p.description, "expected": {"acceptance": ISO, "protective": HITS}}
        return Proposal(record=check_record(record), patch=p)


run_loop(CASE.start, CASE.suite, Validator(), Plan(), ledger=Ledger(sys.argv[1], durable=True), run_id="f",
         patch_cap=dict(CASE.patch_cap), resume=sys.argv[2] == "resume")
"""
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _child(path: Path, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), mode],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _outcome(path: Path) -> tuple[list[tuple[int, str]], str, list[str]]:
    events = Ledger(path, read_only=True).events("f")
    decided = {e.round: e.detail["decision"] for e in events if e.kind == "decide"}  # last per round
    stops = [e.detail["rule"] for e in events if e.kind == "stop" and e.detail.get("run")]
    final = [e for e in events if e.kind == "decide"][-1].output_hash
    return sorted(decided.items()), final, stops


def _wait_for_events(path: Path, proc: subprocess.Popen[bytes], n: int) -> None:
    """Until the run at `path` has recorded at least `n` events, or has ended."""
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if len(Ledger(path, read_only=True).events("f")) >= n:
                return
        except Exception:  # not created yet, or its schema not yet written
            pass
        time.sleep(0.01)


def test_killed_runs_resume_to_the_same_outcome(tmp_path: Path) -> None:
    ref = tmp_path / "reference.sqlite"
    proc = _child(ref, "fresh")
    assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    n_events = len(Ledger(ref, read_only=True).events("f"))
    want_decisions, want_final, want_stops = _outcome(ref)
    assert [d for _, d in want_decisions] == ["roll back", "roll back", "keep"] and want_stops == ["resolved"]

    rng = random.Random(10)
    killed_mid_run = 0
    for k in range(3):
        path = tmp_path / f"killed-{k}.sqlite"
        proc = _child(path, "fresh")
        # kill once the run has recorded a random share of the reference run's events: a point
        # inside the run on a loaded machine too (a time-based kill missed the run under load)
        _wait_for_events(path, proc, rng.randint(1, n_events - 2))
        if proc.poll() is None:
            killed_mid_run += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        before = Ledger(path, read_only=True).events("f") if path.exists() else []
        again = _child(path, "resume")
        assert again.wait(timeout=300) == 0, again.stderr.read().decode()[-2000:] if again.stderr else ""
        after = Ledger(path, read_only=True).events("f")
        assert after[: len(before)] == before  # no acknowledged event lost or changed
        decisions, final, stops = _outcome(path)
        assert decisions == want_decisions and final == want_final, k
        assert stops[-1] == "resolved" and stops.count("resolved") == 1, stops
    assert killed_mid_run >= 2  # the kills really landed inside runs
