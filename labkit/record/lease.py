"""One writer per run id: a lease kept in the ledger file, beside the events.

A run takes its run id's lease before it records anything and gives it back when it ends.
Taking it is one transaction (BEGIN IMMEDIATE) that reads the run's events and its last
lease and writes the new lease, so two processes starting the same run id at once cannot
both get it. The lease names its owner (pid, host, and the process's start time, so a
recycled pid is not mistaken for the owner):

- a run id a run began under before (its start event or a lease), without `resume`, is
  refused (RunIdInUse): runs never merge by accident;
- a lease not given back whose owner is alive (same host, same pid and start time), or on
  another host (whose liveness cannot be checked from here), is refused (RunLeaseHeld);
- a lease whose owner died (killed mid-run) is taken over by a run that resumes.

Leases live in their own table, so the events a run records are the same with or without
them; the table is created on first use (ledgers written before it existed gain it then).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from labkit.core.errors import LedgerError, RunIdInUse, RunLeaseHeld
from labkit.record.events import Kind, Role

if TYPE_CHECKING:
    from labkit.record.ledger import Ledger

__all__ = ["Lease", "Owner", "acquire", "check_free", "earlier_run"]

_TABLE = """CREATE TABLE IF NOT EXISTS leases (
    token       TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    host        TEXT NOT NULL,
    started     TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    released_at REAL,
    took_over   TEXT NOT NULL
)"""


@dataclass(frozen=True)
class Owner:
    """A process that holds (or held) a lease."""

    pid: int
    host: str
    started: str  # the process's start time in clock ticks since boot ("" if unknown)

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), socket.gethostname(), _started(os.getpid()))

    def alive(self) -> bool | None:
        """True/False on this host; None on another host (cannot be told from here)."""
        if self.host != socket.gethostname():
            return None
        if self.started:
            return _started(self.pid) == self.started
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _started(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else ""


@dataclass
class Lease:
    """The lease of `run_id` held by this process; `release()` gives it back (idempotent)."""

    ledger: Ledger
    run_id: str
    token: str
    took_over: Owner | None = None  # the dead owner this lease was taken from
    released: bool = False

    def release(self) -> None:
        if self.released or self.ledger.read_only:
            return
        self.released = True
        what = f"releasing the lease of run {self.run_id!r}"
        # A full or closed ledger: the lease stays, and its owner's death frees it anyway.
        with suppress(LedgerError), self.ledger._transaction(what):
            self.ledger._db.execute("UPDATE leases SET released_at = ? WHERE token = ?", (time.time(), self.token))

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _last(ledger: Ledger, run_id: str, *, create: bool = True) -> Owner | None:
    """The owner of `run_id`'s last lease if it was never given back (under the ledger's lock)."""
    db = ledger._db
    if create:
        db.execute(_TABLE)
    row = db.execute(
        "SELECT pid, host, started, released_at FROM leases WHERE run_id = ?"
        " ORDER BY acquired_at DESC, rowid DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    if row is None or row[3] is not None:
        return None
    return Owner(int(row[0]), str(row[1]), str(row[2]))


def _earlier(ledger: Ledger, run_id: str) -> int:
    """How many events `run_id` has if a run under it began before (its start event, or a lease
    taken), else 0. Events an experiment records under the id before running it do not count."""
    db = ledger._db
    began = db.execute(
        "SELECT EXISTS (SELECT 1 FROM events WHERE run_id = ? AND role = ? AND kind = ?)",
        (run_id, str(Role.EXPERIMENT), str(Kind.START)),
    ).fetchone()[0]
    leased = (
        db.execute("SELECT 1 FROM sqlite_master WHERE name = 'leases'").fetchone()
        and db.execute("SELECT 1 FROM leases WHERE run_id = ?", (run_id,)).fetchone()
    )
    if not (began or leased):
        return 0
    return int(db.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0])


def earlier_run(ledger: Ledger, run_id: str) -> int:
    """The events of an earlier run under `run_id` in `ledger` (0: the id is free to start)."""
    with ledger._lock:
        return _earlier(ledger, run_id)


def check_free(ledger: Ledger, run_id: str) -> None:
    """Raise RunLeaseHeld if another live process holds `run_id`'s lease (reads only)."""
    with ledger._lock:
        db = ledger._db
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'leases'").fetchone():
            return
        held = _last(ledger, run_id, create=False)
    if held is not None and held.pid != os.getpid():
        _refuse(ledger, run_id, held)


def _refuse(ledger: Ledger, run_id: str, held: Owner) -> None:
    alive = held.alive()
    if alive is not False:
        why = "" if alive else " (another host: its liveness cannot be checked from here)"
        raise RunLeaseHeld(run_id, ledger.path, held.pid, held.host, why)


def acquire(ledger: Ledger, run_id: str, *, resume: bool = False) -> Lease:
    """Take `run_id`'s lease for this process, or raise RunIdInUse / RunLeaseHeld (see above)."""
    me = Owner.me()
    token = uuid.uuid4().hex
    with ledger._transaction(f"taking the lease of run {run_id!r}"):
        db = ledger._db
        held = _last(ledger, run_id)
        if held is not None:
            _refuse(ledger, run_id, held)
        events = _earlier(ledger, run_id)
        if events and not resume:
            raise RunIdInUse(run_id, ledger.path, events)
        took = f"{held.pid}@{held.host}" if held is not None else ""
        db.execute(
            "INSERT INTO leases (token, run_id, pid, host, started, acquired_at, released_at, took_over)"
            " VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
            (token, run_id, me.pid, me.host, me.started, time.time(), took),
        )
    return Lease(ledger, run_id, token, held)
