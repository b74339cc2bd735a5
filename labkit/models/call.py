"""One chat completion as it is sent (checked and frozen before it goes), and the check of a JSON reply.

A `Request` is everything a call sends (model, messages, litellm parameters, timeout), the
key a cached reply is filed under, and the upper bound reserved from a budget before it runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from labkit.core.errors import ModelError, ReplyFormatError, UnknownModel
from labkit.core.types import Usage, digest
from labkit.models.providers import PROVIDER, litellm

NOMINAL_COST = 1.0  # cost units per call when litellm has no price for the model
NOT_IN_KEY = frozenset({"timeout", "api_key", "num_retries", "max_retries"})
_PROMPT_OVERHEAD = 64  # tokens a chat template may add (system prompt, role markers)
_PER_MESSAGE = 8


@dataclass(frozen=True)
class Request:
    """One chat completion, fully described: what is sent, and the key it is cached under."""

    model: str
    messages: tuple[Mapping[str, str], ...]
    params: Mapping[str, Any]  # everything litellm gets besides model, messages, timeout
    timeout: float
    json_schema: Mapping[str, Any] | None = None

    @property
    def key(self) -> str:
        """Digest of (model, messages, parameters): what a cached reply is filed under."""
        shown = {k: v for k, v in self.params.items() if k not in NOT_IN_KEY}
        payload = [self.model, [dict(m) for m in self.messages], shown]
        return digest(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=repr))

    @property
    def is_labkit(self) -> bool:
        return self.model.startswith(PROVIDER + "/")

    def kwargs(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "timeout": self.timeout,
            **self.params,
        }

    def upper(self) -> Usage:
        """An upper bound on what this call can use, reserved before it runs."""
        text = sum(len(m["content"].encode()) for m in self.messages)  # a token is >= 1 byte
        prompt = text + _PER_MESSAGE * len(self.messages) + _PROMPT_OVERHEAD
        completion = int(self.params.get("max_tokens", 0))
        price = None if self.is_labkit else _price(self.model, prompt, completion)
        return Usage(prompt + completion, 1, self.timeout * 1.25 + 5.0, price or NOMINAL_COST)


def request(
    model: str,
    messages: Sequence[Mapping[str, str]],
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    timeout: float = 60.0,
    logprobs: bool = False,
    top_logprobs: int = 0,
    json_schema: Mapping[str, Any] | None = None,
    grammar: str | None = None,
    **params: Any,
) -> Request:
    """Check and freeze one call's arguments (ModelError names what is wrong)."""
    if not isinstance(model, str) or not model.strip():
        raise UnknownModel(f"model must be a non-empty string, got {model!r}")
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence) or not messages:
        raise ModelError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    frozen = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise ModelError(f"messages[{i}] must be a dict with string 'role' and 'content', got {m!r}")
        frozen.append(MappingProxyType({str(k): v for k, v in m.items()}))
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ModelError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        raise ModelError(f"timeout must be a positive number of seconds, got {timeout!r}")
    sent: dict[str, Any] = {"max_tokens": max_tokens, "temperature": float(temperature)}
    if not model.startswith(PROVIDER + "/"):
        sent.update(num_retries=0, max_retries=0)  # one call is one call: no silent retries
    if logprobs or top_logprobs:
        sent["logprobs"] = True
    if top_logprobs:
        sent["top_logprobs"] = int(top_logprobs)
    if "response_format" in params:  # litellm-style: sent on as given, its schema checked
        if json_schema is not None:
            raise ModelError("give json_schema or response_format, not both")
        json_schema = schema_of(params["response_format"])
    elif json_schema is not None:
        if not isinstance(json_schema, Mapping):
            raise ModelError(f"json_schema must be a JSON Schema dict, got {type(json_schema).__name__}")
        sent["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": dict(json_schema), "strict": True},
        }
    if grammar is not None:
        if model.startswith(PROVIDER + "/"):
            sent["grammar"] = grammar
        else:  # llama.cpp-style servers read it from the request body
            sent["extra_body"] = {**params.pop("extra_body", {}), "grammar": grammar}
    sent.update(params)
    return Request(model, tuple(frozen), MappingProxyType(sent), float(timeout), json_schema)


def schema_of(response_format: Any) -> Mapping[str, Any]:
    """The JSON Schema inside a litellm/OpenAI `response_format` (type json_schema or json_object).

    A json_object request becomes the schema {"type": "object"}; the gateway sends every
    schema on as the same `response_format` a real provider reads, and checks the reply.
    """
    if not isinstance(response_format, Mapping):
        raise ModelError(f"response_format must be a dict, got {type(response_format).__name__}")
    kind = response_format.get("type")
    if kind == "json_object":
        return {"type": "object"}
    inner = response_format.get("json_schema")
    if kind != "json_schema" or not isinstance(inner, Mapping) or not isinstance(inner.get("schema"), Mapping):
        raise ModelError(
            "response_format must be {'type': 'json_schema', 'json_schema': {'name': ..., "
            "'schema': {...}}} or {'type': 'json_object'}, "
            f"got {dict(response_format)!r}"
        )
    return inner["schema"]


def check_json(text: str, schema: Mapping[str, Any]) -> Any:
    """Parse `text` as JSON and check it against `schema`; ReplyFormatError (with the text) if not."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReplyFormatError(f"reply is not JSON ({e.msg} at char {e.pos}): {text[:80]!r}", reply=text) from None
    import jsonschema  # a litellm dependency; imported only when a schema is checked

    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise ReplyFormatError(f"reply JSON does not match the schema at {where}: {e.message}", reply=text) from None
    except jsonschema.SchemaError as e:
        raise ModelError(f"json_schema is not a valid JSON Schema: {e.message}") from None
    return value


def _price(model: str, prompt: int, completion: int) -> float | None:
    try:
        a, b = litellm().cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
    except Exception:
        return None
    usd = float(a) + float(b)
    return usd if math.isfinite(usd) and usd > 0 else None
