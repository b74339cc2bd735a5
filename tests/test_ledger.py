"""The ledger: append-only, one transaction per event, safe across processes and kill -9."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from labkit.core.errors import LedgerError
from labkit.core.types import Candidate, Evidence, TestResult, Usage, digest
from labkit.record.ledger import Event, Ledger, frame_schema, new_run_id

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parents[1]


def _blob_count(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0])


# -- recording and reading back --------------------------------------------------------


def test_record_returns_what_is_stored_and_blobs_are_content_addressed(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        e1 = led.record(
            "r1",
            0,
            "model",
            "generate",
            inputs="task",
            outputs="def f(): ...",
            usage=Usage(tokens=120, calls=1, wall_seconds=0.5, cost_units=2.0),
            detail={"model": "scripted", "params": {"n": [1, 2]}},
            ended_at=100.0,
        )
        e2 = led.record("r1", 1, "validator", "verify", inputs="def f(): ...", ended_at=101.0)
        assert led.events() == [e1, e2]
        assert (e1.seq, e2.seq) == (1, 2)
        assert e1.input_hash == digest("task") and e1.output_hash == digest("def f(): ...")
        assert e2.input_hash == e1.output_hash and e2.output_hash == ""
        assert led.get(e1.input_hash) == "task"
        assert led.get(e2.input_hash) == "def f(): ..."
        assert e1.started_at == pytest.approx(99.5)  # ended_at minus the usage's wall time
        assert e1.usage == Usage(120, 1, 0.5, 2.0)
        assert dict(e1.detail) == {"model": "scripted", "params": {"n": [1, 2]}}
        assert led.put("task") == e1.input_hash
    assert _blob_count(path) == 2  # "def f(): ..." was stored once though used twice


def test_blobs_shared_across_connections_and_forgeries_detected(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as a, Ledger(path) as b:
        ea = a.record("r", 0, "executor", "generate", outputs="same text")
        eb = b.record("r", 1, "executor", "generate", outputs="same text")
        assert ea.output_hash == eb.output_hash and b.get(ea.output_hash) == "same text"
    with sqlite3.connect(path) as raw:  # INSERT is allowed; forge a blob under another text's hash
        raw.execute("INSERT INTO blobs VALUES (?, ?)", (digest("real"), "forged"))
    with Ledger(path) as led, pytest.raises(LedgerError, match="content hash collision"):
        led.record("r", 2, "executor", "generate", inputs="real")
    assert _blob_count(path) == 2


def test_get_unknown_hash_is_a_clear_error() -> None:
    with Ledger() as led, pytest.raises(LedgerError, match="no blob with hash 'nope'"):
        led.get("nope")


def test_evidence_accepts_json_values_and_dataclasses() -> None:
    ev = Evidence(
        candidate="c1",
        suite="s1",
        validator="v1",
        exit_code=1,
        wall_seconds=0.2,
        results=(TestResult("t::a", "passed"), TestResult("t::b", "failed", "assert 1 == 2")),
    )
    cand = Candidate(files={"a.py": "x = 1"})  # holds a mappingproxy, which asdict cannot copy
    with Ledger() as led:
        a = led.record("r", 0, "validator", "verify", evidence=ev)
        b = led.record("r", 0, "executor", "generate", evidence=cand)
        c = led.record("r", 0, "decision", "decide", evidence={"FAIL_TO_PASS": ["t::b"]})
        d = led.record("r", 0, "decision", "decide")
        assert a.evidence_value["results"][1] == {
            "nodeid": "t::b",
            "outcome": "failed",
            "message": "assert 1 == 2",
            "seconds": 0.0,
        }
        assert a.evidence_value["exit_code"] == 1
        assert b.evidence_value["files"] == {"a.py": "x = 1"}
        assert json.loads(c.evidence) == {"FAIL_TO_PASS": ["t::b"]}
        assert d.evidence == "" and d.evidence_value is None
        assert led.events() == [a, b, c, d]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"evidence": object()}, "evidence is not JSON-serialisable"),
        ({"evidence": {1, 2}}, "evidence is not JSON-serialisable"),
        ({"evidence": [math.nan]}, "evidence is not JSON-serialisable"),
        ({"detail": {"source": lambda: 1}}, "detail is not JSON-serialisable"),
        (
            {"detail": {"f": 1}},
            r"'generate' events by role 'executor' \(GenerateDetail\) declare no detail field\(s\) \['f'\]",
        ),
        ({"detail": ["not", "a", "mapping"]}, "detail must be a mapping"),
        ({"usage": Usage(tokens=-1)}, r"usage must be finite and >= 0 .*'tokens': -1"),
        ({"usage": Usage(cost_units=math.inf)}, r"usage must be finite .*'cost_units': inf"),
        ({"usage": Usage(wall_seconds=math.nan)}, r"usage must be finite .*'wall_seconds': nan"),
        ({"usage": {"tokens": 1}}, "usage must be a labkit.core.types.Usage"),
        ({"outputs": b"bytes"}, "outputs must be text"),
        ({"started_at": 5.0, "ended_at": 4.0}, "started_at <= ended_at"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path, kwargs: dict, message: str) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        led.record("r", 0, "executor", "generate", inputs="kept")
        with pytest.raises(LedgerError, match=message):
            led.record("r", 1, "executor", "generate", inputs="never stored", **kwargs)
        assert len(led) == 1
    assert _blob_count(path) == 1  # the refused event's input blob was not written either


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", 0, "executor", "generate"), "run_id must be a non-empty str"),
        (("r", -1, "executor", "generate"), "round must be a non-negative int"),
        (("r", True, "executor", "generate"), "round must be a non-negative int"),
        (("r", 0, "", "generate"), "role must be a non-empty str"),
        (("r", 0, "executor", None), "kind must be a non-empty str"),
    ],
)
def test_bad_labels_are_refused(args: tuple, message: str) -> None:
    with Ledger() as led:
        with pytest.raises(LedgerError, match=message):
            led.record(*args)
        assert len(led) == 0


# -- append-only, enforced by the database ---------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET tokens = 0",
        "DELETE FROM events",
        "DELETE FROM events WHERE seq = 1",
        "UPDATE blobs SET text = 'forged'",
        "DELETE FROM blobs",
        "INSERT OR REPLACE INTO events (seq, run_id, round, role, kind, input_hash, output_hash,"
        " evidence, tokens, calls, wall_seconds, cost_units, started_at, ended_at, detail)"
        " VALUES (1, 'r', 0, 'x', 'y', '', '', '', 0, 0, 0, 0, 0, 0, '{}')",
    ],
)
def test_triggers_refuse_update_and_delete_from_any_connection(tmp_path: Path, sql: str) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        led.record("r", 0, "executor", "generate", inputs="in", usage=Usage(tokens=7))
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA recursive_triggers = ON")  # makes REPLACE's implicit delete fire triggers
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute(sql)
    raw.rollback()
    raw.close()
    with Ledger(path) as led:
        (event,) = led.events()
        assert event.tokens == 7 and led.get(event.input_hash) == "in"


def test_files_use_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    Ledger(path).close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- frames, parquet, runs, resuming ---------------------------------------------------


def _fill(led: Ledger) -> None:
    for rnd in range(3):
        led.record("a", rnd, "executor", "generate", outputs=f"v{rnd}", usage=Usage(10, 1, 0.1, 1.0))
        led.record("b", rnd, "validator", "verify", evidence={"ok": rnd == 2}, detail={"why": f"r{rnd}"})
    led.record("a", 7, "decision", "decide", detail={"decision": "stop"})


def test_frame_has_typed_columns_and_one_row_per_event(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as led:
        _fill(led)
        df = led.frame()
        assert df.height == 7 and dict(df.schema) == frame_schema()
        assert df.schema["tokens"] == pl.Int64 and df.schema["cost_units"] == pl.Float64
        assert df.schema["detail"] == pl.Utf8 and df.schema["run_id"] == pl.Utf8
        assert df["seq"].to_list() == list(range(1, 8))
        a = led.frame("a")
        assert a["round"].to_list() == [0, 1, 2, 7]
        assert a["tokens"].sum() == 30
        assert json.loads(a["detail"][-1]) == {"decision": "stop"}
        assert led.frame("nobody").height == 0


def test_empty_ledger_frame_is_typed() -> None:
    with Ledger() as led:
        df = led.frame()
    assert df.height == 0 and dict(df.schema) == frame_schema()
    assert df.schema["wall_seconds"] == pl.Float64 and df.schema["round"] == pl.Int64


def test_to_parquet_round_trips(tmp_path: Path) -> None:
    with Ledger() as led:
        _fill(led)
        out = led.to_parquet(tmp_path / "b.parquet", run_id="b")
        assert out == tmp_path / "b.parquet"
        assert pl.read_parquet(out).equals(led.frame("b"))
        with pytest.raises(LedgerError, match="cannot export ledger"):
            led.to_parquet(tmp_path / "missing" / "x.parquet")


def test_runs_last_round_and_usage_support_resuming(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        _fill(led)
    with Ledger(path) as led:  # a new process would do exactly this
        assert led.runs() == ["a", "b"]
        assert led.last_round("a") == 7 and led.last_round("b") == 2
        assert led.last_round("never") is None
        total = led.usage("a")
        assert (total.tokens, total.calls, total.cost_units) == (30, 3, 3.0)
        assert total.wall_seconds == pytest.approx(0.3)
        assert led.usage() == led.usage("a")  # b's events cost nothing
        assert led.usage(role="executor") == led.usage("a", role="executor") == total
        assert led.usage("a", role="decision") == Usage() == led.usage(role="nobody")
        resumed = led.last_round("b")
        assert resumed is not None
        led.record("b", resumed + 1, "executor", "generate")
        assert led.last_round("b") == 3


def test_new_run_id_is_unique_and_prefixed() -> None:
    ids = {new_run_id("search") for _ in range(200)}
    assert len(ids) == 200 and all(i.startswith("search-") for i in ids)


# -- processes, threads, kill -9 -------------------------------------------------------

_APPENDER = textwrap.dedent(
    """
    import sys
    from labkit.record.ledger import Ledger
    from labkit.core.types import Usage
    path, writer, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    led = Ledger(path)
    for i in range(n):
        led.record(writer, i, "executor", "generate", outputs=f"{writer}-{i}", usage=Usage(tokens=1))
        print(i + 1, flush=True)  # printed only after the commit returned
    """
)


def test_kill_9_between_appends_loses_nothing_recorded(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    proc = subprocess.Popen(
        [PYTHON, "-c", _APPENDER, str(path), "w", "1000000"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    confirmed = 0
    while confirmed < 300:
        line = proc.stdout.readline()
        assert line, "appender died before being killed"
        confirmed = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with Ledger(path) as led:
        events = led.events()
        assert len(events) >= confirmed  # everything it confirmed, maybe one more in flight
        assert [e.round for e in events] == list(range(len(events)))
        assert led.get(events[-1].output_hash) == f"w-{len(events) - 1}"
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_append_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    n = 300
    procs = [
        subprocess.Popen([PYTHON, "-c", _APPENDER, str(path), w, str(n)], stdout=subprocess.DEVNULL, cwd=ROOT)
        for w in ("p1", "p2")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with Ledger(path) as led:
        events = led.events()
        assert len(events) == 2 * n
        assert [e.seq for e in events] == list(range(1, 2 * n + 1))
        for w in ("p1", "p2"):
            assert [e.round for e in led.events(w)] == list(range(n))  # each writer's order kept
        assert led.usage().tokens == 2 * n


def test_threads_can_share_one_ledger() -> None:
    with Ledger() as led:

        def work(name: str) -> None:
            for i in range(100):
                led.record(name, i, "executor", "generate", outputs=f"{name}{i}")

        threads = [threading.Thread(target=work, args=(f"t{k}",)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(led) == 400 and len(led.runs()) == 4


def test_a_writer_holding_the_lock_past_the_timeout_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path, busy_timeout=0.2) as led:
        led.record("r", 0, "executor", "generate")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(LedgerError, match="locked by another writer"):
            led.record("r", 1, "executor", "generate")
        other.execute("ROLLBACK")
        other.close()
        led.record("r", 1, "executor", "generate")
        assert [e.round for e in led.events()] == [0, 1]


# -- full disk, read-only, unwritable ---------------------------------------------------


def test_full_ledger_raises_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    """A full disk simulated with SQLite's max_page_count (the `max_bytes` cap)."""
    path = tmp_path / "l.db"
    recorded: list[Event] = []
    with Ledger(path, max_bytes=64 * 1024) as led:
        with pytest.raises(LedgerError, match=r"is full .*round \d+ was not recorded"):
            for i in range(1000):
                recorded.append(led.record("r", i, "executor", "generate", outputs=f"{i}" * 500))
        assert 0 < len(recorded) < 1000
        assert led.events() == recorded
        assert led.get(recorded[-1].output_hash).startswith(str(len(recorded) - 1))
    with Ledger(path) as led:  # without the cap, the same file takes more
        assert led.events() == recorded
        led.record("r", len(recorded), "executor", "generate")
        assert len(led) == len(recorded) + 1


