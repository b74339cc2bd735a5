"""Known secrets out of text: every error message and ledger row passes through `redact`.

A known secret is the value of an environment variable whose name contains KEY, TOKEN,
SECRET or PASSWORD (at least 8 characters, so a flag like DEBUG_KEY=1 is not one), plus
any value the caller passes (an api_key given as a parameter).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["known_secrets", "redact", "redact_all"]

_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_SHORTEST = 8
_seen: dict[tuple[tuple[bytes, bytes], ...], dict[str, str]] = {}


def known_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret value -> the name it goes by, from the environment (os.environ by default)."""
    if environ is not None:
        return {v: k for k, v in environ.items() if _NAME.search(k) and len(v) >= _SHORTEST}
    # Every ledger row comes here: look the environment up by its exact contents (os.environ's
    # own dict where CPython has one), scan it only when it changed, decode only the hits.
    raw: Mapping[bytes, bytes] = getattr(os.environb, "_data", None) or os.environb
    state = tuple(raw.items())
    found = _seen.get(state)
    if found is None:
        found = {
            v.decode(errors="replace"): k.decode(errors="replace")
            for k, v in state
            if len(v) >= _SHORTEST and _secret_name(k.upper())
        }
        _seen.clear()
        _seen[state] = found
    return dict(found)


def _secret_name(upper: bytes) -> bool:
    return b"KEY" in upper or b"TOKEN" in upper or b"SECRET" in upper or b"PASSWORD" in upper


def redact(
    text: str, extra: Iterable[str | None] = (), environ: Mapping[str, str] | None = None
) -> str:
    """`text` with every known secret replaced by "[redacted NAME]" (longest first)."""
    return redact_all([text], extra, environ)[0]


def redact_all(
    texts: Iterable[str], extra: Iterable[str | None] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """`redact` for several texts, looking the secrets up once."""
    secrets = known_secrets(environ)
    secrets.update({v: "secret" for v in extra if v and len(v) >= _SHORTEST})
    order = sorted(secrets, key=len, reverse=True)
    out = []
    for text in texts:
        for value in order:
            if value in text:
                text = text.replace(value, f"[redacted {secrets[value]}]")
        out.append(text)
    return out
