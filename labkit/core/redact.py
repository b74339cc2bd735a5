"""Known secrets out of text: every error message and ledger row passes through `redact`.

A known secret is the value of an environment variable whose name contains KEY, TOKEN,
SECRET or PASSWORD (at least 8 characters, so a flag like DEBUG_KEY=1 is not one), plus
any value the caller passes (an api_key given as a parameter).

This is the last line, not the defence (candidates never get the caller's environment).
Besides each secret as it is, its cheap disguises go too: reversed, hex (either case),
URL-encoded, and base64 (standard and URL-safe). Base64 of a longer text that holds the
secret depends on where the secret starts modulo 3, so each of the three alignments is
matched by the characters that only the secret's bytes determine (the one or two at each
edge, shared with neighbouring bytes, stay). Any other encoding (XOR, a split, ROT13) is
not recognised.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

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


def redact(text: str, extra: Iterable[str | None] = (), environ: Mapping[str, str] | None = None) -> str:
    """`text` with every known secret replaced by "[redacted NAME]" (longest first)."""
    return redact_all([text], extra, environ)[0]


def redact_all(
    texts: Iterable[str], extra: Iterable[str | None] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """`redact` for several texts, looking the secrets up once."""
    secrets = known_secrets(environ)
    secrets.update({v: "secret" for v in extra if v and len(v) >= _SHORTEST})
    labels: dict[str, str] = {}
    for value, name in secrets.items():
        for form, how in _disguises(value):
            labels.setdefault(form, f"[redacted {name}{how}]")
    order = sorted(labels, key=len, reverse=True)
    out = []
    for text in texts:
        for form in order:
            if form in text:
                text = text.replace(form, labels[form])
        out.append(text)
    return out


@functools.lru_cache(maxsize=256)
def _disguises(value: str) -> tuple[tuple[str, str], ...]:
    """(form, how it was disguised) for `value`: itself first, then its encodings."""
    raw = value.encode()
    forms = [(value, ""), (value[::-1], ", reversed"), (raw.hex(), ", hex"),
             (raw.hex().upper(), ", hex"), (quote(value, safe=""), ", URL-encoded"),
             (quote_plus(value), ", URL-encoded")]  # fmt: skip
    for shift in range(3):  # the secret starting at byte 0, 1 or 2 of a base64 group
        encoded = base64.b64encode(bytes(shift) + raw).decode()
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(raw)) // 6]  # secret's bits only
        forms += [(core, ", base64"), (core.replace("+", "-").replace("/", "_"), ", base64")]
    unique = dict(reversed(forms))  # the first disguise named for a form wins
    return tuple((f, unique[f]) for f in dict.fromkeys(f for f, _ in forms) if len(f) >= _SHORTEST)