def test_full_tmpfs_raises_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    """A real full disk: a 128 KiB tmpfs (needs mount rights; skipped without them)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mnt)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + mounted.stderr.decode(errors="replace").strip())
    try:
        recorded: list[Event] = []
        with Ledger(mnt / "l.db") as led:
            with pytest.raises(LedgerError, match="is full"):
                for i in range(1000):
                    recorded.append(led.record("r", i, "executor", "generate", outputs=f"{i}" * 3000))
            assert recorded and led.events() == recorded
        with Ledger(mnt / "l.db", read_only=True) as led:
            assert led.events() == recorded
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_read_only_ledger_reads_but_refuses_appends(tmp_path: Path) -> None:
    path = tmp_path / "odd name #1?.db"  # the read-only URI must quote these
    with Ledger(path) as led:
        _fill(led)
        before = led.events()
    with Ledger(path, read_only=True) as ro:
        assert ro.events() == before
        with pytest.raises(LedgerError, match="opened read-only: event executor/generate"):
            ro.record("a", 9, "executor", "generate")
        with pytest.raises(LedgerError, match="read-only"):
            ro.put("x")
        assert ro.events() == before


def test_ledger_turning_read_only_mid_run_raises_and_keeps_history(tmp_path: Path) -> None:
    """Simulated with PRAGMA query_only on the ledger's own connection (we run as root, so chmod
    would not stop us): the write reaches SQLite and comes back SQLITE_READONLY."""
    with Ledger(tmp_path / "l.db") as led:
        _fill(led)
        before = led.events()
        led._db.execute("PRAGMA query_only = 1")
        with pytest.raises(LedgerError, match=r"is read-only .*was not recorded; events already"):
            led.record("a", 8, "executor", "generate", inputs="lost")
        assert led.events() == before
        led._db.execute("PRAGMA query_only = 0")
        e = led.record("a", 8, "executor", "generate", inputs="lost")  # the blob must be written now
        assert len(led) == len(before) + 1 and led.get(e.input_hash) == "lost"


def test_unopenable_paths_raise_ledger_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="directory .* does not exist"):
        Ledger(tmp_path / "no" / "such" / "l.db")
    with pytest.raises(LedgerError, match="it is a directory"):
        Ledger(tmp_path)
    with pytest.raises(LedgerError, match="read-only: no such file"):
        Ledger(tmp_path / "absent.db", read_only=True)
    with pytest.raises(LedgerError, match="cannot open ledger at /proc"):
        Ledger("/proc/labkit-ledger.db")  # exists, but nothing can be created in it
    junk = tmp_path / "junk.db"
    junk.write_text("not a database " * 200)
    with pytest.raises(LedgerError, match="not a ledger"):
        Ledger(junk)


def test_foreign_or_newer_databases_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(LedgerError, match="not a labkit ledger"):
        Ledger(foreign)
    newer = tmp_path / "newer.db"
    Ledger(newer).close()
    with sqlite3.connect(newer) as raw:
        raw.execute("PRAGMA user_version = 99")
    with pytest.raises(LedgerError, match="schema version 99"):
        Ledger(newer)


def test_closed_ledger_raises_ledger_error() -> None:
    led = Ledger()
    led.close()
    with pytest.raises(LedgerError, match="closed"):
        led.record("r", 0, "executor", "generate")
    with pytest.raises(LedgerError, match="closed"):
        led.events()


@dataclass(frozen=True)
class _Nested:
    label: str
    inner: tuple[Usage, ...]


def test_nested_dataclasses_become_nested_objects() -> None:
    with Ledger() as led:
        e = led.record("r", 0, "model", "generate", evidence=_Nested("x", (Usage(tokens=3),)))
    assert e.evidence_value == {
        "label": "x",
        "inner": [{"tokens": 3, "calls": 0, "wall_seconds": 0.0, "cost_units": 0.0}],
    }


def test_several_processes_can_create_the_same_new_ledger_at_once(tmp_path: Path) -> None:
    # Regression: the second opener of a brand-new file got "database is locked" while the
    # first switched it to WAL (SQLite does not wait on that lock). Race it several times.
    for attempt in range(3):
        path = tmp_path / f"new-{attempt}.db"
        procs = [
            subprocess.Popen(
                [PYTHON, "-c", _APPENDER, str(path), f"w{k}", "1"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for k in range(6)
        ]
        results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
        assert [code for code, _ in results] == [0] * 6, [err[-500:] for _, err in results if err]
        with Ledger(path) as led:
            assert len(led.events()) == 6


# -- read-only storage and someone else's database (issue #10) ---------------------------


def _mount_tmpfs(mnt: Path) -> None:
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    # No skip: without mount rights this test cannot show read-only storage, and says so.
    assert done.returncode == 0, f"this test needs mount rights (root): {done.stderr.strip()}"


def test_read_only_opens_a_wal_ledger_on_read_only_storage(tmp_path: Path) -> None:
    """A WAL ledger on a read-only filesystem: SQLite cannot create the -shm file there."""
    mnt = tmp_path / "ro"
    _mount_tmpfs(mnt)
    try:
        with Ledger(mnt / "l.db") as led:
            _fill(led)
            before = led.events()
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with Ledger(mnt / "l.db", read_only=True) as ro:
            assert ro.events() == before
            assert len(ro) == len(before) and ro.runs()
            stored = [e.output_hash for e in before if e.output_hash]
            assert stored and all(ro.get(h) for h in stored)
            with pytest.raises(LedgerError, match="opened read-only"):
                ro.record("a", 9, "executor", "generate")
        with pytest.raises(LedgerError) as err:  # writing there is refused, and says why
            Ledger(mnt / "l.db")
        assert "read-only" in str(err.value) or "cannot open" in str(err.value)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_read_only_storage_after_a_kill_reads_the_log_or_refuses(tmp_path: Path) -> None:
    """A writer killed with SIGKILL leaves its write-ahead log (and -shm index) behind. On
    read-only storage the ledger still reads in full; if the -shm index is gone, SQLite could
    only read the main file, which lacks the newest events: refuse, never show a stale ledger."""
    mnt = tmp_path / "ro"
    _mount_tmpfs(mnt)
    path = mnt / "l.db"
    try:
        with Ledger(path) as led:
            _fill(led)
        killed = subprocess.run(
            [
                PYTHON,
                "-c",
                textwrap.dedent(f"""
            import os, signal
            from labkit.record.ledger import Ledger
            led = Ledger({str(path)!r})
            led.record("late", 0, "executor", "generate", outputs="after the checkpoint")
            os.kill(os.getpid(), signal.SIGKILL)
        """),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert os.path.getsize(f"{path}-wal") > 0 and os.path.exists(f"{path}-shm")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with Ledger(path, read_only=True) as ro:
            assert ro.runs() == ["a", "b", "late"]
        subprocess.run(["mount", "-o", "remount,rw", str(mnt)], check=True)
        os.remove(f"{path}-shm")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with pytest.raises(LedgerError, match="write-ahead log l.db-wal holds events"):
            Ledger(path, read_only=True)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _fingerprint(path: Path) -> tuple[bytes, list[str]]:
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


def test_foreign_database_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE people (name TEXT)")
        raw.execute("INSERT INTO people VALUES ('ada')")
    raw.close()
    before = _fingerprint(foreign)
    with pytest.raises(LedgerError, match="not a labkit ledger"):
        Ledger(foreign)
    assert _fingerprint(foreign) == before  # same bytes, no -wal/-shm files beside it
    with sqlite3.connect(foreign) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    raw.close()


def test_newer_schema_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as raw:
        raw.execute("CREATE TABLE events (x)")
        raw.execute("PRAGMA user_version = 99")
    raw.close()
    before = _fingerprint(newer)
    with pytest.raises(LedgerError, match="schema version 99"):
        Ledger(newer)
    assert _fingerprint(newer) == before


# -- record_many and frame() through Arrow (issue #17) ----------------------------------


def _specs(n: int) -> list[dict]:
    return [
        dict(
            run_id=f"it's-{i % 3}",
            round=i // 3,
            role="validator",
            kind="verify",
            inputs=f"code {i % 4}",
            outputs=f"out {i}",
            evidence={"ok": i % 2 == 0},
            usage=Usage(tokens=i, calls=1, wall_seconds=0.5, cost_units=0.25),
            detail={"label": f"{i}", "why": 'naïve, "quoted"\nline'},
        )
        for i in range(n)
    ]


def test_record_many_commits_all_events_once_and_returns_them_as_stored(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as led:
        first = led.record("x", 0, "executor", "generate", outputs="before")
        many = led.record_many(_specs(10))
        last = led.record("x", 1, "executor", "generate", outputs="after")
        assert [e.seq for e in many] == list(range(first.seq + 1, first.seq + 11))
        assert last.seq == first.seq + 11
        assert led.events() == [first, *many, last]
        assert all(led.get(e.input_hash) == f"code {k % 4}" for k, e in enumerate(many))
        assert led.record_many([]) == []
    singles = Ledger()
    one_by_one = [singles.record(**s) for s in _specs(10)]
    strip = lambda es: [dataclasses.replace(e, seq=0, started_at=0, ended_at=0) for e in es]  # noqa: E731
    assert strip(many) == strip(one_by_one)  # the same events as record() would store


def test_record_many_checks_every_item_before_writing_anything(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as led:
        _fill(led)
        before = led.events()
        bad = _specs(5)
        bad[3]["round"] = -1
        with pytest.raises(LedgerError, match=r"item 3: round must be a non-negative int.*nothing"):
            led.record_many(bad)
        with pytest.raises(LedgerError, match=r"item 1: unknown arguments \['colour'\]"):
            led.record_many([_specs(1)[0], {**_specs(1)[0], "colour": "red"}])
        with pytest.raises(LedgerError, match=r"item 0: missing \['kind'\]"):
            led.record_many([{"run_id": "r", "round": 0, "role": "x"}])
        with pytest.raises(LedgerError, match="item 0: evidence is not JSON"):
            led.record_many([{**_specs(1)[0], "evidence": object()}])
        assert led.events() == before
    with Ledger(tmp_path / "l.db", read_only=True) as ro, pytest.raises(LedgerError, match="read-only"):
        ro.record_many(_specs(2))


def test_file_frame_matches_the_rows_exactly(tmp_path: Path) -> None:
    """frame() on a file goes through Arrow; it must equal the rows read through Python."""
    path = tmp_path / "odd name #1?.db"
    with Ledger(path) as led:
        assert dict(led.frame().schema) == frame_schema() and led.frame().height == 0
        led.record_many(_specs(30))
        _fill(led)
        for run in (None, "it's-1", "a", "nobody"):
            via_arrow = led.frame(run)
            via_python = pl.DataFrame(
                [
                    tuple(getattr(e, f.name) for f in dataclasses.fields(e))[:-1]
                    + (json.dumps(dict(e.detail), ensure_ascii=False),)
                    for e in led.events(run)
                ],
                schema=frame_schema(),
                orient="row",
            )
            assert dict(via_arrow.schema) == frame_schema()
            assert via_arrow.equals(via_python), run
        assert led.frame("nobody").height == 0
        assert led.frame("it's-1").height == 10
    with Ledger(path, read_only=True) as ro:
        assert ro.frame().height == 37
    led.close()
    with pytest.raises(LedgerError, match="closed"):
        led.frame()


def test_record_many_checks_blobs_already_stored(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        led.put("code 0")  # stored before: shared, not stored twice
    with sqlite3.connect(path) as raw:  # a text filed under another text's hash (a "collision")
        raw.execute("INSERT INTO blobs (hash, text) VALUES (?, ?)", (digest("code 1"), "forged"))
    raw.close()
    with Ledger(path) as led:
        with pytest.raises(LedgerError, match="collision"):
            led.record_many(_specs(12))
        assert len(led) == 0
        ok = [s for s in _specs(12) if s["inputs"] != "code 1"]
        assert len(led.record_many(ok)) == 9 and _blob_count(path) == 2 + 2 + 9  # + code 2, code 3, 9 outputs
        assert {led.get(e.input_hash) for e in led.events()} == {"code 0", "code 2", "code 3"}


def test_read_only_leaves_no_side_files_and_still_reads_a_live_writer(tmp_path: Path) -> None:
    """A closed ledger opened read-only (a recording in the repository) is read as immutable: no
    -wal/-shm files appear beside it. With a writer still holding it (its log present), the
    read-only view reads through the log and sees every committed event."""
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        _fill(led)
        before = led.events()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.db"]
    with Ledger(path, read_only=True) as ro:
        assert ro.events() == before and ro.get(before[0].output_hash) == "v0"
        with pytest.raises(LedgerError, match="opened read-only"):
            ro.record("a", 9, "executor", "generate")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.db"]
    with Ledger(path) as writer:
        late = writer.record("late", 0, "executor", "generate", outputs="not yet checkpointed")
        assert (tmp_path / "l.db-wal").exists()
        with Ledger(path, read_only=True) as ro:
            assert ro.events() == [*before, late]
