"""A tiny OpenAI-compatible chat server on 127.0.0.1 with a fixed artificial latency.

For tests and benchmarks of the litellm path (remote-model behaviour without a network):
it answers POST /v1/chat/completions after `latency` seconds, counts requests and the
most requests it ever had in flight at once. Loopback only; stops with the `with` block.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubOpenAI:
    def __init__(self, latency: float = 0.0, reply: str | None = None) -> None:
        self.latency = latency
        self.reply = reply  # None: echo the last message's content
        self.requests = 0
        self.max_in_flight = 0
        self.bodies: list[dict[str, Any]] = []
        self._in_flight = 0
        self._lock = threading.Lock()
        ThreadingHTTPServer.request_queue_size = 256  # a batch opens many connections at once
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self.bodies.append(body)
        try:
            time.sleep(self.latency)
        finally:
            with self._lock:
                self._in_flight -= 1
        messages = body.get("messages") or [{"content": ""}]
        text = self.reply if self.reply is not None else str(messages[-1].get("content", ""))
        prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
        return {
            "id": f"stub-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                      "total_tokens": prompt + len(text.split())},
        }  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                data = json.dumps(stub._answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
