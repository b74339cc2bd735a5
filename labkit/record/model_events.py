"""Detail shapes of the model gateway's events: a call (GENERATE) and a failed call (ERROR),
recorded under the calling model-backed role's own name (labkit.record.vocabulary.MODEL_CALLS).
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ModelCallDetail", "ModelErrorDetail"]


class ModelCallDetail(TypedDict, total=False):
    """A model call the gateway recorded (GENERATE by the calling model-backed role)."""

    model: str
    simulated: bool
    cached: bool
    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # litellm's price, when it knows one
    key: str  # the response cache's key
    params: dict[str, object]  # the call's parameters as sent (keys and secrets excluded)
    original_wall_seconds: float  # a cache hit: how long the original call took


class ModelErrorDetail(TypedDict, total=False):
    """A failed model call the gateway recorded (ERROR by the calling model-backed role)."""

    model: str
    error: str  # the labkit error's class name
    message: str
    key: str
    params: dict[str, object]
