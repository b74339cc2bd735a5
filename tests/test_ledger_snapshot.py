"""frame()'s snapshot (labkit.record.snapshot) changes how much is read from SQLite, never the frame.

Every test compares `frame()` (through the snapshot) with `frame(snapshot=False)` (every row
from SQLite, the plain path) on ledgers holding an event of every declared (role, kind), and
checks through a spy on the SQLite reads that the snapshot was used (or, where it must not be
trusted, was not), so none of them passes on the plain path alone.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import labkit.record.ledger as ledger_module
from labkit.core.types import Usage
from labkit.record import snapshot
from labkit.record.events import BudgetDetail, Kind, Role
from labkit.record.ledger import Ledger
from labkit.record.rows import COLUMNS
from labkit.record.vocabulary import MODEL_CALLS, VOCABULARY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Small chunks, few files; and every SQLite read frame() makes: (its SQL, rows it returned)."""
    monkeypatch.setattr(snapshot, "CHUNK_MIN_ROWS", 5)
    monkeypatch.setattr(snapshot, "MAX_CHUNKS", 3)
    seen: list[tuple[str, int]] = []
    real = ledger_module.arrow_frame

    def spy(uri: str, sql: str) -> pl.DataFrame:
        df = real(uri, sql)
        seen.append((sql, df.height))
        return df

    monkeypatch.setattr(ledger_module, "arrow_frame", spy)
    yield seen


def _fields(cls: type) -> list[str]:
    return sorted({k for base in cls.__mro__ for k in getattr(base, "__annotations__", {})})


def _every_kind(led: Ledger, run: str, start: int = 0) -> int:
    """One event of every declared (role, kind), with every declared detail field; how many."""
    pairs = [(str(r), str(k), cls) for (r, k), cls in VOCABULARY.items()]
    pairs += [("judge", str(k), cls) for k, cls in MODEL_CALLS.items()]  # a model-backed role
    pairs.append((str(Role.BUDGET), str(Kind.GENERATE), BudgetDetail))  # any paid kind
    for i, (role, kind, cls) in enumerate(pairs):
        n = start + i
        detail = {f: [n, f"é{f}", {"x": n / 3}] for f in _fields(cls)}
        led.record(
            run,
            n,
            role,
            kind,
            inputs=None if n % 3 == 0 else f"in {n % 4}",
            outputs=f"out ✓ {n}",
            evidence=None if n % 2 else {"n": n, "text": "a\nb", "none": None},
            usage=Usage(tokens=n, calls=n % 2, wall_seconds=n / 7, cost_units=n * 0.1),
            detail=detail,
        )
    return len(pairs)


def _same(led: Ledger, runs: tuple[str | None, ...] = (None,)) -> pl.DataFrame:
    """frame() equals frame(snapshot=False): schema, order and every value."""
    for run in runs:
        fast, plain = led.frame(run), led.frame(run, snapshot=False)
        assert fast.schema == plain.schema and fast.equals(plain), run
    return led.frame()


def _chunks(path: Path) -> list[str]:
    return sorted(p.name for p in snapshot.folder(path).glob("*.arrow"))


def test_the_snapshot_is_read_and_extended_and_gives_the_plain_frame(
    tmp_path: Path, reads: list[tuple[str, int]]
) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        n = _every_kind(led, "a")
        assert n > 40
        _same(led, (None, "a", "nobody"))
        assert _chunks(path) == [f"000000000000-{n:012d}.arrow"]
        reads.clear()
        _same(led)  # the chunk is trusted: only the events after it come from SQLite
        assert reads[0] == (f"{ledger_module.SELECT} WHERE seq > {n} ORDER BY seq", 0)
        total = n
        for run in ("b", "c", "d", "e"):  # more chunks, merged past MAX_CHUNKS
            total += _every_kind(led, run, start=total)
            _same(led, (None, run, "a"))
            assert 1 <= len(_chunks(path)) <= snapshot.MAX_CHUNKS
        assert _chunks(path)[-1].endswith(f"-{total:012d}.arrow")
        led.record("e", 999, "executor", "generate", outputs="after the last chunk")
        reads.clear()
        assert _same(led).height == total + 1
        assert reads[0][1] == 1  # one event read from SQLite: the rest came from chunks
    with Ledger(path, read_only=True) as ro:
        reads.clear()
        assert _same(ro, (None, "a", "e")).height == total + 1
        assert reads[0] == (f"{ledger_module.SELECT} WHERE seq > {total} ORDER BY seq", 1)


def test_a_small_ledger_gets_no_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        _every_kind(led, "a")
        _same(led, (None, "a"))  # fewer than CHUNK_MIN_ROWS events: nothing written beside it
    assert not snapshot.folder(path).exists()


def _snapshotted(path: Path, runs: int) -> int:
    """Record `runs` runs of every kind, frame() after each (a chunk each); the ledger's length."""
    with Ledger(path) as led:
        for r in range(runs):
            _every_kind(led, f"r{r}", start=len(led))
            led.frame()
        return len(led)


