"""labkit's own models, registered with litellm as a custom provider named "labkit".

    labkit/smollm2          SmolLM2-135M-Instruct in-process (xllamacpp), no key, no network
    labkit/gguf:<path>      any GGUF file you have, same engine
    labkit/replay[:<path>]  replays a transcript file        (simulated)
    labkit/scripted[:name]  replies from a registered script (simulated)

`litellm()` imports litellm on first use (never at `import labkit`) and registers the
provider once; a labkit error raised inside a provider travels through litellm inside
a carrier exception (`labkit_error`) and comes out unchanged (see labkit.models.failures).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from labkit.core.errors import LabkitError
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
        def completion(self, model: str, messages: list[dict[str, str]], *args: Any,
                       optional_params: dict[str, Any] | None = None, timeout: Any = None,
                       **kwargs: Any) -> Any:  # fmt: skip
            return _serve(lib, model, messages, optional_params or {}, timeout)

        async def acompletion(self, model: str, messages: list[dict[str, str]], *args: Any,
                              optional_params: dict[str, Any] | None = None, timeout: Any = None,
                              **kwargs: Any) -> Any:  # fmt: skip
            if model.startswith(("smollm2", "gguf")):  # blocking engine call: keep the loop free
                return await asyncio.to_thread(
                    _serve, lib, model, messages, optional_params or {}, timeout
                )
            return _serve(lib, model, messages, optional_params or {}, timeout)

    return LabkitProvider()


def _serve(
    lib: Any, model: str, messages: list[dict[str, str]], params: dict[str, Any], timeout: Any
) -> Any:
    backend = model.partition(":")[0]
    seconds = float(getattr(timeout, "read", None) or timeout or 60.0)
    try:
        if backend == "scripted":
            data = replay.scripted(model, messages, params)
        elif backend == "replay":
            data = replay.replay(model, messages, params)
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
