"""One writer per run id (issue 27 item 7): a lease in the ledger, taken over after its owner died.

Two real processes run the cache-isolation case on one ledger file and one run id: the second
is refused while the first lives, and the budget is never overspent; a run whose owner was
killed (SIGKILL) mid-run is resumed by another process, which takes the lease over.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from labkit.core.errors import LedgerError, RunIdInUse, RunLeaseHeld
from labkit.grading.cases import load_case
from labkit.loop.engine import Proposal, Situation, Trace, run_loop
from labkit.loop.engine.reflection import check_record
from labkit.record.budget import Budget, limits
from labkit.record.lease import Owner, _started, acquire
from labkit.record.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
CASE = load_case("cache_isolation")


@dataclass
class Waits:
    """Round 1 tries a patch that does not fix it; before round 2 it says so with a file and
    waits for `gate`, so a test decides when the owner is mid-run (and can kill it there)."""

    gate: Path
    name: str = "waits"
    simulated: bool = True

    def propose(self, s: Situation) -> Proposal:
        if s.round > 1:
            self.gate.with_suffix(".waiting").touch()  # round 1 is decided and recorded
            while not self.gate.exists():
                time.sleep(0.05)
        patch = CASE.patch("disable_cache" if s.round == 1 else "composite_key")
        iso = list(CASE.suite.groups["isolation"])
        rec = {"phenomenon": "B gets A's price", "evidence_ref": iso[0], "environment": CASE.environment,
               "action": patch.description, "hypothesis": {"cause": patch.description, "refuted_if": "B still gets it"},
               "expected": {"acceptance": iso, "protective": list(CASE.suite.groups["same-user hit"])}}  # fmt: skip
        return Proposal(record=check_record(rec), patch=patch)


def shared_run(path: Path, gate: Path, *, resume: bool) -> Trace:
    """The run under test: run id "shared", a budget of 7 cost units, three rounds at most."""
    from labkit.grading.validator import Validator

    ledger = Ledger(path)
    budget = Budget(limits(cost_units=7), ledger=ledger, run_id="shared")
    return run_loop(
        CASE.start,
        CASE.suite,
        Validator(),
        Waits(gate),
        max_rounds=3,
        ledger=ledger,
        budget=budget,
        run_id="shared",
        resume=resume,
    )


SCRIPT = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from labkit.core.errors import RunIdInUse, RunLeaseHeld
from test_run_lease import shared_run
try:
    trace = shared_run(Path(sys.argv[1]), Path(sys.argv[3]), resume=sys.argv[2] == "resume")
except (RunIdInUse, RunLeaseHeld) as exc:
    print(type(exc).__name__, exc)
    sys.exit(3)
print("stop", trace.stop.rule)
"""


def _start(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    script = tmp_path / "owner.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "l.sqlite"), mode, str(tmp_path / "go")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def _wait_for_round_1(path: Path, proc: subprocess.Popen[str]) -> None:
    """Until the owner has decided round 1 and waits in round 2 (it says so with a file)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if (path.parent / "go.waiting").exists():
            return
        time.sleep(0.1)
    raise AssertionError("the owner never decided round 1")


def _run_stops(book: Ledger) -> list:
    return [e for e in book.events("shared") if e.kind == "stop" and e.detail.get("run")]


def _here(tmp_path: Path, *, resume: bool) -> Trace:
    """The same run from this test's process (not the owner's)."""
    (tmp_path / "open").touch()  # its own gate, open: the owner's stays as the test set it
    return shared_run(tmp_path / "l.sqlite", tmp_path / "open", resume=resume)


def test_a_second_process_on_a_live_run_id_is_refused_and_the_budget_holds(tmp_path) -> None:
    owner = _start(tmp_path, "new")
    try:
        _wait_for_round_1(tmp_path / "l.sqlite", owner)
        for resume in (False, True):  # with or without resume: the owner is alive
            with pytest.raises(RunLeaseHeld, match=f"process {owner.pid} on host"):
                _here(tmp_path, resume=resume)
        (tmp_path / "go").touch()
        out, err = owner.communicate(timeout=120)
    finally:
        owner.kill()
    assert owner.returncode == 0 and out.strip() == "stop resolved", err
    with Ledger(tmp_path / "l.sqlite", read_only=True) as book:
        assert len(_run_stops(book)) == 1
        assert [e.round for e in book.events("shared") if e.kind == "decide"] == [1, 2]
        spent = book.usage("shared", role="budget").cost_units
    assert 0 < spent <= 7  # one writer: the budget of 7 was never overspent


def test_a_killed_owners_run_is_resumed_and_its_lease_taken_over(tmp_path) -> None:
    owner = _start(tmp_path, "new")
    _wait_for_round_1(tmp_path / "l.sqlite", owner)
    os.kill(owner.pid, signal.SIGKILL)  # dies holding the lease, mid-round 2
    owner.communicate(timeout=60)
    with pytest.raises(RunIdInUse, match="'shared' was run before"):  # a new run on the id: refused
        _here(tmp_path, resume=False)
    trace = _here(tmp_path, resume=True)
    assert trace.stop.rule == "resolved" and [r.index for r in trace.rounds] == [2]
    with Ledger(tmp_path / "l.sqlite", read_only=True) as book:
        assert len(_run_stops(book)) == 1
        assert any(e.kind == "resume" for e in book.events("shared"))
        assert book.usage("shared", role="budget").cost_units <= 7
        took = book._read("SELECT took_over FROM leases WHERE run_id = 'shared' ORDER BY rowid")
    assert [t[0] for t in took] == ["", f"{owner.pid}@{Owner.me().host}"]


def test_reusing_a_finished_run_id_is_refused_unless_resumed(tmp_path) -> None:
    case = CASE
    ledger = Ledger(tmp_path / "l.sqlite")
    from labkit.experiments.cache_isolation import reflector
    from labkit.grading.validator import Validator

    validator = Validator()
    first = run_loop(case.start, case.suite, validator, reflector("main"), ledger=ledger, run_id="tour")
    before = len(ledger.events("tour"))
    with pytest.raises(RunIdInUse, match="'tour' was run before"):
        run_loop(case.start, case.suite, validator, reflector("main"), ledger=ledger, run_id="tour")
    assert len(ledger.events("tour")) == before  # nothing merged into it
    again = run_loop(
        case.start,
        case.suite,
        validator,
        reflector("main"),
        ledger=ledger,
        run_id="tour",
        resume=True,
    )
    assert again.stop.reason == first.stop.reason and len(ledger.events("tour")) == before


def test_a_budget_will_not_settle_a_live_runs_reservations(tmp_path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite")
    other = Ledger(tmp_path / "l.sqlite")
    with acquire(ledger, "r"):
        # the same lease seen from a process that is alive but not this one
        ledger._db.execute("UPDATE leases SET pid = ?, started = ?", (os.getppid(), _started(os.getppid())))
        with pytest.raises(RunLeaseHeld, match=f"process {os.getppid()}"):
            Budget(limits(cost_units=5), ledger=other, run_id="r")
        with pytest.raises(RunLeaseHeld):
            acquire(other, "r", resume=True)
    import pickle

    for exc in (RunLeaseHeld("r", "x", 1, "h"), RunIdInUse("r", "x", 3)):  # crosses process pools
        assert isinstance(exc, LedgerError) and str(pickle.loads(pickle.dumps(exc))) == str(exc)
