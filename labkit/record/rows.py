"""How a ledger event becomes an SQLite row, and how rows come back as a polars frame.

The schema (append-only by trigger), the checks and encoding every append makes before
anything is written (`prepare_row`, shared by `Ledger.record` and `Ledger.record_many`;
it refuses a detail field the event's (role, kind) does not declare, labkit.record.vocabulary),
and `arrow_frame`, which reads rows straight into Arrow columns through SQLite's ADBC driver.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from labkit.core.errors import LedgerError
from labkit.core.redact import redact_all
from labkit.core.types import Usage, digest
from labkit.record.vocabulary import check

if TYPE_CHECKING:
    import polars as pl

NO_USAGE = Usage()
SCHEMA_VERSION = 1

SCHEMA = (
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

COLUMNS = (
    "seq", "run_id", "round", "role", "kind", "input_hash", "output_hash", "evidence",
    "tokens", "calls", "wall_seconds", "cost_units", "started_at", "ended_at", "detail",
)  # fmt: skip
INSERT = f"INSERT INTO events ({', '.join(COLUMNS[1:])}) VALUES ({', '.join('?' * 14)})"
SELECT = f"SELECT {', '.join(COLUMNS)} FROM events"


def prepare_row(
    run_id: str,
    round: int,
    role: str,
    kind: str,
    inputs: str | None = None,
    outputs: str | None = None,
    evidence: Any = None,
    usage: Usage = NO_USAGE,
    started_at: float | None = None,
    ended_at: float | None = None,
    detail: Mapping[str, Any] | None = None,
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
    if not (0 <= tokens < math.inf and 0 <= calls < math.inf and 0 <= wall < math.inf and 0 <= cost < math.inf):
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
    if detail is not None and not isinstance(detail, dict | Mapping):  # dict first: no ABC check
        raise LedgerError(f"detail must be a mapping or None, got {type(detail).__name__}")
    check(role, kind, detail)  # the vocabulary: a field its (role, kind) does not declare is refused
    evidence_json = "" if evidence is None else to_json(evidence, "evidence")
    detail_json = to_json(detail, "detail") if detail else "{}"
    texts = [inputs or "", outputs or "", evidence_json, detail_json]
    clean = redact_all(texts)
    if clean != texts:  # a known secret (an environment key or token) never reaches a row or blob
        evidence_json, detail_json = clean[2], clean[3]
        blobs, hashes = {}, []
        for original, text in zip((inputs, outputs), clean[:2], strict=True):
            h = "" if original is None else digest(text)
            if original is not None:
                blobs[h] = text
            hashes.append(h)
    ended = time.time() if ended_at is None else float(ended_at)
    started = ended - wall if started_at is None else float(started_at)
    if not (math.isfinite(started) and math.isfinite(ended)) or ended < started:
        raise LedgerError(f"need finite started_at <= ended_at, got {started!r} > {ended!r}")
    row = (
        run_id, round, role, kind, hashes[0], hashes[1], evidence_json, tokens, calls,
        float(wall), float(cost), started, ended, detail_json,
    )  # fmt: skip
    return row, blobs


RECORD_ARGS = frozenset(inspect.signature(prepare_row).parameters)  # record()'s arguments


def describe(row: tuple[Any, ...]) -> str:
    return f"event {row[2]}/{row[3]} of run {row[0]!r} round {row[1]}"


def frame_schema() -> dict[str, Any]:
    """The polars dtypes of `Ledger.frame()` (also what an empty ledger's frame has)."""
    import polars as pl

    types = {"round": pl.Int64, "seq": pl.Int64, "tokens": pl.Int64, "calls": pl.Int64}
    floats = ("wall_seconds", "cost_units", "started_at", "ended_at")
    return {c: types.get(c, pl.Float64 if c in floats else pl.Utf8) for c in COLUMNS}


def arrow_frame(uri: str, sql: str) -> pl.DataFrame:
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


def literal_where(run_id: str | None) -> str:
    if run_id is None:
        return ""
    return " WHERE run_id = '" + str(run_id).replace("'", "''") + "'"


def to_json(value: Any, what: str) -> str:
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
