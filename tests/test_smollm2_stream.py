"""SmolLM2's engine streams its replies: a reply cut by the time limit keeps what arrived.

A scripted llama.cpp server stands in for the model (no weights are loaded): it sends one
chunk every 50 ms, as xllamacpp does, and stops as soon as the callback returns True.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from labkit.core.errors import ModelError, ModelTimeout
from labkit.models import smollm2

WORDS = [
    '{"phenomenon": ',
    '"user B ',
    "sees user ",
    "A's price",
    '", "evidence_ref": ',
    '"tests/',
    "test_",
] * 20


class SlowServer:
    """llama.cpp's handle_chat_completions, scripted: one word of a long reply every `pause` s."""

    def __init__(self, pause: float = 0.05, error: str = "") -> None:
        self.pause, self.error = pause, error
        self.sent = 0
        self.told_to_stop = threading.Event()
        self.bodies: list[dict[str, Any]] = []

    def handle_chat_completions(self, body: dict[str, Any], callback: Any = None) -> Any:
        self.bodies.append(body)
        assert callback is not None and body["stream"], "the engine asks for a stream"
        if self.error:
            callback({"error": {"message": self.error}})
            return None
        callback({"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]})
        for word in WORDS:
            time.sleep(self.pause)
            self.sent += 1
            if callback({"choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}):
                self.told_to_stop.set()
                return None
        callback({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        callback(
            {
                "choices": [],
                "usage": {"prompt_tokens": 30, "completion_tokens": len(WORDS)},
                "timings": {"prompt_per_second": 100.0, "predicted_per_second": 20.0},
            }
        )
        return None


def _engine(server: SlowServer) -> smollm2.Engine:
    return smollm2.Engine(
        path=Path("scripted.gguf"), server=server, address="http://127.0.0.1:1", parallel=2, threads=1
    )


def test_a_timed_out_reply_keeps_the_text_received_so_far_and_stops_the_generation() -> None:
    server = SlowServer()
    engine = _engine(server)
    with pytest.raises(ModelTimeout, match=r"within 0.4s \(stopped after \d+ characters") as got:
        engine.chat({"messages": [{"role": "user", "content": "reflect"}], "max_tokens": 500}, timeout=0.4)
    partial = got.value.partial
    assert partial.startswith('{"phenomenon": "user B') and len(partial) < len("".join(WORDS))
    assert partial in {"".join(WORDS[:k]) for k in range(len(WORDS))}  # whole chunks, in order
    assert server.told_to_stop.wait(2), "the generation ran on after the time limit"
    assert server.sent < len(WORDS)
    assert engine.latest is not None and engine.latest.text.startswith(partial)
    engine.close()


def test_a_reply_in_time_is_whole_with_its_usage() -> None:
    engine = _engine(SlowServer(pause=0.0))
    result = engine.chat({"messages": [{"role": "user", "content": "reflect"}]}, timeout=5)
    (choice,) = result["choices"]
    assert choice["message"]["content"] == "".join(WORDS) and choice["finish_reason"] == "stop"
    assert result["usage"]["completion_tokens"] == len(WORDS)
    assert result["timings"]["predicted_per_second"] == 20.0
    engine.close()


def test_an_error_chunk_is_a_model_error() -> None:
    engine = _engine(SlowServer(error="failed to parse grammar"))
    with pytest.raises(ModelError, match="refused the request: failed to parse grammar"):
        engine.chat({"messages": [{"role": "user", "content": "hi"}]}, timeout=5)
    engine.close()


@pytest.fixture
def slow_smollm2(monkeypatch: pytest.MonkeyPatch) -> SlowServer:
    """labkit/smollm2 served by the scripted slow server, and the reflector's limit cut to 0.4 s."""
    import dataclasses

    from labkit.experiments import cache_isolation as cache_case

    if smollm2.available() is not None:  # the fake stands in for the weights, not for the package
        pytest.fail(f"labkit/smollm2 needs its package here: {smollm2.available()}", pytrace=False)
    server = SlowServer()
    key = smollm2.model_path().resolve()
    monkeypatch.setitem(smollm2._engines, key, _engine(server))
    made = cache_case.reflector
    monkeypatch.setattr(cache_case, "reflector", lambda *a, **k: dataclasses.replace(made(*a, **k), timeout=0.4))
    monkeypatch.delenv("LABKIT_MODEL", raising=False)
    return server


@pytest.mark.slow  # imports litellm (tens of seconds on a loaded machine) and runs the validator
def test_the_cache_isolation_page_shows_a_reply_cut_off_by_the_time_limit_raw(
    slow_smollm2: SlowServer,
) -> None:
    """The whole path: loop -> reflector -> gateway -> litellm's labkit provider -> engine, and back."""
    import html

    from labkit.experiments import cache_isolation as cache_case
    from labkit.views import cache_page as page
    from labkit.views.step_card import trace_pages

    lines: list[str] = []
    asked = page.ask_real_model(on_progress=lines.append, every=0.05)
    assert asked.model == "labkit/smollm2" and asked.problem is None and asked.trace is not None
    rounds = asked.trace.rounds
    assert len(rounds) == 2 and all(r.reflection.failure.startswith("model call failed: ") for r in rounds)
    assert all("did not answer within 0.4s" in r.reflection.failure for r in rounds)
    for r in rounds:
        raw = r.reflection.raw
        assert raw.startswith('{"phenomenon": "user B') and raw in {"".join(WORDS[:k]) for k in range(len(WORDS))}
    cards = trace_pages(asked.trace, cache_case.case().suite)
    for card, r in zip(cards[1:], rounds, strict=True):
        assert "Raw reply received before the time limit" in card and "the model was stopped there" in card
        assert html.escape(r.reflection.raw) in card and "<details style='margin:0.4em 0' open>" in card
    assert any("labkit/smollm2 is writing reflection 1 of at most 2" in line and "user B" in line for line in lines)
    assert any("reflection 2 of at most 2" in line for line in lines)
