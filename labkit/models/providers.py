"""labkit's own models, registered with litellm as a custom provider named "labkit".

    labkit/smollm2          SmolLM2-135M-Instruct in-process (xllamacpp), no key, no network
    labkit/gguf:<path>      any GGUF file you have, same engine
    labkit/replay[:<path>]  replays a transcript file        (simulated)
    labkit/scripted[:name]  replies from a registered script (simulated)

`litellm()` imports litellm on first use (never at `import labkit`) and registers the
provider once; a labkit error raised inside a provider travels through litellm inside
a carrier exception (`labkit_error`) and comes out unchanged (see labkit.models.failures).

The simulated backends (replay, scripted) are local: the gateway serves them in this process
with `serve_local`, without importing litellm, so a notebook that only replays or scripts
never pays litellm's import. Every other model (smollm2, gguf, any real provider) goes
through litellm.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from labkit.core.errors import LabkitError, UnknownModel
from labkit.models import replay

PROVIDER = "labkit"
BACKENDS = ("smollm2", "gguf", "replay", "scripted")

_setup_lock = threading.Lock()


def litellm() -> Any:
    """litellm, imported on first use, with the "labkit" provider registered."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list
    import litellm as lib

    if not any(p.get("provider") == PROVIDER for p in lib.custom_provider_map):
        with _setup_lock:
            if not any(p.get("provider") == PROVIDER for p in lib.custom_provider_map):
                lib.suppress_debug_info = True
                # litellm's own warnings (event-loop changes, cost-map misses) are not the
                # caller's business: failures reach them as labkit errors instead.
                logging.getLogger("LiteLLM").setLevel(logging.ERROR)
                handler: Any = {"provider": PROVIDER, "custom_handler": _provider(lib)}
                lib.custom_provider_map = [*lib.custom_provider_map, handler]
    return lib


def _provider(lib: Any) -> Any:
    """The litellm CustomLLM that routes labkit/<backend> models to their modules."""

    class LabkitProvider(lib.CustomLLM):
        def completion(
            self,
            model: str,
            messages: list[dict[str, str]],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            timeout: Any = None,
            **kwargs: Any,
        ) -> Any:
            return _serve(lib, model, messages, optional_params or {}, timeout)

        async def acompletion(
            self,
            model: str,
            messages: list[dict[str, str]],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            timeout: Any = None,
            **kwargs: Any,
        ) -> Any:
            if model.startswith(("smollm2", "gguf")):  # blocking engine call: keep the loop free
                return await asyncio.to_thread(_serve, lib, model, messages, optional_params or {}, timeout)
            return _serve(lib, model, messages, optional_params or {}, timeout)

    return LabkitProvider()


LOCAL = ("scripted", "replay")  # backends served in-process, without litellm


def is_local(model: str) -> bool:
    """True for labkit/scripted[:name] and labkit/replay[:path]: no litellm needed to serve them."""
    backend = model.removeprefix(PROVIDER + "/").partition(":")[0]
    return model.startswith(PROVIDER + "/") and backend in LOCAL


def serve_local(model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
    """A simulated backend's reply as a chat-completion response dict (labkit errors raised as such)."""
    backend = model.removeprefix(PROVIDER + "/").partition(":")[0]
    if backend == "scripted":
        return replay.scripted(model, messages, params)
    if backend == "replay":
        return replay.replay(model, messages, params)
    raise UnknownModel(f"{model!r} is not a local labkit backend ({', '.join(LOCAL)})")


def _serve(lib: Any, model: str, messages: list[dict[str, str]], params: dict[str, Any], timeout: Any) -> Any:
    backend = model.partition(":")[0]
    seconds = float(getattr(timeout, "read", None) or timeout or 60.0)
    try:
        if backend in LOCAL:
            data = serve_local(model, messages, params)
        else:
            from labkit.models import smollm2

            data = smollm2.chat(model, messages, params, timeout=seconds)
    except LabkitError as e:
        # litellm wraps whatever a custom provider raises; its own exception types pass
        # through unchanged, so the labkit error travels inside one and is unwrapped later.
        carrier = lib.APIError(status_code=500, message=str(e), llm_provider=PROVIDER, model=model)
        carrier.labkit_error = e
        raise carrier from e
    return lib.ModelResponse(**data)
