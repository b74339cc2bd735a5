"""The one door to every model: litellm, with labkit's offline providers registered.

`complete` sends chat messages to any litellm model string ("openai/gpt-4o-mini",
"anthropic/...", "openai/<name>" with api_base= for a local OpenAI-compatible server) or
to labkit's own provider, registered with litellm as a custom provider named "labkit":

    labkit/smollm2          SmolLM2-135M-Instruct in-process (xllamacpp), no key, no network
    labkit/gguf:<path>      any GGUF file you have, same engine
    labkit/replay[:<path>]  replays a transcript file        (simulated)
    labkit/scripted[:name]  replies from a registered script (simulated)

Every call comes back as a `labkit.core.types.Reply` with its usage, lands in the ledger
(kind "generate", or "error" with the message), is paid through the budget (reserve
the upper bound, settle what was used), and may be served from a `ResponseCache`.
Failures are specific labkit errors: UnknownModel, MissingKey (checked before calling),
ModelTimeout, ModelUnavailable, ReplyFormatError (with the raw reply). Nothing already
recorded is lost when a call fails.

Cost units: litellm's price in USD when it knows one for the model, else NOMINAL_COST
per call. litellm itself is imported on first use, never by `import labkit`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from labkit.core.errors import (
    LabkitError,
    MissingKey,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    ReplyFormatError,
    UnknownModel,
)
from labkit.core.types import Reply, Usage, digest
from labkit.models import replay

if TYPE_CHECKING:
    from labkit.models.cache import ResponseCache
    from labkit.record.budget import Budget, Reservation
    from labkit.record.ledger import Ledger

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list

DEFAULT_ENV = "LABKIT_MODEL"
OFFLINE_DEFAULT = "labkit/smollm2"
PROVIDER = "labkit"
NOMINAL_COST = 1.0  # cost units per call when litellm has no price for the model
ADHOC_RUN = "adhoc"  # run id for ledger events of calls made without one

_SIMULATED = ("labkit/scripted", "labkit/replay")
_BACKENDS = ("smollm2", "gguf", "replay", "scripted")
_NOT_IN_KEY = frozenset({"timeout", "api_key", "num_retries", "max_retries"})
_PROMPT_OVERHEAD = 64  # tokens a chat template may add (system prompt, role markers)
_PER_MESSAGE = 8


# -- choosing a model ------------------------------------------------------------------------


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


def preflight(model: str, **params: Any) -> None:
    """Raise UnknownModel or MissingKey if `model` cannot be called as configured (no network)."""
    if not isinstance(model, str) or not model.strip():
        raise UnknownModel(f"model must be a non-empty string, got {model!r}")
    if model.startswith(PROVIDER + "/"):
        backend = model[len(PROVIDER) + 1 :].partition(":")[0]
        if backend not in _BACKENDS:
            raise UnknownModel(
                f"unknown labkit model {model!r}; labkit offers labkit/smollm2, labkit/gguf:<path>, "
                "labkit/replay[:<transcript>] and labkit/scripted[:<name>]"
            )
        return
    litellm = _litellm()
    try:
        litellm.get_llm_provider(model)
    except Exception:
        raise UnknownModel(
            f"litellm knows no provider for model {model!r}; write it as '<provider>/<model>' "
            "(e.g. openai/gpt-4o-mini) or use an offline model such as labkit/smollm2"
        ) from None
    if params.get("api_key") or params.get("api_base"):
        return  # the caller supplies the credentials (or a local server that needs none)
    try:
        missing = litellm.validate_environment(model).get("missing_keys") or []
    except Exception:
        missing = []  # litellm cannot tell for this provider; the call will say
    if missing:
        raise MissingKey(
            f"model {model!r} needs {', '.join(missing)} in the environment; set it, pass "
            f"api_key=..., or choose an offline model (${DEFAULT_ENV}=labkit/smollm2)"
        )


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


# -- a request -------------------------------------------------------------------------------


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
        shown = {k: v for k, v in self.params.items() if k not in _NOT_IN_KEY}
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
        if (
            not isinstance(m, Mapping)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            raise ModelError(
                f"messages[{i}] must be a dict with string 'role' and 'content', got {m!r}"
            )
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
    if json_schema is not None:
        if not isinstance(json_schema, Mapping):
            raise ModelError(
                f"json_schema must be a JSON Schema dict, got {type(json_schema).__name__}"
            )
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


# -- calling ---------------------------------------------------------------------------------


def complete(
    model: str,
    messages: list[dict[str, str]],
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    timeout: float = 60.0,
    logprobs: bool = False,
    top_logprobs: int = 0,
    json_schema: dict[str, Any] | None = None,
    grammar: str | None = None,
    ledger: Ledger | None = None,
    run_id: str = "",
    round: int = 0,
    role: str = "model",
    budget: Budget | None = None,
    cache: ResponseCache | None = None,
    **params: Any,
) -> Reply:
    """One chat completion through litellm, recorded, paid for and (optionally) cached.

    `logprobs`/`top_logprobs` fill `Reply.logprobs` with the first generated token's top
    log-probabilities. `json_schema` asks for JSON matching it and checks the reply
    (ReplyFormatError otherwise); `grammar` is a GBNF grammar for llama.cpp engines.
    Extra `params` go to litellm as they are (seed=, stop=, api_base=, api_key=, and for
    labkit providers replay_key=, transcript=, gguf=). A sampled call (temperature > 0)
    is cached under its parameters: pass seed=i to draw distinct samples.
    """
    req = request(model, messages, max_tokens=max_tokens, temperature=temperature, timeout=timeout,
                  logprobs=logprobs, top_logprobs=top_logprobs, json_schema=json_schema,
                  grammar=grammar, **params)  # fmt: skip
    call = _Call.start(req, ledger, run_id, round, role, budget, cache)
    if call.hit is not None:
        return call.hit
    try:
        response = _litellm().completion(**req.kwargs())
    except BaseException as e:
        err = call.failed(e)
        if err is e:
            raise
        raise err from e
    return call.finish(response)


async def acomplete(
    model: str,
    messages: list[dict[str, str]],
    *,
    ledger: Ledger | None = None,
    run_id: str = "",
    round: int = 0,
    role: str = "model",
    budget: Budget | None = None,
    cache: ResponseCache | None = None,
    **options: Any,
) -> Reply:
    """`complete` for asyncio code (same options, same recording); used by `labkit.models.batch`."""
    req = request(model, messages, **options)
    call = _Call.start(req, ledger, run_id, round, role, budget, cache)
    if call.hit is not None:
        return call.hit
    try:
        response = await _litellm().acompletion(**req.kwargs())
    except BaseException as e:
        err = call.failed(e)
        if err is e:
            raise
        raise err from e
    return call.finish(response)


@dataclass(frozen=True)
class OptionProbs:
    """A judge's next-token preference among a few options (e.g. "A" vs "B")."""

    probs: Mapping[str, float]  # normalised over the options (all 0 if none was seen)
    mass: float  # total probability the model put on the options, 0..1
    reply: Reply

    @property
    def pick(self) -> str:
        """The most probable option ("" when the model put no visible mass on any)."""
        best = max(self.probs, key=lambda o: self.probs[o])
        return best if self.probs[best] > 0 else ""


