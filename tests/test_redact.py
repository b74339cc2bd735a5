"""Known secrets never reach an error message or a ledger row (the key-canary paths outside the sandbox)."""

from __future__ import annotations

import base64
import binascii
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote_plus

import pytest

from labkit.core.redact import known_secrets, redact
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

CANARY = "sk-canary-ledger-48d2a1"


def test_redact_replaces_secret_values_by_their_names() -> None:
    env = {"OPENAI_API_KEY": CANARY, "GH_TOKEN": "ghp_0123456789", "DEBUG_KEY": "1", "HOME": "/r"}
    assert known_secrets(env) == {CANARY: "OPENAI_API_KEY", "ghp_0123456789": "GH_TOKEN"}
    text = f"401: Incorrect API key provided: {CANARY}; token ghp_0123456789; debug 1; /r"
    assert redact(text, environ=env) == (
        "401: Incorrect API key provided: [redacted OPENAI_API_KEY]; token [redacted GH_TOKEN]; debug 1; /r"
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


def test_a_ledger_row_never_stores_a_known_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    ledger.record(
        "r1",
        0,
        "reflector",
        "experiment",
        inputs=f"print({CANARY!r})",
        outputs=f"key is {CANARY}",
        detail={"question": f"echo {CANARY}"},
        evidence={"stderr": CANARY},
    )
    ledger.close() if hasattr(ledger, "close") else None
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name != path.name)
    assert CANARY.encode() not in raw
    with sqlite3.connect(path) as db:
        texts = [t for (t,) in db.execute("SELECT text FROM blobs")]
    assert any("[redacted OPENAI_API_KEY]" in t for t in texts)


ENCODED_CANARY = "sk-canary/ledger+b64=7e21c9"  # '/', '+', '=' so URL-encoding changes it


def _disguised(secret: str) -> dict[str, str]:
    """The secret as a candidate that read it would smuggle it out, form by form."""
    raw = secret.encode()
    forms = {"reversed": secret[::-1], "hex": raw.hex(), "HEX": raw.hex().upper(),
             "url": quote(secret, safe=""), "url-plus": quote_plus(secret)}  # fmt: skip
    for prefix in ("", "k=", "key: ", "Bearer "):  # every alignment of the secret in base64
        text = f"{prefix}{secret} (found in /proc)".encode()
        forms[f"base64 {prefix!r}"] = base64.b64encode(text).decode()
        forms[f"urlsafe base64 {prefix!r}"] = base64.urlsafe_b64encode(text).decode()
    return forms


def _recoverable(secret: str, text: str) -> list[str]:
    """Which decodings of `text` give the secret back (independent of labkit's redaction)."""
    found = []
    if secret in text or secret in text[::-1] or secret in unquote_plus(text):
        found.append("plain, reversed or URL-encoded")
    for run in re.findall(r"[0-9a-fA-F]{16,}", text):
        for start in (0, 1):
            chunk = run[start : start + (len(run) - start) // 2 * 2]
            if secret.encode() in bytes.fromhex(chunk):
                found.append(f"hex {run}")
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}={0,2}", text):
        run = run.replace("-", "+").replace("_", "/").rstrip("=")
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) // 4 * 4]
            try:
                if secret.encode() in base64.b64decode(chunk):
                    found.append(f"base64 {run}")
            except binascii.Error:
                pass
    return found


def test_encoded_forms_of_a_secret_are_redacted_in_ledger_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LABKIT_API_TOKEN", ENCODED_CANARY)
    forms = _disguised(ENCODED_CANARY)
    for how, form in forms.items():  # the detector finds every form before redaction
        assert _recoverable(ENCODED_CANARY, f"out: {form} ."), how
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    for i, (how, form) in enumerate(forms.items()):
        ledger.record(
            "r1",
            i,
            Role.REFLECTOR,
            Kind.ERROR,
            inputs="print(leak())",
            outputs=f"{how}: {form}",
            detail={"error": form},
            evidence={"stderr": form},
        )
    with sqlite3.connect(path) as db:
        texts = [t for (t,) in db.execute("SELECT text FROM blobs")]
    stored = "\n".join(texts)
    assert all(how in stored for how in forms)  # every row is there, redacted
    assert _recoverable(ENCODED_CANARY, stored) == []
    for how in ("reversed", "hex", "URL-encoded", "base64"):
        assert f"[redacted LABKIT_API_TOKEN, {how}]" in stored, how
    assert redact(f"no disguise: {ENCODED_CANARY}") == "no disguise: [redacted LABKIT_API_TOKEN]"
