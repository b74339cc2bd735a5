"""What a failed call becomes: the specific labkit error for whatever litellm or a provider raised.

Timeouts -> ModelTimeout, a rejected key -> MissingKey, an unserved model -> UnknownModel, an
unreachable server -> ModelUnavailable, anything else -> ModelError naming the model. Errors
of a call that reached the provider carry `usage` (one call), so the budget settles that
instead of the whole reserved bound.
"""

from __future__ import annotations

from typing import Any

from labkit.core.errors import (
    LabkitError,
    MissingKey,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    UnknownModel,
)
from labkit.core.redact import redact
from labkit.core.types import Usage
from labkit.models.call import Request
from labkit.models.providers import is_local, litellm


def model_error(exc: Exception, req: Request) -> ModelError:
    """The specific labkit error for whatever litellm (or a labkit provider) raised."""
    carried = getattr(exc, "labkit_error", None)
    if isinstance(carried, ModelError):
        return carried
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, LabkitError):
        return ModelError(str(exc))
    where = req.params.get("api_base") or "the provider"
    # A provider may echo the key back: no known secret goes into the message (or the ledger).
    short = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    short = redact(short, extra=[req.params.get("api_key")])
    if is_local(req.model):  # served in this process (scripted, replay): litellm never saw it
        return ModelError(f"{req.model}: {type(exc).__name__}: {short}")
    lib = litellm()
    err: ModelError
    if isinstance(exc, lib.Timeout):
        err = ModelTimeout(f"{req.model} did not answer within {req.timeout:g}s ({where})")
    elif isinstance(exc, lib.AuthenticationError):
        err = MissingKey(f"{req.model}: {where} rejected the API key ({short})")
        _carry(err, Usage(calls=1))
    elif isinstance(exc, lib.NotFoundError):
        err = UnknownModel(f"{req.model}: {where} does not serve this model ({short})")
        _carry(err, Usage(calls=1))
    elif _is_connection_failure(exc, lib):
        err = ModelUnavailable(f"{req.model}: could not reach {where} ({short})")
        _carry(err, Usage(calls=1))
    else:
        err = ModelError(f"{req.model}: {type(exc).__name__}: {short}")
    return err


def _is_connection_failure(exc: BaseException, lib: Any) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionError | lib.APIConnectionError | lib.ServiceUnavailableError):
            return True
        if "Connection error" in str(seen) or "ConnectError" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _carry(err: ModelError, usage: Usage) -> None:
    """Attach what a failed call used, so the budget settles it instead of the whole bound."""
    err.usage = usage  # type: ignore[attr-defined]
