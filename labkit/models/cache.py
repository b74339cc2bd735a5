"""A persistent response cache: re-opening a notebook never re-runs a paid model call.

Replies are filed in a SQLite file under the digest of (model, messages, parameters)
(`labkit.models.gateway.Request.key`): change any parameter — temperature, max_tokens, the
schema, a seed — and it is a different entry. `labkit.models.gateway.complete(..., cache=c)`
consults it; a hit comes back with ``Reply.cached=True``, is marked in the ledger and is
still charged to the budget as the original call was. Simulated models are never
cached (they cost nothing and their script may change).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from labkit.core.errors import CacheError
from labkit.core.types import Reply, Usage

CACHE_ENV = "LABKIT_CACHE"  # a file: where replies are cached unless a path is given
BUILD_ENV = "LABKIT_BUILD"  # a folder: where a checkout keeps what it builds (default build/, git-ignored)
FILE_NAME = "model_cache.sqlite"


def default_path() -> Path:
    """Where replies are cached unless a path is given; never relative to the working directory
    (a notebook run from notebooks/ must not write into the repository's source tree).

    $LABKIT_CACHE if set; else, in a source checkout, build/model_cache.sqlite beside data/
    ($LABKIT_BUILD names another folder; build/ is git-ignored); else, for an installed
    package, the user's cache folder ($XDG_CACHE_HOME or ~/.cache)/labkit/model_cache.sqlite.
    """
    from labkit.core.paths import CHECKOUT, INSTALLED

    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    build = os.environ.get(BUILD_ENV, "").strip()
    if build:
        return Path(build).expanduser() / FILE_NAME
    if CHECKOUT.is_dir() and not INSTALLED.is_dir():
        return CHECKOUT.parent / "build" / FILE_NAME
    user = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(user) / "labkit" / FILE_NAME


_SCHEMA = """CREATE TABLE IF NOT EXISTS replies (
    key               TEXT PRIMARY KEY,
    model             TEXT NOT NULL,
    text              TEXT NOT NULL,
    usage             TEXT NOT NULL,
    logprobs          TEXT,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    request           TEXT NOT NULL,
    stored_at         REAL NOT NULL
) WITHOUT ROWID"""


@dataclass(frozen=True)
class CachedReply:
    """A stored reply with the token split of the call that produced it."""

    reply: Reply
    prompt_tokens: int
    completion_tokens: int
    stored_at: float


class ResponseCache:
    """Replies on disk (or ``":memory:"``), keyed by request digest. Safe to share between threads."""

    def __init__(self, path: str | Path | None = None) -> None:
        """`path`: a SQLite file, ":memory:", or None for `default_path()`."""
        self.path = str(default_path() if path is None else path)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 30000")
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(_SCHEMA)
        except (sqlite3.Error, OSError) as e:
            raise CacheError(f"cannot open response cache {self.path}: {e}") from None

    def get(self, key: str) -> CachedReply | None:
        """The entry filed under `key`, or None (counted as a hit or a miss)."""
        with self._lock:
            row = self._db.execute(
                "SELECT model, text, usage, logprobs, prompt_tokens, completion_tokens, stored_at "
                "FROM replies WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        model, text, usage, logprobs, prompt, completion, stored_at = row
        lps = None if logprobs is None else MappingProxyType(json.loads(logprobs))
        reply = Reply(text=text, model=model, usage=Usage(**json.loads(usage)), cached=True, logprobs=lps)
        return CachedReply(reply, prompt, completion, stored_at)

    def put(
        self,
        key: str,
        reply: Reply,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        request: str = "",
    ) -> None:
        """File `reply` under `key` (replacing any older entry). `request` is kept for inspection."""
        row = (
            key,
            reply.model,
            reply.text,
            json.dumps(reply.usage.as_dict()),
            None if reply.logprobs is None else json.dumps(dict(reply.logprobs)),
            prompt_tokens,
            completion_tokens,
            request,
            time.time(),
        )
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as e:
            raise CacheError(f"cannot write to response cache {self.path}: {e}") from None

    def forget(self, key: str) -> bool:
        """Drop one entry; True if there was one."""
        with self._lock:
            return self._db.execute("DELETE FROM replies WHERE key = ?", (key,)).rowcount > 0

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM replies")

    def __len__(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT count(*) FROM replies").fetchone()
        return int(n)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({self.path!r}, hits={self.hits}, misses={self.misses})"


def open_cache(path: str | None = None) -> ResponseCache:
    """The persistent response cache a notebook uses: by default at `default_path()` (build/ beside the
    checkout's data/, or $LABKIT_CACHE / $LABKIT_BUILD), never relative to the working directory: a
    notebook run from notebooks/ must not write into the repository's source tree."""
    return ResponseCache(path or None)
