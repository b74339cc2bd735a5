"""The ledger: every action of a run as one append-only event in SQLite.

One event per action (generate, execute, verify, reflect, decide, ...): who did it
(role), in which run and round, what went in and came out (by content hash; the texts
live once in a blob table), the evidence, and what it cost. Each `record` is a single
committed transaction, so a process killed with SIGKILL between appends loses nothing
it already recorded. Files use WAL mode with a busy timeout, so several processes can
append to the same ledger at once. UPDATE and DELETE are refused by triggers inside the
database itself, not by politeness in this module.

Durability note: WAL with synchronous=NORMAL survives a killed process (the committed
frames are in the OS cache); a power cut may lose the last few commits. Pass
``durable=True`` for synchronous=FULL (an fsync per event) when that matters.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from labkit.core.errors import LedgerError
from labkit.core.types import Usage, digest

if TYPE_CHECKING:
    import polars as pl

SCHEMA_VERSION = 1
_NO_USAGE = Usage()

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS blobs (
        hash TEXT PRIMARY KEY,
        text TEXT NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS events (
        seq          INTEGER PRIMARY KEY,
        run_id       TEXT    NOT NULL,
        round        INTEGER NOT NULL,
        role         TEXT    NOT NULL,
        kind         TEXT    NOT NULL,
        input_hash   TEXT    NOT NULL,
        output_hash  TEXT    NOT NULL,
        evidence     TEXT    NOT NULL,
        tokens       INTEGER NOT NULL,
        calls        INTEGER NOT NULL,
        wall_seconds REAL    NOT NULL,
        cost_units   REAL    NOT NULL,
        started_at   REAL    NOT NULL,
        ended_at     REAL    NOT NULL,
        detail       TEXT    NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq)",
    # Append-only is the database's rule, not this module's: any UPDATE or DELETE aborts.
    *(
        f"""CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table}
        BEGIN SELECT RAISE(ABORT, 'labkit ledger is append-only: {verb} on {table} refused'); END"""
        for table in ("events", "blobs")
        for verb in ("UPDATE", "DELETE")
    ),
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

_COLUMNS = (
    "seq", "run_id", "round", "role", "kind", "input_hash", "output_hash", "evidence",
    "tokens", "calls", "wall_seconds", "cost_units", "started_at", "ended_at", "detail",
)  # fmt: skip
_INSERT = f"INSERT INTO events ({', '.join(_COLUMNS[1:])}) VALUES ({', '.join('?' * 14)})"
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM events"


@dataclass(frozen=True)
class Event:
    """One recorded action. `evidence` and `detail` were stored as JSON text."""

    seq: int
    run_id: str
    round: int
    role: str  # executor | validator | reflector | decision | model | budget | ...
    kind: str  # generate | execute | verify | reflect | decide | alarm | ...
    input_hash: str  # "" when there was no input
    output_hash: str  # "" when there was no output
    evidence: str  # JSON text, "" if none
    tokens: int
    calls: int
    wall_seconds: float
    cost_units: float
    started_at: float
    ended_at: float
    detail: Mapping[str, Any]

    @property
    def usage(self) -> Usage:
        return Usage(self.tokens, self.calls, self.wall_seconds, self.cost_units)

    @property
    def evidence_value(self) -> Any:
        """The evidence decoded back from JSON (None when there was none)."""
        return json.loads(self.evidence) if self.evidence else None


def new_run_id(prefix: str = "run") -> str:
    """A fresh run id that sorts by creation time: ``<prefix>-YYYYmmdd-HHMMSS-<8 hex>``."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"


