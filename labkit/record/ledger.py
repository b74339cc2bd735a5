"""The ledger: every action of a run as one append-only event in SQLite.

One event per action (generate, execute, verify, reflect, decide, ...): who did it
(role), in which run and round, what went in and came out (by content hash; the texts
live once in a blob table), the evidence, and what it cost. Each `record` is a single
committed transaction, so a process killed with SIGKILL between appends loses nothing
it already recorded. Files use WAL mode with a busy timeout, so several processes can
append to the same ledger at once. UPDATE and DELETE are refused by triggers inside the
database itself, not by politeness in this module. `record_many` appends several events
in one transaction (all or none). `frame()` on a file reads through SQLite's ADBC driver
straight into Arrow columns, on a second, read-only connection, and keeps what it read as
Arrow chunks beside the file (labkit.record.snapshot) so that a large ledger's next frame()
reads from SQLite only the events recorded since.

Someone else's SQLite database, or one of a newer schema, is refused before
anything is written to it. `read_only=True` opens a ledger on storage this process cannot
write (immutable), unless an un-checkpointed write-ahead log would make it stale.

Durability note: WAL with synchronous=NORMAL survives a killed process (the committed
frames are in the OS cache); a power cut may lose the last few commits. Pass
``durable=True`` for synchronous=FULL (an fsync per event) when that matters.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterable, Mapping
from contextlib import suppress
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from labkit.core.errors import LedgerError
from labkit.core.types import Usage, digest
from labkit.record import snapshot as frame_snapshot
from labkit.record.events import Event
from labkit.record.ledger_file import LedgerFile
from labkit.record.rows import (
    COLUMNS,
    INSERT,
    NO_USAGE,
    RECORD_ARGS,
    SELECT,
    arrow_frame,
    describe,
    frame_schema,
    literal_where,
    prepare_row,
)

if TYPE_CHECKING:
    import polars as pl


def new_run_id(prefix: str = "run") -> str:
    """A fresh run id that sorts by creation time: ``<prefix>-YYYYmmdd-HHMMSS-<8 hex>``."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"