def option_probs(
    model: str,
    messages: list[dict[str, str]],
    options: Sequence[str] = ("A", "B"),
    *,
    top_logprobs: int = 20,
    **kwargs: Any,
) -> OptionProbs:
    """Next-token probabilities of `options`, read from the first generated token's top-k.

    A token counts for an option if it equals the option after stripping whitespace, so
    " A" and "A" both count. End the messages with a pre-filled assistant turn (e.g.
    "The better answer is") to put the choice exactly at the next token.
    """
    kwargs.setdefault("max_tokens", 1)
    reply = complete(model, messages, logprobs=True, top_logprobs=top_logprobs, **kwargs)
    if reply.logprobs is None:
        raise ReplyFormatError(f"{model} returned no log-probabilities", reply=reply.text)
    raw = dict.fromkeys(options, 0.0)
    for token, lp in reply.logprobs.items():
        t = token.strip()
        if t in raw:
            raw[t] += math.exp(lp)
    mass = sum(raw.values())
    probs = {o: (p / mass if mass > 0 else 0.0) for o, p in raw.items()}
    return OptionProbs(MappingProxyType(probs), min(mass, 1.0), reply)


# -- one call's life: cache, preflight, budget, ledger -----------------------------------------


@dataclass
class _Call:
    req: Request
    ledger: Ledger | None
    run_id: str
    round: int
    role: str
    budget: Budget | None
    cache: ResponseCache | None
    reservation: Reservation | None = None
    started_at: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)
    hit: Reply | None = None

    @classmethod
    def start(
        cls,
        req: Request,
        ledger: Ledger | None,
        run_id: str,
        round: int,
        role: str,
        budget: Budget | None,
        cache: ResponseCache | None,
    ) -> _Call:
        """Serve from the cache, or check the model and reserve the budget for a real call."""
        call = cls(req, ledger, run_id or ADHOC_RUN, round, role, budget,
                   None if is_simulated(req.model) else cache)  # fmt: skip
        _litellm()  # imported (once) before any clock starts
        if call.cache is not None and (entry := call.cache.get(req.key)) is not None:
            call.hit = call._serve_hit(entry.reply, entry.prompt_tokens, entry.completion_tokens)
            return call
        try:
            preflight(req.model, **req.params)
        except ModelError as e:
            call._error(e, Usage())
            raise
        if budget is not None:
            call.reservation = budget.reserve("generate", req.upper(), round=round)
        call.t0 = time.perf_counter()
        return call

    def _serve_hit(self, stored: Reply, prompt_tokens: int, completion_tokens: int) -> Reply:
        # A hit is charged what the original call cost (tokens, calls, cost units), so a
        # budgeted comparison stops at the same point whether or not its calls were cached;
        # only the wall time is the hit's own.
        wall = time.perf_counter() - self.t0
        charge = Usage(stored.usage.tokens, stored.usage.calls, wall, stored.usage.cost_units)
        if self.budget is not None:
            self.budget.settle(self.budget.reserve("generate", charge, round=self.round), charge)
        reply = Reply(stored.text, self.req.model, charge, simulated=False, cached=True,
                      logprobs=stored.logprobs)  # fmt: skip
        self._check_format(reply)
        self._generated(reply, prompt_tokens, completion_tokens, usd=None,
                        detail={"original_wall_seconds": stored.usage.wall_seconds})  # fmt: skip
        return reply

    def failed(self, exc: BaseException) -> BaseException:
        """Settle and record a failed call; return the labkit error to raise (or exc itself)."""
        err = _model_error(exc, self.req) if isinstance(exc, Exception) else exc
        carried = getattr(err, "usage", None)
        used = carried if isinstance(carried, Usage) else None
        wall = time.perf_counter() - self.t0
        if self.budget is not None and self.reservation is not None:
            self.budget.settle(self.reservation, None if used is None else _walled(used, wall),
                               error=f"{type(err).__name__}: {err}")  # fmt: skip
            self.reservation = None
        self._error(err, _walled(used or Usage(calls=1), wall))
        return err

    def finish(self, response: Any) -> Reply:
        """Turn litellm's response into a Reply; settle, record, cache, then check the format."""
        wall = time.perf_counter() - self.t0
        text, prompt, completion, lps = _unpack(response, self.req)
        usd = None if self.req.is_labkit else _cost(response)
        usage = Usage(prompt + completion, 1, wall, usd if usd else NOMINAL_COST)
        reply = Reply(
            text, self.req.model, usage, simulated=is_simulated(self.req.model), logprobs=lps
        )
        if self.budget is not None and self.reservation is not None:
            self.budget.settle(self.reservation, usage)
            self.reservation = None
        if self.cache is not None:
            self.cache.put(self.req.key, reply, prompt_tokens=prompt, completion_tokens=completion,
                           request=json.dumps(self.req.kwargs() | {"api_key": None}, default=repr))  # fmt: skip
        self._check_format(reply)
        self._generated(reply, prompt, completion, usd=usd)
        return reply

    def _check_format(self, reply: Reply) -> None:
        if self.req.json_schema is None:
            return
        try:
            check_json(reply.text, self.req.json_schema)
        except ReplyFormatError as e:
            self._error(e, reply.usage, outputs=reply.text)
            raise

    def _generated(self, reply: Reply, prompt: int, completion: int, *, usd: float | None,
                   detail: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        recorder = replay.active_recorder()
        if recorder is not None:
            recorder.add(self.req.model, self.req.messages, reply,
                         key=str(self.req.params.get("replay_key", "")),
                         prompt_tokens=prompt, completion_tokens=completion)  # fmt: skip
        if self.ledger is None:
            return
        self.ledger.record(
            self.run_id, self.round, self.role, "generate",
            inputs=_messages_text(self.req), outputs=reply.text, usage=reply.usage,
            started_at=self.started_at, ended_at=self.started_at + reply.usage.wall_seconds,
            detail={"model": self.req.model, "simulated": reply.simulated, "cached": reply.cached,
                    "prompt_tokens": prompt, "completion_tokens": completion, "usd": usd,
                    "key": self.req.key, "params": _shown_params(self.req), **(detail or {})},
        )  # fmt: skip

    def _error(self, err: BaseException, usage: Usage, outputs: str | None = None) -> None:
        if self.ledger is None:
            return
        self.ledger.record(
            self.run_id, self.round, self.role, "error",
            inputs=_messages_text(self.req), outputs=outputs, usage=usage,
            started_at=self.started_at, ended_at=max(time.time(), self.started_at),
            detail={"model": self.req.model, "error": type(err).__name__, "message": str(err),
                    "key": self.req.key, "params": _shown_params(self.req)},
        )  # fmt: skip


# -- replies and their format ----------------------------------------------------------------


def check_json(text: str, schema: Mapping[str, Any]) -> Any:
    """Parse `text` as JSON and check it against `schema`; ReplyFormatError (with the text) if not."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReplyFormatError(
            f"reply is not JSON ({e.msg} at char {e.pos}): {text[:80]!r}", reply=text
        ) from None
    import jsonschema  # a litellm dependency; imported only when a schema is checked

    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise ReplyFormatError(
            f"reply JSON does not match the schema at {where}: {e.message}", reply=text
        ) from None
    except jsonschema.SchemaError as e:
        raise ModelError(f"json_schema is not a valid JSON Schema: {e.message}") from None
    return value


def _unpack(response: Any, req: Request) -> tuple[str, int, int, Mapping[str, float] | None]:
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


def _model_error(exc: Exception, req: Request) -> ModelError:
    """The specific labkit error for whatever litellm (or a labkit provider) raised."""
    carried = getattr(exc, "labkit_error", None)
    if isinstance(carried, ModelError):
        return carried
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, LabkitError):
        return ModelError(str(exc))
    litellm = _litellm()
    where = req.params.get("api_base") or "the provider"
    short = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    err: ModelError
    if isinstance(exc, litellm.Timeout):
        err = ModelTimeout(f"{req.model} did not answer within {req.timeout:g}s ({where})")
    elif isinstance(exc, litellm.AuthenticationError):
        err = MissingKey(f"{req.model}: {where} rejected the API key ({short})")
        _carry(err, Usage(calls=1))
    elif isinstance(exc, litellm.NotFoundError):
        err = UnknownModel(f"{req.model}: {where} does not serve this model ({short})")
        _carry(err, Usage(calls=1))
    elif _is_connection_failure(exc, litellm):
        err = ModelUnavailable(f"{req.model}: could not reach {where} ({short})")
        _carry(err, Usage(calls=1))
    else:
        err = ModelError(f"{req.model}: {type(exc).__name__}: {short}")
    return err


def _is_connection_failure(exc: BaseException, litellm: Any) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(
            seen, ConnectionError | litellm.APIConnectionError | litellm.ServiceUnavailableError
        ):
            return True
        if "Connection error" in str(seen) or "ConnectError" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _carry(err: ModelError, usage: Usage) -> None:
    """Attach what a failed call used, so the budget settles it instead of the whole bound."""
    err.usage = usage  # type: ignore[attr-defined]


def _walled(u: Usage, wall: float) -> Usage:
    return Usage(u.tokens, u.calls, max(u.wall_seconds, wall), u.cost_units)


def _messages_text(req: Request) -> str:
    return json.dumps([dict(m) for m in req.messages], ensure_ascii=False)


def _shown_params(req: Request) -> dict[str, Any]:
    shown = {k: v for k, v in req.params.items() if k not in _NOT_IN_KEY and k != "extra_body"}
    return dict(json.loads(json.dumps(shown, default=repr)))  # whatever a caller passed, as JSON


def _cost(response: Any) -> float | None:
    """litellm's USD price for this response (it computes one per call), or None if it has none."""
    usd: Any = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    try:
        usd = float(usd)
    except (TypeError, ValueError):
        return None
    return usd if math.isfinite(usd) and usd > 0 else None


def _price(model: str, prompt: int, completion: int) -> float | None:
    try:
        a, b = _litellm().cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
    except Exception:
        return None
    usd = float(a) + float(b)
    return usd if math.isfinite(usd) and usd > 0 else None


# -- litellm and the labkit provider -------------------------------------------------------


_setup_lock = threading.Lock()


def _litellm() -> Any:
    """litellm, imported on first use, with the "labkit" provider registered."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    if not any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        with _setup_lock:
            if not any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
                litellm.suppress_debug_info = True
                # litellm's own warnings (event-loop changes, cost-map misses) are not the
                # caller's business: failures reach them as labkit errors instead.
                logging.getLogger("LiteLLM").setLevel(logging.ERROR)
                handler: Any = {"provider": PROVIDER, "custom_handler": _provider(litellm)}
                litellm.custom_provider_map = [*litellm.custom_provider_map, handler]
    return litellm


def _provider(litellm: Any) -> Any:
    """The litellm CustomLLM that routes labkit/<backend> models to their modules."""

    class LabkitProvider(litellm.CustomLLM):
        def completion(self, model: str, messages: list[dict[str, str]], *args: Any,
                       optional_params: dict[str, Any] | None = None, timeout: Any = None,
                       **kwargs: Any) -> Any:  # fmt: skip
            return _serve(litellm, model, messages, optional_params or {}, timeout)

        async def acompletion(self, model: str, messages: list[dict[str, str]], *args: Any,
                              optional_params: dict[str, Any] | None = None, timeout: Any = None,
                              **kwargs: Any) -> Any:  # fmt: skip
            if model.startswith(("smollm2", "gguf")):  # blocking engine call: keep the loop free
                return await asyncio.to_thread(
                    _serve, litellm, model, messages, optional_params or {}, timeout
                )
            return _serve(litellm, model, messages, optional_params or {}, timeout)

    return LabkitProvider()


def _serve(
    litellm: Any, model: str, messages: list[dict[str, str]], params: dict[str, Any], timeout: Any
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
        # through unchanged, so the labkit error travels inside one and is unwrapped above.
        carrier = litellm.APIError(
            status_code=500, message=str(e), llm_provider=PROVIDER, model=model
        )
        carrier.labkit_error = e
        raise carrier from e
    return litellm.ModelResponse(**data)
