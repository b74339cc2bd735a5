"""Ledger append throughput and frame() time, as ratios to baselines measured in the same run.

    .venv/bin/python benchmarks/ledger.py [--events N] [--reps R] [--frame-events M]

Appends: Ledger.record (one committed transaction per event, blobs by hash, JSON
evidence/detail) to a WAL file on disk and to ":memory:", against
  - sqlite3, one INSERT + COMMIT per row in a WAL file (the same durability promise),
  - sqlite3, one executemany of all rows in a single transaction (the raw ceiling),
  - JSON lines appended to a file, flushed per line, no fsync (the "just log it" option).
frame(): Ledger.frame() on M events, against a bare SELECT ... fetchall() of the same rows.
Append ratios are throughput / baseline throughput (higher is faster); frame ratios are
time / baseline time (lower is faster). The machine is shared and noisy: read ratios.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labkit.core.types import Usage, digest  # noqa: E402
from labkit.record.ledger import _COLUMNS, _INSERT, _SCHEMA, Ledger  # noqa: E402


def _workload(n: int) -> list[dict]:
    """n realistic events: a candidate in, evidence out, a little detail, some usage."""
    out = []
    for i in range(n):
        code = f"def f(x):\n    return x + {i % 50}\n"  # repeats: blobs are shared
        out.append(
            dict(
                run_id=f"run-{i % 4}", round=i // 4, role="validator", kind="verify",
                inputs=code, outputs=f"evidence {i}",
                evidence={"FAIL_TO_PASS": {"success": [f"t::{i % 7}"], "failure": []}},
                usage=Usage(tokens=100 + i % 30, calls=1, wall_seconds=0.01, cost_units=1.0),
                detail={"candidate": digest(code), "resolved": i % 3 == 0},
            )
        )  # fmt: skip
    return out


def _rows(events: list[dict]) -> list[tuple]:
    """The same events as plain rows (what the baselines write)."""
    now = time.time()
    return [
        (
            e["run_id"], e["round"], e["role"], e["kind"], digest(e["inputs"]), digest(e["outputs"]),
            json.dumps(e["evidence"]), e["usage"].tokens, e["usage"].calls, e["usage"].wall_seconds,
            e["usage"].cost_units, now, now, json.dumps(e["detail"]),
        )
        for e in events
    ]  # fmt: skip


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _ledger_appends(path: str, events: list[dict]) -> float:
    with Ledger(path) as led:
        return _timed(lambda: [led.record(**e) for e in events])


def _sqlite_per_row_commit(path: Path, rows: list[tuple]) -> float:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(_SCHEMA[1])  # the events table only: no blobs, no triggers

    def go() -> None:
        for row in rows:
            db.execute("BEGIN IMMEDIATE")
            db.execute(_INSERT, row)
            db.execute("COMMIT")

    t = _timed(go)
    db.close()
    return t


def _sqlite_executemany(path: Path, rows: list[tuple]) -> float:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(_SCHEMA[1])

    def go() -> None:
        with db:
            db.executemany(_INSERT, rows)

    t = _timed(go)
    db.close()
    return t


def _jsonl(path: Path, rows: list[tuple]) -> float:
    def go() -> None:
        with path.open("a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
                f.flush()

    return _timed(go)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000, help="appends per measurement")
    ap.add_argument("--reps", type=int, default=3, help="repetitions; the best of each is kept")
    ap.add_argument("--frame-events", type=int, default=100_000, help="events in the frame() test")
    args = ap.parse_args()
    n = args.events
    events = _workload(n)
    rows = _rows(events)

    ways: dict[str, Callable[[Path], float]] = {
        "sqlite3 INSERT+COMMIT per row, WAL file": lambda d: _sqlite_per_row_commit(
            d / "a.db", rows
        ),
        "sqlite3 executemany, 1 transaction, WAL file": lambda d: _sqlite_executemany(
            d / "b.db", rows
        ),
        "JSON lines, flush per line, no fsync": lambda d: _jsonl(d / "c.jsonl", rows),
        "Ledger.record, WAL file": lambda d: _ledger_appends(str(d / "l.db"), events),
        "Ledger.record, :memory:": lambda d: _ledger_appends(":memory:", events),
    }
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(args.reps):  # interleaved, so a noisy moment hits every way alike
        for name, way in ways.items():
            with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:  # on disk, not tmpfs
                best[name] = min(best[name], way(Path(tmp)))
    base_name = next(iter(ways))
    print(f"ledger appends: {n:,} events, best of {args.reps} "
          f"(python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version})")  # fmt: skip
    print(f"{'':52} {'events/s':>10} {'vs baseline':>12}")
    for name, t in best.items():
        label = name + (" (baseline)" if name == base_name else "")
        print(f"{label:52} {n / t:10,.0f} {best[base_name] / t:11.2f}x")

    m = args.frame_events
    select = f"SELECT {', '.join(_COLUMNS)} FROM events ORDER BY seq"
    import polars  # noqa: F401  (imported before timing: frame() imports it lazily)

    with Ledger() as led:
        for e in _workload(m):
            led.record(**e)
        fetch = min(_timed(lambda: led._db.execute(select).fetchall()) for _ in range(args.reps))
        frame = min(_timed(led.frame) for _ in range(args.reps))
        evs = min(_timed(led.events) for _ in range(args.reps))
        rows_, cols = led.frame().shape
    print(f"\nframe() on {m:,} events -> {rows_:,} x {cols} polars DataFrame, best of {args.reps}")
    print(f"{'':52} {'seconds':>10} {'vs baseline':>12}")
    print(f"{'SELECT ... fetchall() (baseline)':52} {fetch:10.3f} {1.0:11.2f}x")
    print(f"{'Ledger.frame()':52} {frame:10.3f} {frame / fetch:11.2f}x")
    print(f"{'Ledger.events() (frozen Event objects)':52} {evs:10.3f} {evs / fetch:11.2f}x")


if __name__ == "__main__":
    main()