def test_a_torn_chunk_or_a_stray_temporary_file_is_not_trusted(tmp_path: Path, reads: list[tuple[str, int]]) -> None:
    path = tmp_path / "l.db"
    total = _snapshotted(path, 2)
    first, last = _chunks(path)
    where = snapshot.folder(path)
    (where / last).write_bytes((where / last).read_bytes()[:300])  # a power cut mid-write
    (where / ".tmp-1-dead").write_bytes(b"killed mid-write")
    with Ledger(path, read_only=True) as ro:
        reads.clear()
        _same(ro, (None, "r0", "r1"))
        upto = int(first.split("-")[1].split(".")[0])
        assert reads[0] == (f"{ledger_module.SELECT} WHERE seq > {upto} ORDER BY seq", total - upto)
    with Ledger(path) as led:
        _same(led)  # a writer replaces the torn chunk and clears the stray file
    assert _chunks(path) == [first, last] and not list(where.glob(".tmp-*"))
    with Ledger(path, read_only=True) as ro:
        reads.clear()
        _same(ro)
        assert reads[0][1] == 0


def _after(sql: str) -> int:
    """The seq a tail read starts after (0: every row, nothing trusted)."""
    return int(sql.split("WHERE seq > ")[1].split()[0]) if "WHERE seq > " in sql else 0


def test_a_snapshot_ahead_of_its_ledger_or_of_another_ledger_is_not_trusted(
    tmp_path: Path, reads: list[tuple[str, int]]
) -> None:
    path = tmp_path / "l.db"
    _snapshotted(path, 1)
    restored = tmp_path / "restored.db"
    shutil.copy(path, restored)  # a copy of the ledger, taken now ...
    total = _snapshotted(path, 3)  # ... which the snapshot outgrows
    shutil.copytree(snapshot.folder(path), snapshot.folder(restored))
    with Ledger(restored, read_only=True) as ro:
        reads.clear()
        height = _same(ro).height
        assert height < total and _after(reads[0][0]) <= height  # no chunk past its end was used
    with Ledger(restored) as led:
        _same(led)  # a writer removes the chunks it found wrong
    assert all(int(name.split("-")[1].split(".")[0]) <= height for name in _chunks(restored))
    other = tmp_path / "other.db"  # another ledger as long as this one, given its chunks
    with Ledger(other) as led:
        assert sum(_every_kind(led, f"other{r}") for r in range(4)) == total
    shutil.copytree(snapshot.folder(path), snapshot.folder(other))
    with Ledger(other, read_only=True) as ro:
        reads.clear()
        _same(ro)
        assert reads[0] == (f"{ledger_module.SELECT} ORDER BY seq", total)


def test_an_event_filed_inside_the_snapshots_range_discards_the_snapshot(
    tmp_path: Path, reads: list[tuple[str, int]]
) -> None:
    """labkit leaves no gaps in seq, but SQL can file a row with any seq: the chunks' ends still
    match, their count does not, and none of them is trusted."""
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        n = _every_kind(led, "a")
    copy = f"INSERT INTO events SELECT ?, {', '.join(COLUMNS[1:])} FROM events WHERE seq = 1"
    with sqlite3.connect(path) as raw:
        raw.execute(copy, (n + 100,))  # a gap before the last event
    raw.close()
    with Ledger(path) as led:
        _same(led)
    assert _chunks(path) == [f"000000000000-{n + 100:012d}.arrow"]
    with sqlite3.connect(path) as raw:
        raw.execute(copy, (n + 50,))  # filed inside the chunk's range
    raw.close()
    with Ledger(path, read_only=True) as ro:
        reads.clear()
        _same(ro)
        assert reads[0] == (f"{ledger_module.SELECT} ORDER BY seq", n + 2)


_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from labkit.record import snapshot
    snapshot.CHUNK_MIN_ROWS, snapshot.MAX_CHUNKS = 4, 3
    from labkit.core.types import Usage
    from labkit.record.ledger import Ledger

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    path, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    led = Ledger(path)
    for i in range(n + 1):
        if i == n and where == "append":
            led._put = die  # inside the event's transaction, after BEGIN, before its INSERT
        if i == n and where == "chunk":
            os.fsync = die  # the chunk is written under its temporary name, not yet renamed
        led.record("k", i, "executor", "generate", outputs=f"o{i}", usage=Usage(tokens=i))
        if i % 3 == 2 or i == n:
            led.frame()  # a chunk every few events
    """
)


@pytest.mark.parametrize("where", ["append", "chunk"])
def test_a_writer_killed_mid_append_or_mid_chunk_leaves_what_gives_the_plain_frame(
    tmp_path: Path, reads: list[tuple[str, int]], where: str
) -> None:
    path = tmp_path / "l.db"
    before = _snapshotted(path, 1)
    n = 40
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED, str(path), where, str(n)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    stray = list(snapshot.folder(path).glob(".tmp-*"))
    assert len(stray) == (where == "chunk")  # killed mid-write: a temporary file, never renamed
    with Ledger(path, read_only=True) as ro:
        reads.clear()
        frame = _same(ro, (None, "k", "r0"))
        assert frame.height == before + n + (where == "chunk")  # the killed append left nothing
        assert reads[0][1] < 10  # the killed writer's chunks were read, not SQLite's rows
    with Ledger(path) as led:
        _every_kind(led, "after")
        _same(led, (None, "k", "after"))
    assert not list(snapshot.folder(path).glob(".tmp-*"))
