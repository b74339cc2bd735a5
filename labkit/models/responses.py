"""Reading a provider's response: litellm's objects, or a simulated model's dict served in-process.

`labkit.models.gateway` sends a request and hands the response here: `unpack` reads the text,
token counts and first-token log-probabilities; `price_usd` reads litellm's price for it;
`served_locally` answers a simulated model (labkit/scripted, labkit/replay) in this process,
shaped like litellm's response so the same reading applies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

from labkit.core.errors import ReplyFormatError
from labkit.models.call import Request
from labkit.models.providers import serve_local

__all__ = ["price_usd", "served_locally", "unpack"]


def served_locally(req: Request) -> Any:
    """A simulated model's reply, served in this process, shaped like litellm's response."""
    data = serve_local(req.model, [dict(m) for m in req.messages], dict(req.params))
    return _attrs(data)


def _attrs(value: Any) -> Any:
    """A response dict with attribute access (what `unpack` reads from litellm's objects)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _attrs(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_attrs(v) for v in value]
    return value


def unpack(response: Any, req: Request) -> tuple[str, int, int, Mapping[str, float] | None]:
    """(text, prompt tokens, completion tokens, first-token top logprobs) from a litellm response."""
    try:
        choice = response.choices[0]
        text = choice.message.content or ""
    except (AttributeError, IndexError, TypeError):
        raise ReplyFormatError(f"{req.model} returned no message: {str(response)[:200]}") from None
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    lps: Mapping[str, float] | None = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if req.params.get("logprobs") and content:
        first = content[0]
        top = getattr(first, "top_logprobs", None) or [first]
        lps = MappingProxyType({t.token: float(t.logprob) for t in top})
    return text, prompt, completion, lps


def price_usd(response: Any) -> float | None:
    """litellm's USD price for this response (it computes one per call), or None if it has none."""
    usd: Any = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    try:
        usd = float(usd)
    except (TypeError, ValueError):
        return None
    return usd if math.isfinite(usd) and usd > 0 else None