class Ledger:
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
        self.path = str(path)
        self.read_only = read_only
        self._lock = threading.Lock()  # one connection, shared by threads (e.g. notebook cells)
        self._stored: set[str] = set()  # blob hashes known committed (only added after COMMIT)
        self._busy_timeout = busy_timeout
        self._db = self._connect(busy_timeout)
        try:
            self._prepare(durable, max_bytes)
        except BaseException:
            self._db.close()
            raise

    # -- opening -------------------------------------------------------------------------

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
        self._immutable = immutable
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
            if not (
                self.read_only and _code(exc).startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY"))
            ):
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
            "SELECT (SELECT user_version FROM pragma_user_version),"
            " (SELECT COUNT(*) FROM sqlite_master)"
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
                    raise LedgerError(
                        f"ledger {self.path}: could not switch to WAL mode (got {mode})"
                    )
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
                    f"{self.path} is an SQLite database but not a labkit ledger; "
                    "refusing to add tables to it"
                )
            for statement in _SCHEMA:
                self._db.execute(statement)

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
        usage: Usage = _NO_USAGE,
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
        row, blobs = _prepared(
            run_id, round, role, kind, inputs, outputs, evidence, usage, started_at, ended_at, detail
        )  # fmt: skip
        if self.read_only:
            raise LedgerError(
                f"ledger {self.path} was opened read-only: {_what(row)} was not recorded"
            )
        with self._lock:  # one transaction, inlined: this is the hot path of every run
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._put(blobs)
                    seq = db.execute(_INSERT, row).lastrowid
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:  # SQLite may have rolled back by itself (full disk)
                        with suppress(sqlite3.Error):
                            db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(exc, _what(row)) from exc
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
            if not isinstance(item, Mapping):
                raise LedgerError(f"record_many item {i} must be a mapping of record()'s arguments")
            unknown = set(item) - _RECORD_ARGS
            missing = {"run_id", "round", "role", "kind"} - set(item)
            if unknown or missing:
                raise LedgerError(
                    f"record_many item {i}: "
                    + (f"unknown arguments {sorted(unknown)}" if unknown else "")
                    + ("; " if unknown and missing else "")
                    + (f"missing {sorted(missing)}" if missing else "")
                    + "; nothing was recorded"
                )
            try:
                row, more = _prepared(*(item.get(k, d) for k, d in _RECORD_DEFAULTS))
            except LedgerError as exc:
                raise LedgerError(f"record_many item {i}: {exc}; nothing was recorded") from exc
            rows.append(row)
            blobs.update(more)
        if not rows:
            return []
        what = f"{len(rows)} events ({_what(rows[0])} ...)"
        with self._transaction(what):
            first = (
                int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]) + 1
            )
            self._put(blobs)
            self._db.executemany(_INSERT, rows)
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
        for h, text in blobs.items():
            if h in self._stored:  # this connection saw it committed; blobs are never deleted
                continue
            cur = self._db.execute(
                "INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", (h, text)
            )
            if cur.rowcount == 0:  # stored earlier: make sure it is the same text, not a collision
                (stored,) = self._db.execute(
                    "SELECT text FROM blobs WHERE hash = ?", (h,)
                ).fetchone()
                if stored != text:
                    raise LedgerError(
                        f"content hash collision on {h}: two different texts, one hash"
                    )

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

    def frame(self, run_id: str | None = None) -> pl.DataFrame:
        """One row per event: Int64/Float64/Utf8 columns, `detail` and `evidence` as JSON text."""
        import polars as pl

        if self.path == ":memory:":  # only this connection can see it: rows through Python
            return pl.DataFrame(self._rows(run_id), schema=frame_schema(), orient="row")
        self._read("SELECT 1")  # a closed ledger says so here, like every other read
        return _arrow_frame(self._uri(), f"{_SELECT}{_literal_where(run_id)} ORDER BY seq")

    def to_parquet(self, path: str | Path, run_id: str | None = None) -> Path:
        """Write `frame(run_id)` to a Parquet file and return its path."""
        out = Path(path)
        try:
            self.frame(run_id).write_parquet(out)
        except OSError as exc:
            raise LedgerError(f"cannot export ledger to {out}: {exc}") from exc
        return out

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
        return self._read(f"{_SELECT}{where} ORDER BY seq", params)

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
        code = _code(exc)
        kept = "events already recorded are intact"
        if isinstance(exc, sqlite3.ProgrammingError) and "closed" in str(exc):
            return LedgerError(f"ledger {self.path} is closed: {what} failed")
        if code == "SQLITE_FULL":
            why = "the disk is full or the ledger reached its max_bytes cap"
            return LedgerError(
                f"ledger {self.path} is full ({why}): {what} was not recorded; {kept}"
            )
        if code.startswith("SQLITE_READONLY"):
            return LedgerError(
                f"ledger {self.path} is read-only ({exc}): {what} was not recorded; {kept}"
            )
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
            return LedgerError(
                f"cannot write ledger {self.path} ({exc}): {what} was not recorded; {kept}"
            )
        if code == "SQLITE_NOTADB":
            return LedgerError(f"{self.path} is not a ledger (not an SQLite database): {exc}")
        return LedgerError(
            f"ledger {self.path}: {what} failed: {exc} ({code or type(exc).__name__})"
        )