class Ledger(LedgerFile):
    """An append-only event log backed by SQLite (a file in WAL mode, or ``":memory:"``).

    ``max_bytes`` caps the database size (SQLite's max_page_count): past it an append
    fails as a full disk would, with a LedgerError, and the ledger stays readable.
    ``read_only=True`` opens an existing ledger for viewing; appends raise LedgerError.
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        read_only: bool = False,
        durable: bool = False,
        max_bytes: int | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self._stored: set[str] = set()  # blob hashes known committed (only added after COMMIT)
        self._open(str(path), read_only, durable, max_bytes, busy_timeout)

    # -- writing -------------------------------------------------------------------------

    def record(
        self,
        run_id: str,
        round: int,
        role: str,
        kind: str,
        *,
        inputs: str | None = None,
        outputs: str | None = None,
        evidence: Any = None,
        usage: Usage = NO_USAGE,
        started_at: float | None = None,
        ended_at: float | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> Event:
        """Append one event in one committed transaction and return it as stored.

        `inputs`/`outputs` are stored once as content-addressed blobs and referenced by
        hash. `evidence` is any JSON-serialisable value or a dataclass, stored as JSON
        text. Everything is checked before anything is written: bad input raises
        LedgerError and records nothing. `started_at` defaults to `ended_at` minus the
        usage's wall seconds; `ended_at` to now.
        """
        row, blobs = prepare_row(
            run_id, round, role, kind, inputs, outputs, evidence, usage, started_at, ended_at, detail
        )
        if self.read_only:
            raise LedgerError(f"ledger {self.path} was opened read-only: {describe(row)} was not recorded")
        with self._lock:  # one transaction, inlined: this is the hot path of every run
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._put(blobs)
                    seq = db.execute(INSERT, row).lastrowid
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:  # SQLite may have rolled back by itself (full disk)
                        with suppress(sqlite3.Error):
                            db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(exc, describe(row)) from exc
            self._remember(blobs)
        assert seq is not None
        return _event((seq, *row))

    def record_many(self, events: Iterable[Mapping[str, Any]]) -> list[Event]:
        """Append several events in ONE committed transaction: all of them, or none.

        Each item holds `record`'s arguments by name (run_id, round, role, kind, and any of
        inputs, outputs, evidence, usage, started_at, ended_at, detail). Every item is
        checked before anything is written. One commit instead of one per event: use it
        when the events arrive together (an import, a replayed batch); a killed process
        loses either the whole call or nothing.
        """
        rows: list[tuple[Any, ...]] = []
        blobs: dict[str, str] = {}
        for i, item in enumerate(events):
            if not isinstance(item, dict | Mapping):  # dict first: no ABC check
                raise LedgerError(f"record_many item {i} must be a mapping of record()'s arguments")
            keys = item.keys()
            if not (keys <= RECORD_ARGS and keys >= _REQUIRED):
                unknown, missing = set(keys) - RECORD_ARGS, _REQUIRED - set(keys)
                raise LedgerError(
                    f"record_many item {i}: "
                    + (f"unknown arguments {sorted(unknown)}" if unknown else "")
                    + ("; " if unknown and missing else "")
                    + (f"missing {sorted(missing)}" if missing else "")
                    + "; nothing was recorded"
                )
            try:
                row, more = prepare_row(**item)
            except LedgerError as exc:
                raise LedgerError(f"record_many item {i}: {exc}; nothing was recorded") from exc
            rows.append(row)
            blobs.update(more)
        if not rows:
            return []
        what = f"{len(rows)} events ({describe(rows[0])} ...)"
        with self._transaction(what):
            first = int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]) + 1
            self._put(blobs)
            self._db.executemany(INSERT, rows)
        self._remember(blobs)
        # The write lock was ours from BEGIN IMMEDIATE: the new rowids follow MAX(seq) densely.
        return [_event((first + k, *row)) for k, row in enumerate(rows)]

    def put(self, text: str) -> str:
        """Store `text` once under its content hash (labkit.core.types.digest) and return the hash."""
        if not isinstance(text, str):
            raise LedgerError(f"blobs are text, got {type(text).__name__}")
        h = digest(text)
        with self._transaction("blob"):
            self._put({h: text})
        self._remember({h: text})
        return h

    def _remember(self, blobs: Mapping[str, str]) -> None:
        if len(self._stored) > 200_000:  # a cache of hashes, not a second copy of the ledger
            self._stored.clear()
        self._stored.update(blobs)

    def _put(self, blobs: Mapping[str, str]) -> None:
        """Insert blobs not yet known to be stored (inside the caller's transaction)."""
        if len(blobs) > 8:
            self._put_many({h: t for h, t in blobs.items() if h not in self._stored})
            return
        for h, text in blobs.items():
            if h in self._stored:  # this connection saw it committed; blobs are never deleted
                continue
            cur = self._db.execute("INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", (h, text))
            if cur.rowcount == 0:  # stored earlier: make sure it is the same text, not a collision
                (stored,) = self._db.execute("SELECT text FROM blobs WHERE hash = ?", (h,)).fetchone()
                if stored != text:
                    raise LedgerError(f"content hash collision on {h}: two different texts, one hash")

    def _put_many(self, blobs: Mapping[str, str]) -> None:
        """`_put` for many blobs: look up the stored ones in chunks, insert the rest at once."""
        hashes = list(blobs)
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT hash, text FROM blobs WHERE hash IN ({marks})"
            for h, stored in self._db.execute(sql, chunk).fetchall():
                if stored != blobs[h]:
                    raise LedgerError(f"content hash collision on {h}: two different texts, one hash")
        # Those found above are the same texts: INSERT OR IGNORE leaves them as they are.
        self._db.executemany("INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", blobs.items())

    # -- reading -------------------------------------------------------------------------

    def get(self, hash: str) -> str:
        """The text stored under `hash`."""
        rows = self._read("SELECT text FROM blobs WHERE hash = ?", (hash,))
        if not rows:
            raise LedgerError(f"no blob with hash {hash!r} in ledger {self.path}")
        return str(rows[0][0])

    def events(self, run_id: str | None = None) -> list[Event]:
        """All events (of one run, if given) in the order they were recorded."""
        return [_event(row) for row in self._rows(run_id)]

    def frame(self, run_id: str | None = None, *, snapshot: bool = True) -> pl.DataFrame:
        """One row per event: Int64/Float64/Utf8 columns, `detail` and `evidence` as JSON text.

        On a file, the events already in its snapshot (labkit.record.snapshot: Arrow chunks
        beside the ledger, trusted only where they agree with it) are not read from SQLite
        again; a ledger opened for writing adds a chunk once CHUNK_MIN_ROWS new events have
        come. `snapshot=False` reads every row from SQLite: the same frame, more slowly.
        """
        import polars as pl

        if self.path == ":memory:":  # only this connection can see it: rows through Python
            return pl.DataFrame(self._rows(run_id), schema=frame_schema(), orient="row")
        self._read("SELECT 1")  # a closed ledger says so here, like every other read
        where = frame_snapshot.folder(self.path)
        small = run_id is not None and (
            not where.is_dir()
            or self._read("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,))[0][0]
            < frame_snapshot.CHUNK_MIN_ROWS
        )  # a run's few events: its index finds them faster than a snapshot is read
        if not snapshot or small:
            return arrow_frame(self._uri(), f"{SELECT}{literal_where(run_id)} ORDER BY seq")
        kept = frame_snapshot.Snapshot.load(where, self._row_at, self._count_upto)
        after = f" WHERE seq > {kept.upto}" if kept.chain else ""
        tail = arrow_frame(self._uri(), f"{SELECT}{after} ORDER BY seq")
        if not self.read_only and tail.height >= frame_snapshot.CHUNK_MIN_ROWS:
            kept.extend(tail)
        df = pl.concat([*kept.frames, tail], how="vertical", rechunk=False)
        return df if run_id is None else df.filter(pl.col("run_id") == run_id)

    def to_parquet(self, path: str | Path, run_id: str | None = None) -> Path:
        """Write `frame(run_id)` to a Parquet file and return its path."""
        out = Path(path)
        try:
            self.frame(run_id).write_parquet(out)
        except OSError as exc:
            raise LedgerError(f"cannot export ledger to {out}: {exc}") from exc
        return out

    def rounds(self, run_id: str | None = None) -> pl.DataFrame:
        """One row per run and round: the decision (and why), the run's stop where it came, and
        the round's spend with each charge counted once (see labkit.record.rounds): a plain sum
        of `frame()`'s cost_units counts a budgeted run's charges twice, this one's does not."""
        from labkit.record.rounds import rounds_frame

        return rounds_frame(self.events(run_id))

    def runs(self) -> list[str]:
        """Run ids in the order each run first appeared."""
        rows = self._read("SELECT run_id FROM events GROUP BY run_id ORDER BY MIN(seq)")
        return [str(r[0]) for r in rows]

    def last_round(self, run_id: str) -> int | None:
        """The highest round recorded for `run_id` (None if the run has no events): resume after it."""
        value = self._read("SELECT MAX(round) FROM events WHERE run_id = ?", (run_id,))[0][0]
        return None if value is None else int(value)

    def usage(self, run_id: str | None = None, *, role: str | None = None) -> Usage:
        """Total usage recorded, for one run and/or one role if given.

        Budget events (role "budget") repeat the charges of the actions they paid for, so
        sum either role="budget" (what the budget charged) or the acting roles, not both.
        """
        where, params = _where(run_id)
        if role is not None:
            where += " AND role = ?" if where else " WHERE role = ?"
            params += (role,)
        sql = f"SELECT TOTAL(tokens), TOTAL(calls), TOTAL(wall_seconds), TOTAL(cost_units) FROM events{where}"
        tokens, calls, wall, cost = self._read(sql, params)[0]
        return Usage(int(tokens), int(calls), float(wall), float(cost))

    def __len__(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM events")[0][0])

    # -- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({self.path!r}{', read_only=True' if self.read_only else ''})"

    # -- plumbing ------------------------------------------------------------------------

    def _rows(self, run_id: str | None) -> list[tuple[Any, ...]]:
        where, params = _where(run_id)
        return self._read(f"{SELECT}{where} ORDER BY seq", params)

    def _row_at(self, seq: int) -> tuple[Any, ...] | None:
        rows = self._read(f"{SELECT} WHERE seq = ?", (seq,))
        return rows[0] if rows else None

    def _count_upto(self, seq: int) -> int:
        # the whole count walks the small (run_id, seq) index; seq <= ? would walk the table
        sql = "SELECT (SELECT COUNT(*) FROM events) - (SELECT COUNT(*) FROM events WHERE seq > ?)"
        return int(self._read(sql, (seq,))[0][0])


_REQUIRED = frozenset({"run_id", "round", "role", "kind"})


def _event(row: tuple[Any, ...]) -> Event:
    return Event(**dict(zip(COLUMNS[:-1], row[:-1], strict=True)), detail=MappingProxyType(json.loads(row[-1])))


def _where(run_id: str | None) -> tuple[str, tuple[Any, ...]]:
    return ("", ()) if run_id is None else (" WHERE run_id = ?", (run_id,))
