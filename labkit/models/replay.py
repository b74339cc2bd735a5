"""Offline, simulated models: replies from a transcript file or from a script.

Two litellm providers live here (registered by `labkit.models.gateway`), both **simulated** —
whatever they say was written or recorded beforehand, so label their numbers that way:

- ``labkit/replay`` replays a transcript. ``labkit/replay:<path>`` names the file in the
  model string; ``transcript=<path>`` (a call parameter) or ``$LABKIT_TRANSCRIPT`` also do.
- ``labkit/scripted`` replies from a script registered in this process with `script()`:
  a list of replies served in order, or a function of the messages. Meant for tests.

Transcript format: JSON Lines, one reply per line::

    {"key": "round-1", "reply": "A", "usage": {"prompt_tokens": 42, "completion_tokens": 1},
     "logprobs": {"A": -0.1, "B": -2.4}, "model": "labkit/smollm2", "messages": [...]}

Only ``key`` and ``reply`` are required. A request is matched by the explicit
``replay_key=`` it was called with, else by `message_key(messages)` (a digest of the
messages). When a key occurs on several lines, repeated requests get them in file order
and the last one repeats once they run out (`rewind()` starts over). A request with no
line raises `ReplayMiss` naming the key and the file.

`recording(path)` (or ``$LABKIT_RECORD``) turns any real run into such a transcript:
every reply `labkit.models.gateway.complete` returns inside it is appended as one line.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.errors import ModelError, ReplayMiss, ScriptExhausted, TranscriptError
from labkit.core.types import Reply, digest

TRANSCRIPT_ENV = "LABKIT_TRANSCRIPT"
RECORD_ENV = "LABKIT_RECORD"


def message_key(messages: Sequence[Mapping[str, str]]) -> str:
    """The key a request is replayed under when the caller gives none: a digest of its messages."""
    return digest(json.dumps([dict(m) for m in messages], sort_keys=True, ensure_ascii=False))


# -- replies in litellm's (OpenAI's) shape ---------------------------------------------------


def words(text: str) -> int:
    """Simulated token count: one token per whitespace-separated word (at least 1)."""
    return max(1, len(text.split()))


def openai_response(
    model: str,
    text: str,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    logprobs: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """A chat-completion response dict; `logprobs` become the first token's top log-probabilities."""
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": text},
    }
    if logprobs:
        top = sorted(logprobs.items(), key=lambda kv: -kv[1])
        entries = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]
        choice["logprobs"] = {"content": [{**entries[0], "top_logprobs": entries}]}
    return {
        "id": "labkit-" + digest(f"{model}{text}{time.time_ns()}"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# -- transcripts -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Line:
    """One transcript line: the reply to a request with this key."""

    key: str
    reply: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    logprobs: Mapping[str, float] | None = None
    lineno: int = 0


@dataclass
class _Transcript:
    path: Path
    stamp: tuple[int, int]  # (mtime_ns, size): reload when the file changes
    lines: dict[str, list[Line]]
    served: dict[str, int] = field(default_factory=dict)


_transcripts: dict[Path, _Transcript] = {}
_lock = threading.Lock()


def load(path: str | Path) -> dict[str, list[Line]]:
    """Parse a transcript file into key -> lines (in file order). Raises TranscriptError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptError(f"transcript {p} does not exist") from None
    except OSError as e:
        raise TranscriptError(f"transcript {p} cannot be read: {e}") from None
    lines: dict[str, list[Line]] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        line = _parse(raw, p, n)
        lines.setdefault(line.key, []).append(line)
    return lines


def _parse(raw: str, path: Path, n: int) -> Line:
    where = f"{path}:{n}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as e:
        raise TranscriptError(f"{where}: not JSON ({e.msg})") from None
    if not isinstance(obj, dict):
        raise TranscriptError(f"{where}: a line must be a JSON object, got {type(obj).__name__}")
    key, reply = obj.get("key"), obj.get("reply")
    if not isinstance(key, str) or not key:
        raise TranscriptError(f"{where}: 'key' must be a non-empty string")
    if not isinstance(reply, str):
        raise TranscriptError(f"{where}: 'reply' must be a string")
    usage = obj.get("usage") or {}
    counts = [usage.get(k) for k in ("prompt_tokens", "completion_tokens")]
    if not isinstance(usage, dict) or any(c is not None and (not isinstance(c, int) or c < 0) for c in counts):
        raise TranscriptError(f"{where}: 'usage' token counts must be non-negative integers")
    logprobs = obj.get("logprobs")
    if logprobs is not None and not (
        isinstance(logprobs, dict) and all(isinstance(v, int | float) and v <= 0 for v in logprobs.values())
    ):
        raise TranscriptError(f"{where}: 'logprobs' must map tokens to log-probabilities (<= 0)")
    return Line(key=key, reply=reply, prompt_tokens=counts[0], completion_tokens=counts[1], logprobs=logprobs, lineno=n)


def _transcript(path: Path) -> _Transcript:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise TranscriptError(f"transcript {path} does not exist") from None
    stamp = (st.st_mtime_ns, st.st_size)
    t = _transcripts.get(path)
    if t is None or t.stamp != stamp:
        t = _transcripts[path] = _Transcript(path, stamp, load(path))
    return t


def rewind(path: str | Path | None = None) -> None:
    """Serve repeated keys from their first line again (one transcript, or all of them)."""
    with _lock:
        for p, t in _transcripts.items():
            if path is None or p == Path(path).resolve():
                t.served.clear()


def transcript_path(model: str, params: Mapping[str, Any]) -> Path:
    """Which transcript a replay request reads: model suffix > transcript= > $LABKIT_TRANSCRIPT."""
    _, _, suffix = model.partition(":")
    where = suffix or params.get("transcript") or os.environ.get(TRANSCRIPT_ENV, "")
    if not where:
        raise TranscriptError(
            "labkit/replay needs a transcript: use model 'labkit/replay:<path>', "
            f"pass transcript=<path>, or set ${TRANSCRIPT_ENV}"
        )
    return Path(str(where)).resolve()


def replay(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded reply to this request, as a chat-completion response dict."""
    path = transcript_path(model, params)
    key = str(params.get("replay_key") or message_key(messages))
    with _lock:
        t = _transcript(path)
        candidates = t.lines.get(key)
        if not candidates:
            how = "replay_key" if params.get("replay_key") else "messages digest"
            raise ReplayMiss(f"no reply for key {key!r} ({how}) in transcript {path}")
        i = t.served.get(key, 0)
        t.served[key] = i + 1
        line = candidates[min(i, len(candidates) - 1)]
    prompt = (
        line.prompt_tokens if line.prompt_tokens is not None else sum(words(m.get("content", "")) for m in messages)
    )
    completion = line.completion_tokens if line.completion_tokens is not None else words(line.reply)
    return openai_response(
        "replay",
        line.reply,
        prompt_tokens=prompt,
        completion_tokens=completion,
        logprobs=line.logprobs,
    )


# -- scripts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scripted:
    """A scripted reply with optional first-token log-probabilities (for judges)."""

    text: str
    logprobs: Mapping[str, float] | None = None


ScriptFn = Callable[[list[dict[str, str]], dict[str, Any]], "str | Scripted"]
ScriptItem = str | Scripted | BaseException


@dataclass
class _Script:
    name: str
    items: list[ScriptItem] | None = None
    fn: ScriptFn | None = None
    served: int = 0


_scripts: dict[str, _Script] = {}


def script(replies: Iterable[ScriptItem] | ScriptFn, name: str = "default") -> str:
    """Register what ``labkit/scripted:<name>`` replies; returns that model string.

    `replies` is a sequence served in order (strings, `Scripted`, or exceptions to raise —
    e.g. a `labkit.core.errors.ModelTimeout` to exercise an error path), or a function
    ``(messages, params) -> str | Scripted`` called for every request. Registering the
    same name again replaces the script.
    """
    if not name or ":" in name:
        raise ValueError(f"script name must be non-empty and contain no ':', got {name!r}")
    with _lock:
        if callable(replies):
            _scripts[name] = _Script(name, fn=replies)
        else:
            _scripts[name] = _Script(name, items=list(replies))
    return "labkit/scripted" if name == "default" else f"labkit/scripted:{name}"


def scripted(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> dict[str, Any]:
    """The next scripted reply for ``labkit/scripted[:name]``, as a chat-completion response dict."""
    _, _, name = model.partition(":")
    name = name or "default"
    with _lock:
        s = _scripts.get(name)
        if s is None:
            raise ModelError(
                f"no script named {name!r}: register one with labkit.models.replay.script(replies, name={name!r})"
            )
        if s.fn is None:
            assert s.items is not None
            if s.served >= len(s.items):
                raise ScriptExhausted(f"script {name!r} has {len(s.items)} replies; request {s.served + 1} has none")
            item: ScriptItem | str | Scripted = s.items[s.served]
            s.served += 1
        else:
            fn = s.fn
    if s.fn is not None:
        item = fn([dict(m) for m in messages], dict(params))
    if isinstance(item, BaseException):
        raise item
    reply = item if isinstance(item, Scripted) else Scripted(str(item))
    prompt = sum(words(m.get("content", "")) for m in messages)
    return openai_response(
        "scripted",
        reply.text,
        prompt_tokens=prompt,
        completion_tokens=words(reply.text),
        logprobs=reply.logprobs,
    )


# -- recording -------------------------------------------------------------------------------


class TranscriptRecorder:
    """Appends every reply it is given to a transcript file, one JSON line each."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def add(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        reply: Reply,
        *,
        key: str = "",
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
    ) -> Line:
        """Append one line for `reply` (keyed by `key`, else by the messages' digest)."""
        line: dict[str, Any] = {
            "key": key or message_key(messages),
            "reply": reply.text,
            "model": model,
            "messages": [dict(m) for m in messages],
        }
        if prompt_tokens is not None and completion_tokens is not None:
            line["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        if reply.logprobs:
            line["logprobs"] = dict(reply.logprobs)
        text = json.dumps(line, ensure_ascii=False, sort_keys=True)
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
        return _parse(text, self.path, 0)


_recording: ContextVar[TranscriptRecorder | None] = ContextVar("labkit_recording", default=None)
_env_recorders: dict[str, TranscriptRecorder] = {}


@contextmanager
def recording(path: str | Path) -> Iterator[TranscriptRecorder]:
    """Inside this block every reply from `labkit.models.gateway.complete` is appended to `path`."""
    recorder = TranscriptRecorder(path)
    token = _recording.set(recorder)
    try:
        yield recorder
    finally:
        _recording.reset(token)


def active_recorder() -> TranscriptRecorder | None:
    """The recorder of the enclosing `recording()` block, else one for ``$LABKIT_RECORD``, else None."""
    recorder = _recording.get()
    if recorder is not None:
        return recorder
    path = os.environ.get(RECORD_ENV, "")
    if not path:
        return None
    with _lock:
        return _env_recorders.setdefault(path, TranscriptRecorder(path))