def _prepared(
    run_id: str,
    round: int,
    role: str,
    kind: str,
    inputs: str | None,
    outputs: str | None,
    evidence: Any,
    usage: Usage,
    started_at: float | None,
    ended_at: float | None,
    detail: Mapping[str, Any] | None,
) -> tuple[tuple[Any, ...], dict[str, str]]:
    """One event checked and encoded: its row (without seq) and its blobs by hash."""
    for name, label in (("run_id", run_id), ("role", role), ("kind", kind)):
        if not isinstance(label, str) or not label:
            raise LedgerError(f"{name} must be a non-empty str, got {label!r}")
    if not isinstance(round, int) or isinstance(round, bool) or round < 0:
        raise LedgerError(f"round must be a non-negative int, got {round!r}")
    if not isinstance(usage, Usage):
        raise LedgerError(f"usage must be a labkit.core.types.Usage, got {type(usage).__name__}")
    tokens, calls, wall, cost = usage.tokens, usage.calls, usage.wall_seconds, usage.cost_units
    if not (
        0 <= tokens < math.inf
        and 0 <= calls < math.inf
        and 0 <= wall < math.inf
        and 0 <= cost < math.inf
    ):
        bad = {k: v for k, v in usage.as_dict().items() if not 0 <= v < math.inf}
        raise LedgerError(f"usage must be finite and >= 0 in every dimension, got {bad}")
    blobs: dict[str, str] = {}
    hashes = []
    for name, blob in (("inputs", inputs), ("outputs", outputs)):
        if blob is None:
            hashes.append("")
        elif isinstance(blob, str):
            h = digest(blob)
            blobs[h] = blob
            hashes.append(h)
        else:
            raise LedgerError(f"{name} must be text or None, got {type(blob).__name__}")
    if detail is not None and not isinstance(detail, Mapping):
        raise LedgerError(f"detail must be a mapping or None, got {type(detail).__name__}")
    evidence_json = "" if evidence is None else _to_json(evidence, "evidence")
    detail_json = _to_json(detail, "detail") if detail else "{}"
    ended = time.time() if ended_at is None else float(ended_at)
    started = ended - wall if started_at is None else float(started_at)
    if not (math.isfinite(started) and math.isfinite(ended)) or ended < started:
        raise LedgerError(f"need finite started_at <= ended_at, got {started!r} > {ended!r}")
    row = (
        run_id, round, role, kind, hashes[0], hashes[1], evidence_json, tokens, calls,
        float(wall), float(cost), started, ended, detail_json,
    )  # fmt: skip
    return row, blobs


_RECORD_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("run_id", None), ("round", None), ("role", None), ("kind", None), ("inputs", None),
    ("outputs", None), ("evidence", None), ("usage", _NO_USAGE), ("started_at", None),
    ("ended_at", None), ("detail", None),
)  # fmt: skip
_RECORD_ARGS = frozenset(k for k, _ in _RECORD_DEFAULTS)


def _what(row: tuple[Any, ...]) -> str:
    return f"event {row[2]}/{row[3]} of run {row[0]!r} round {row[1]}"


def frame_schema() -> dict[str, Any]:
    """The polars dtypes of `Ledger.frame()` (also what an empty ledger's frame has)."""
    import polars as pl

    types = {"round": pl.Int64, "seq": pl.Int64, "tokens": pl.Int64, "calls": pl.Int64}
    floats = ("wall_seconds", "cost_units", "started_at", "ended_at")
    return {c: types.get(c, pl.Float64 if c in floats else pl.Utf8) for c in _COLUMNS}


def _event(row: tuple[Any, ...]) -> Event:
    return _make_event(*row[:-1], MappingProxyType(json.loads(row[-1])))


_make_event = cast(Callable[..., Event], Event)  # positional, in _COLUMNS order


def _arrow_frame(uri: str, sql: str) -> pl.DataFrame:
    """Run `sql` on the ledger file through SQLite's ADBC driver, straight into Arrow columns.

    The rows never become Python objects (which costs several seconds per million events);
    the driver reads in C and hands polars Arrow batches. A second, read-only connection:
    it sees every committed event.
    """
    import adbc_driver_manager as adbc
    import adbc_driver_sqlite
    import polars as pl

    schema = frame_schema()
    try:
        with (
            adbc.AdbcDatabase(driver=adbc_driver_sqlite._driver_path(), uri=uri) as db,
            adbc.AdbcConnection(db) as conn,
            adbc.AdbcStatement(conn) as stmt,
        ):
            # The driver types each column from its first batch of rows; the columns'
            # affinities (INTEGER / REAL / TEXT, all NOT NULL) keep every value one type.
            stmt.set_options(**{"adbc.sqlite.query.batch_rows": "65536"})
            stmt.set_sql_query(sql)
            stream, _ = stmt.execute_query()
            df = pl.DataFrame(stream)
    except adbc.Error as exc:
        raise LedgerError(f"cannot read ledger {uri}: {exc}") from exc
    if df.schema != schema:  # e.g. an empty result, whose columns the driver cannot type
        df = df.cast(pl.Schema(schema)) if df.width == len(schema) else pl.DataFrame(schema=schema)
    return df


def _literal_where(run_id: str | None) -> str:
    if run_id is None:
        return ""
    return " WHERE run_id = '" + str(run_id).replace("'", "''") + "'"


def _code(exc: sqlite3.Error) -> str:
    return getattr(exc, "sqlite_errorname", "") or ""


def _where(run_id: str | None) -> tuple[str, tuple[Any, ...]]:
    return ("", ()) if run_id is None else (" WHERE run_id = ?", (run_id,))


def _to_json(value: Any, what: str) -> str:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise LedgerError(f"{what} is not JSON-serialisable ({exc}); nothing was recorded") from exc


def _plain(obj: Any) -> Any:
    """json's fallback: dataclasses become dicts of their fields, other mappings plain dicts."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"a {type(obj).__name__} ({obj!r:.60}) cannot be stored as JSON")


_ENCODER = json.JSONEncoder(default=_plain, allow_nan=False, ensure_ascii=False)
