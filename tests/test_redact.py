"""Known secrets never reach an error message or a ledger row (the key-canary paths outside the sandbox)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from labkit.core.redact import known_secrets, redact
from labkit.record.ledger import Ledger

CANARY = "sk-canary-ledger-48d2a1"


def test_redact_replaces_secret_values_by_their_names() -> None:
    env = {"OPENAI_API_KEY": CANARY, "GH_TOKEN": "ghp_0123456789", "DEBUG_KEY": "1", "HOME": "/r"}
    assert known_secrets(env) == {CANARY: "OPENAI_API_KEY", "ghp_0123456789": "GH_TOKEN"}
    text = f"401: Incorrect API key provided: {CANARY}; token ghp_0123456789; debug 1; /r"
    assert redact(text, environ=env) == (
        "401: Incorrect API key provided: [redacted OPENAI_API_KEY]; token [redacted GH_TOKEN]; "
        "debug 1; /r"
    )
    assert redact("key=abcdefgh12", extra=["abcdefgh12"], environ={}) == "key=[redacted secret]"


def test_a_provider_error_that_echoes_the_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    from labkit.core.errors import MissingKey
    from labkit.models.call import Request
    from labkit.models.failures import model_error

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    req = Request("openai/gpt-4o-mini", ({"role": "user", "content": "hi"},), {}, 5.0)
    exc = litellm.AuthenticationError(
        message=f"Incorrect API key provided: {CANARY}", llm_provider="openai", model="gpt-4o-mini"
    )
    err = model_error(exc, req)
    assert isinstance(err, MissingKey)
    assert CANARY not in str(err) and "[redacted OPENAI_API_KEY]" in str(err)


def test_a_ledger_row_never_stores_a_known_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.record("r1", 0, "reflector", "experiment", inputs=f"print({CANARY!r})",
                  outputs=f"key is {CANARY}", detail={"question": f"echo {CANARY}"},
                  evidence={"stderr": CANARY})  # fmt: skip
    ledger.close() if hasattr(ledger, "close") else None
    raw = path.read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.iterdir() if p.name != path.name
    )
    assert CANARY.encode() not in raw
    with sqlite3.connect(path) as db:
        texts = [t for (t,) in db.execute("SELECT text FROM blobs")]
    assert any("[redacted OPENAI_API_KEY]" in t for t in texts)
