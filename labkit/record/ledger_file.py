"""Opening a ledger's SQLite file, and the one transaction and error path every write takes.

`Ledger` (ledger.py) is built on this: here is how a file is checked before anything is
written (someone else's database or a newer schema is refused untouched), switched to WAL,
opened read-only on storage this process cannot write, and how SQLite's errors become
LedgerErrors that say what was not recorded and that history is intact.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from labkit.core.errors import LedgerError
from labkit.record.rows import SCHEMA, SCHEMA_VERSION


def sqlite_code(exc: sqlite3.Error) -> str:
    return getattr(exc, "sqlite_errorname", "") or ""


class LedgerFile:
    """One SQLite connection to a ledger file (or ":memory:"), shared by threads under a lock."""

    path: str
    read_only: bool

    def _open(self, path: str, read_only: bool, durable: bool, max_bytes: int | None, busy_timeout: float) -> None:
        self.path = path
        self.read_only = read_only
        self._lock = threading.Lock()  # one connection, shared by threads (e.g. notebook cells)
        self._busy_timeout = busy_timeout
        self._db = self._connect(busy_timeout)
        try:
            self._prepare(durable, max_bytes)
        except BaseException:
            self._db.close()
            raise

    def _connect(self, busy_timeout: float, *, immutable: bool = False) -> sqlite3.Connection:
        memory = self.path == ":memory:"
        if not memory:
            p = Path(self.path)
            if p.is_dir():
                raise LedgerError(f"cannot open ledger at {p}: it is a directory, not a file")
            if not p.parent.is_dir():
                raise LedgerError(f"cannot open ledger at {p}: directory {p.parent} does not exist")
            if self.read_only and not p.exists():
                raise LedgerError(f"cannot open ledger at {p} read-only: no such file")
        # Read-only with no write-ahead log beside it: no writer has the ledger open and every
        # event is in the main file, so read it as immutable and leave no -wal/-shm files behind
        # (a recorded ledger in the repository stays untouched). A writer that opens it later is
        # not followed by this view; with a log present, SQLite reads it through a normal ro open.
        self._immutable = immutable or (self.read_only and not memory and not Path(self.path + "-wal").exists())
        uri = self._uri() if self.read_only and not memory else None
        try:
            db = sqlite3.connect(
                uri or self.path,
                uri=uri is not None,
                timeout=busy_timeout,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves: one transaction per event
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger at {self.path}: {exc}") from exc
        return db

    def _uri(self) -> str:
        """A read-only URI for this ledger's file (immutable on storage we cannot write)."""
        mode = "?immutable=1" if self._immutable else "?mode=ro"
        return Path(self.path).absolute().as_uri() + mode

    def _prepare(self, durable: bool, max_bytes: int | None) -> None:
        # While another process is creating or switching the same new file to WAL, SQLite
        # can answer "database is locked" at once, without waiting on its busy handler. So the
        # opening steps are retried until the busy timeout, not failed on the first try.
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                version = self._check()  # reads only: a database we refuse is left untouched
                if not self.read_only:
                    self._pragmas(durable, max_bytes)
                break
            except LedgerError as exc:
                if (
                    not isinstance(exc.__cause__, sqlite3.OperationalError)
                    or "locked" not in str(exc.__cause__)
                    or time.monotonic() > deadline
                ):
                    raise
                time.sleep(0.05)
        if version == 0:
            self._create_schema()

    def _check(self) -> int:
        """The schema version, after refusing (without writing) anything that is not our ledger."""
        try:
            version, tables = self._read_header()
        except sqlite3.OperationalError as exc:
            if not (self.read_only and sqlite_code(exc).startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))):
                raise self._error(exc, "opening") from exc
            self._reopen_immutable(exc)
            try:
                version, tables = self._read_header()
            except sqlite3.Error as again:
                raise self._error(again, "opening") from again
        except sqlite3.Error as exc:
            raise self._error(exc, "opening") from exc
        if version not in (0, SCHEMA_VERSION):
            raise LedgerError(
                f"ledger {self.path} has schema version {version}; this labkit reads version {SCHEMA_VERSION}"
            )
        if version == 0 and tables:
            raise LedgerError(
                f"{self.path} is an SQLite database but not a labkit ledger; "
                "refusing to add tables to it (nothing was written)"
            )
        if version == 0 and self.read_only:
            raise LedgerError(f"ledger {self.path} is empty or not a labkit ledger (no schema)")
        return version

    def _read_header(self) -> tuple[int, int]:
        # One statement, so one snapshot: another process may be creating the schema meanwhile.
        version, tables = self._db.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), (SELECT COUNT(*) FROM sqlite_master)"
        ).fetchone()
        return int(version), int(tables)

    def _reopen_immutable(self, exc: sqlite3.Error) -> None:
        """A WAL ledger on storage we cannot write: SQLite cannot create its -shm index there.

        With no write-ahead log beside it, every committed event is in the main file, which
        SQLite can then read as immutable. With one, the newest events are only in the log,
        and reading the main file alone would show a stale ledger: refuse instead.
        """
        wal = Path(self.path + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise LedgerError(
                f"cannot open ledger {self.path} read-only ({exc}): its storage is not writable and "
                f"its write-ahead log {wal.name} holds events not yet in the main file, which SQLite "
                "can only read by creating an index file beside it; copy the ledger together with "
                f"{wal.name} to writable storage and open the copy"
            ) from exc
        self._db.close()
        self._db = self._connect(self._busy_timeout, immutable=True)

    def _pragmas(self, durable: bool, max_bytes: int | None) -> None:
        try:
            if self.path != ":memory:":
                mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise LedgerError(f"ledger {self.path}: could not switch to WAL mode (got {mode})")
            self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
            if max_bytes is not None:
                page = self._db.execute("PRAGMA page_size").fetchone()[0]
                self._db.execute(f"PRAGMA max_page_count = {max(1, int(max_bytes) // page)}")
        except sqlite3.Error as exc:
            raise self._error(exc, "opening") from exc

    def _create_schema(self) -> None:
        # Two processes may create the same new ledger at once: IF NOT EXISTS makes it idempotent.
        with self._transaction("creating the schema"):
            version, tables = self._read_header()
            if version == SCHEMA_VERSION:
                return  # another process created it while we waited for the lock
            if tables:
                raise LedgerError(
                    f"{self.path} is an SQLite database but not a labkit ledger; refusing to add tables to it"
                )
            for statement in SCHEMA:
                self._db.execute(statement)

    # -- reading and writing through the one connection -------------------------------------

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc, "reading") from exc

    @contextmanager
    def _transaction(self, what: str) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so the busy timeout applies."""
        if self.read_only:
            raise LedgerError(f"ledger {self.path} was opened read-only: {what} was not recorded")
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield
                    self._db.execute("COMMIT")
                except BaseException:
                    # SQLite may already have rolled back by itself (e.g. on a full disk).
                    if self._db.in_transaction:
                        with suppress(sqlite3.Error):
                            self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(exc, what) from exc

    def _error(self, exc: sqlite3.Error, what: str) -> LedgerError:
        """Turn SQLite's error into one that says what happened and that history is intact."""
        code = sqlite_code(exc)
        kept = "events already recorded are intact"
        if isinstance(exc, sqlite3.ProgrammingError) and "closed" in str(exc):
            return LedgerError(f"ledger {self.path} is closed: {what} failed")
        if code == "SQLITE_FULL":
            why = "the disk is full or the ledger reached its max_bytes cap"
            return LedgerError(f"ledger {self.path} is full ({why}): {what} was not recorded; {kept}")
        if code.startswith("SQLITE_READONLY"):
            return LedgerError(f"ledger {self.path} is read-only ({exc}): {what} was not recorded; {kept}")
        if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
            return LedgerError(
                f"ledger {self.path} stayed locked by another writer past the busy timeout: "
                f"{what} was not recorded; {kept}"
            )
        if code.startswith("SQLITE_CONSTRAINT") and "append-only" in str(exc):
            return LedgerError(str(exc))
        if code.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_PERM")):
            if what == "opening":
                return LedgerError(f"cannot open ledger {self.path} ({exc}); it was not changed")
            return LedgerError(f"cannot write ledger {self.path} ({exc}): {what} was not recorded; {kept}")
        if code == "SQLITE_NOTADB":
            return LedgerError(f"{self.path} is not a ledger (not an SQLite database): {exc}")
        return LedgerError(f"ledger {self.path}: {what} failed: {exc} ({code or type(exc).__name__})")
