"""Choosing a model, and saying why one cannot be used here (before any call, no network)."""

from __future__ import annotations

import os
from typing import Any

from labkit.core.errors import MissingKey, ModelError, UnknownModel
from labkit.models.providers import BACKENDS, PROVIDER, litellm

DEFAULT_ENV = "LABKIT_MODEL"
OFFLINE_DEFAULT = "labkit/smollm2"

_SIMULATED = ("labkit/scripted", "labkit/replay")


def choose(name: str | None = None, *, default: str) -> str:
    """The model to use: an explicit name, else $LABKIT_MODEL, else the experiment's default."""
    return name or os.environ.get(DEFAULT_ENV, "").strip() or default


def is_simulated(model: str) -> bool:
    """True when the model's replies were written or recorded beforehand (scripted, replay)."""
    return model.startswith(_SIMULATED)


def label(model: str) -> str:
    """The model string as it should appear next to its numbers: simulated ones say so."""
    if model.startswith("labkit/scripted"):
        return f"{model} (simulated: scripted)"
    if model.startswith("labkit/replay"):
        return f"{model} (simulated: replayed transcript)"
    return model


def known_models() -> list[str]:
    """Choices for a model dropdown: $LABKIT_MODEL if set, then labkit's offline models."""
    env = os.environ.get(DEFAULT_ENV, "").strip()
    offline = [OFFLINE_DEFAULT, "labkit/replay", "labkit/scripted"]
    return ([env] if env and env not in offline else []) + offline


# Where well-known providers read their key: a missing key is reported without importing
# litellm first (its import takes seconds, tens of seconds on a loaded machine).
_KEY_ENV = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}  # fmt: skip


def _missing_key(model: str, params: dict[str, Any]) -> str | None:
    """The key variable a well-known provider needs and does not have (None: has it, or unknown)."""
    provider, slash, _ = model.partition("/")
    env = _KEY_ENV.get(provider) if slash else None
    if env is None or params.get("api_key") or params.get("api_base"):
        return None
    if os.environ.get(env, "").strip() or os.environ.get(f"{provider.upper()}_API_BASE"):
        return None
    return env


# Only code can pass a key as a parameter; a page shows the message without this sentence.
PYTHON_HINT = " (From Python code, passing api_key=... to the call works too.)"


def missing_key_message(model: str, envs: list[str]) -> str:
    """Which variable a model needs and how to set it: in the shell that starts labkit, or an offline model."""
    names = " and ".join(envs)
    exports = " ".join(f"export {e}=<your key>;" for e in envs)
    return (
        f"model {model!r} needs {names}, which is not set. Set it in the shell that starts labkit "
        f"and start again: `{exports} ./run lab` (or the labkit command you ran); or use an offline "
        f"model: `export {DEFAULT_ENV}=labkit/smollm2`.{PYTHON_HINT}"
    )


def preflight(model: str, **params: Any) -> None:
    """Raise UnknownModel or MissingKey if `model` cannot be called as configured (no network)."""
    if not isinstance(model, str) or not model.strip():
        raise UnknownModel(f"model must be a non-empty string, got {model!r}")
    if model.startswith(PROVIDER + "/"):
        backend = model[len(PROVIDER) + 1 :].partition(":")[0]
        if backend not in BACKENDS:
            raise UnknownModel(
                f"unknown labkit model {model!r}; labkit offers labkit/smollm2, labkit/gguf:<path>, "
                "labkit/replay[:<transcript>] and labkit/scripted[:<name>]"
            )
        return
    env = _missing_key(model, params)
    if env is not None:
        raise MissingKey(missing_key_message(model, [env]))
    lib = litellm()
    try:
        lib.get_llm_provider(model)
    except Exception:
        raise UnknownModel(
            f"litellm knows no provider for model {model!r}; write it as '<provider>/<model>' "
            "(e.g. openai/gpt-4o-mini) or use an offline model such as labkit/smollm2"
        ) from None
    if params.get("api_key") or params.get("api_base"):
        return  # the caller supplies the credentials (or a local server that needs none)
    try:
        missing = lib.validate_environment(model).get("missing_keys") or []
    except Exception:
        missing = []  # litellm cannot tell for this provider; the call will say
    if missing:
        raise MissingKey(missing_key_message(model, missing))


def problem(model: str, **params: Any) -> str | None:
    """Why `model` cannot be used here (unknown, key missing, engine not installed), or None.

    For a notebook that falls back visibly: show the reason next to the fallback. An
    unreachable server only shows on the first call (ModelUnavailable).
    """
    try:
        preflight(model, **params)
    except ModelError as e:
        return str(e)
    if model.startswith(("labkit/smollm2", "labkit/gguf")):
        from labkit.models import smollm2

        _, _, path = model.partition(":")
        return smollm2.available(path or params.get("gguf") or None)
    return None


def model_choices(fallback_default: str = OFFLINE_DEFAULT) -> tuple[list[str], str]:
    """(options for a notebook's model dropdown, the default): $LABKIT_MODEL if set, else the offline model."""
    default = choose(None, default=fallback_default)
    options = known_models()
    return ([default] if default not in options else []) + options, default
