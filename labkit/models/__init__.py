"""models: every model call goes through one gateway (litellm), with offline providers, a cache and batches.

Loaded on first use: `import labkit.models` imports neither litellm nor any module below.
"""

from labkit.core.lazy import attach

__getattr__, __dir__ = attach(
    __name__,
    {
        "DEFAULT_ENV": "labkit.models.choice",
        "ModelRole": "labkit.models.role",
        "NOMINAL_COST": "labkit.models.call",
        "OFFLINE_DEFAULT": "labkit.models.choice",
        "OptionProbs": "labkit.models.gateway",
        "Request": "labkit.models.call",
        "ResponseCache": "labkit.models.cache",
        "acomplete": "labkit.models.gateway",
        "check_json": "labkit.models.call",
        "choose": "labkit.models.choice",
        "complete": "labkit.models.gateway",
        "is_simulated": "labkit.models.choice",
        "known_models": "labkit.models.choice",
        "label": "labkit.models.choice",
        "option_probs": "labkit.models.gateway",
        "preflight": "labkit.models.choice",
        "problem": "labkit.models.choice",
        "request": "labkit.models.call",
    },
)

__all__ = [
    "DEFAULT_ENV",
    "ModelRole",
    "NOMINAL_COST",
    "OFFLINE_DEFAULT",
    "OptionProbs",
    "Request",
    "ResponseCache",
    "acomplete",
    "check_json",
    "choose",
    "complete",
    "is_simulated",
    "known_models",
    "label",
    "option_probs",
    "preflight",
    "problem",
    "request",
]
