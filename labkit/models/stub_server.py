"""A tiny OpenAI-compatible chat server on 127.0.0.1 with a fixed artificial latency.

For tests, benchmarks and offline demos of the litellm path (remote-model behaviour without
a network): it answers POST /v1/chat/completions after `latency` seconds, counts requests
and the most requests it ever had in flight at once. Loopback only; stops with the `with`
block. Its answers leave in one write with Nagle's algorithm off: headers and body sent in
two small writes would wait on the client's delayed ACK (~40 ms on Linux) and add that to
every request, which is a property of a naive server, not of the client being measured.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubOpenAI:
    """`with StubOpenAI(latency=0.05) as stub:` then call models at api_base=stub.url."""

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
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": len(text.split()),
                "total_tokens": prompt + len(text.split()),
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
            disable_nagle_algorithm = True  # TCP_NODELAY, as real servers set

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                data = json.dumps(stub._answer(body)).encode()
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                self.wfile.write(head.encode() + data)  # headers and body: one write

            def do_GET(self) -> None:  # GET /stats: what the server saw (for another process)
                data = json.dumps({"requests": stub.requests, "max_in_flight": stub.max_in_flight}).encode()
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                self.wfile.write(head.encode() + data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def main(argv: list[str] | None = None) -> None:
    """`python -m labkit.models.stub_server [--latency S]`: serve until killed; prints its URL."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args(argv)
    with StubOpenAI(latency=args.latency) as stub:
        print(stub.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
