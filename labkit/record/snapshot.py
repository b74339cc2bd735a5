"""A columnar copy of a ledger file's events, kept beside it, so `Ledger.frame()` reads each event once.

Reading a million events out of SQLite costs seconds of CPU however it is done (SQLite's own
scan of every column alone is about one). Recorded events never change (the ledger is
append-only, by trigger), so `frame()` keeps what it has read as Arrow IPC chunk files in a
folder beside the ledger (``<ledger>.frame/``) and reads from SQLite only the events recorded
after the last chunk.

A chunk ``<after>-<upto>.arrow`` holds every event with after < seq <= upto, exactly as the
plain read returned them. Chunks chain from seq 0, and the chain is trusted only as far as it
agrees with the SQLite file, checked on every read:

- the chunk reads as Arrow IPC with frame()'s exact schema (a torn or foreign file does not);
- its seq column rises strictly, stays above `after` and ends at `upto`;
- its first and last rows equal SQLite's rows with those seqs, column by column;
- the whole chain holds as many rows as SQLite has events with seq <= its end.

Whatever fails is not believed: a chunk that fails ends the chain there (the next ones are read
from SQLite), a count that disagrees discards the chain. So a snapshot that is behind (events
recorded since), torn (a kill or power cut mid-write) or ahead (a ledger restored from an
older copy) changes nothing in what frame() returns, only how much it reads from SQLite.

Writing: only a ledger opened for writing writes chunks, one process at a time (an advisory
lock; a process that finds it held does not wait, it just does not write), and only for a
tail of at least CHUNK_MIN_ROWS events, so small ledgers never get a folder. A chunk is
written under a temporary name, flushed to disk and renamed: a kill leaves the whole file or
none. Past MAX_CHUNKS files the chain is rewritten as one. A chunk that cannot be written (a
read-only folder, a full disk) is skipped: it is a copy, and the ledger stays the record.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labkit.record.rows import frame_schema

if TYPE_CHECKING:
    import polars as pl

__all__ = ["CHUNK_MIN_ROWS", "MAX_CHUNKS", "Chunk", "Snapshot", "folder"]

CHUNK_MIN_ROWS = 50_000  # a shorter tail is read from SQLite each time, not written down
MAX_CHUNKS = 8  # past this many files the chain is merged into one
_NAME = re.compile(r"^(\d{12})-(\d{12})\.arrow$")

RowAt = Callable[[int], "tuple[Any, ...] | None"]  # SQLite's row with this seq, frame() columns
CountUpto = Callable[[int], int]  # SQLite's number of events with seq <= this


def folder(ledger_path: str | Path) -> Path:
    """Where the snapshot of the ledger at `ledger_path` lives: ``<ledger>.frame/`` beside it."""
    p = Path(ledger_path)
    return p.with_name(p.name + ".frame")


@dataclass(frozen=True)
class Chunk:
    """One chunk file: every event with after < seq <= upto."""

    after: int
    upto: int
    path: Path


@dataclass
class Snapshot:
    """The trusted chain of one ledger's snapshot folder, as checked against its SQLite file."""

    where: Path
    chain: list[Chunk]
    frames: list[pl.DataFrame]
    rejected: list[Chunk]  # found wrong on this read: a writer removes them

    @property
    def upto(self) -> int:
        """The last seq the chain holds (0: none); frame() reads the events after it from SQLite."""
        return self.chain[-1].upto if self.chain else 0

    @classmethod
    def load(cls, where: Path, row_at: RowAt, count_upto: CountUpto) -> Snapshot:
        """The chunks in `where` that agree with the ledger (see the module's rules), in seq order."""
        chain: list[Chunk] = []
        frames: list[pl.DataFrame] = []
        rejected: list[Chunk] = []
        on_disk = _chunks(where)
        upto = 0
        while True:
            # the longest chunk that continues the chain and checks out; a torn one gives way
            # to shorter ones covering the same events
            for chunk in sorted((c for c in on_disk if c.after == upto), key=lambda c: -c.upto):
                df = _checked(chunk, row_at)
                if df is None:
                    rejected.append(chunk)
                    continue
                chain.append(chunk)
                frames.append(df)
                upto = chunk.upto
                break
            else:
                break
        if chain and count_upto(upto) != sum(df.height for df in frames):
            rejected += chain  # SQLite holds events the chunks do not: trust none of them
            chain, frames = [], []
        return cls(where, chain, frames, rejected)

    def extend(self, tail: pl.DataFrame) -> None:
        """Write `tail` (the events after `upto`, as read) as the next chunk, merging past MAX_CHUNKS.

        Skipped when another process holds the folder's lock or the folder cannot be written.
        """
        if tail.height == 0:
            return
        import polars as pl

        end = int(tail["seq"][-1])
        with contextlib.suppress(OSError), _lock(self.where) as mine:
            if not mine:
                return
            if len(self.chain) + 1 > MAX_CHUNKS:
                new = Chunk(0, end, self.where / _name(0, end))
                _write(pl.concat([*self.frames, tail], how="vertical", rechunk=False), new.path)
                keep = {new.path}
            else:
                new = Chunk(self.upto, end, self.where / _name(self.upto, end))
                _write(tail, new.path)
                keep = {c.path for c in self.chain} | {new.path}
            # what the new chain makes redundant, and what this read found wrong
            for c in [*_chunks(self.where), *self.rejected]:
                if (c.upto <= end or c in self.rejected) and c.path not in keep:
                    c.path.unlink(missing_ok=True)
            for stale in self.where.glob(".tmp-*"):  # a writer killed mid-write (the lock is ours)
                stale.unlink(missing_ok=True)


def _name(after: int, upto: int) -> str:
    return f"{after:012d}-{upto:012d}.arrow"


def _chunks(where: Path) -> list[Chunk]:
    try:
        names = os.listdir(where)
    except OSError:  # no folder: no snapshot
        return []
    out = []
    for name in names:
        m = _NAME.match(name)
        if m:
            out.append(Chunk(int(m[1]), int(m[2]), where / name))
    return out


def _checked(chunk: Chunk, row_at: RowAt) -> pl.DataFrame | None:
    """The chunk's frame if it passes every check of the module's rules, else None."""
    import polars as pl

    try:
        df = pl.read_ipc(chunk.path)
    except (OSError, pl.exceptions.PolarsError):  # torn, foreign, or removed by a merge meanwhile
        return None
    if dict(df.schema) != frame_schema() or df.height == 0:
        return None
    seq = df["seq"]
    if not (seq[0] > chunk.after and seq[-1] == chunk.upto):
        return None
    if df.height > 1 and not bool((seq.diff().drop_nulls() > 0).all()):
        return None
    first, last = df.row(0), df.row(df.height - 1)
    if row_at(first[0]) != first or row_at(last[0]) != last:
        return None
    return df


def _write(df: pl.DataFrame, path: Path) -> None:
    """Write `df` to `path` whole or not at all: a temporary name, fsync, rename."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        df.write_ipc(tmp, compression="lz4")
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _lock(where: Path) -> Iterator[bool]:
    """Yield True holding the folder's advisory lock, False when another process holds it."""
    where.mkdir(exist_ok=True)
    fd = os.open(where / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock
