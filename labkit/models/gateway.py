"""The one door to every model: `complete` (and `acomplete` for asyncio), recorded, paid, cached.

`complete` sends chat messages to any litellm model string ("openai/gpt-4o-mini",
"anthropic/...", "openai/<name>" with api_base= for a local OpenAI-compatible server) or to
labkit's own models (labkit/smollm2, labkit/gguf:<path>, labkit/replay, labkit/scripted; see
labkit.models.providers). Sync and async share one request path (`_Call`); only the line
that sends differs.

Every call comes back as a `labkit.core.types.Reply` with its usage, lands in the ledger
(kind "generate", or "error" with the message), is paid through the budget (reserve
the upper bound, settle what was used), and may be served from a `ResponseCache`.
Failures are specific labkit errors: UnknownModel, MissingKey (checked before calling),
ModelTimeout, ModelUnavailable, ReplyFormatError (with the raw reply); see
labkit.models.failures. Nothing already recorded is lost when a call fails.

Cost units: litellm's price in USD when it knows one for the model, else NOMINAL_COST
per call. litellm itself is imported on first use, never by `import labkit`, and never for
the simulated models (labkit/scripted, labkit/replay): those are served in this process
(`labkit.models.responses.served_locally`), with the same recording, budget and errors.
`labkit.models.responses` reads every response (text, tokens, log-probabilities, price).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from labkit.core.errors import InvalidSetting, ModelError, ReplyFormatError
from labkit.core.types import Reply, Usage
from labkit.models import replay
from labkit.models.call import NOMINAL_COST, NOT_IN_KEY, Request, check_json, request
from labkit.models.choice import is_simulated, preflight
from labkit.models.failures import model_error
from labkit.models.providers import is_local, litellm
from labkit.models.responses import price_usd, served_locally, unpack
from labkit.record.events import Kind
from labkit.record.model_events import ModelCallDetail
from labkit.record.vocabulary import shape

if TYPE_CHECKING:
    from labkit.models.cache import ResponseCache
    from labkit.record.budget import Budget, Reservation
    from labkit.record.ledger import Ledger

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list

ADHOC_RUN = "adhoc"  # run id for ledger events of calls made without one


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
    log-probabilities. `json_schema` asks for JSON matching it (sent as litellm's
    `response_format`; a `response_format=` given instead is sent on unchanged) and checks
    the reply (ReplyFormatError, carrying the reply and its usage, otherwise); labkit's
    llama.cpp engines (SmolLM2) turn the schema into a decoding constraint. `grammar` is a
    GBNF grammar for llama.cpp engines.
    Extra `params` go to litellm as they are (seed=, stop=, api_base=, api_key=, and for
    labkit providers replay_key=, transcript=, gguf=). A sampled call (temperature > 0)
    is cached under its parameters: pass seed=i to draw distinct samples.
    """
    req = request(
        model,
        messages,
        max_tokens=max_tokens,
        temperature=temperature,
        timeout=timeout,
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        json_schema=json_schema,
        grammar=grammar,
        **params,
    )
    call = _Call.start(req, ledger, run_id, round, role, budget, cache)
    if call.hit is not None:
        return call.hit
    with call.sending():
        response = served_locally(req) if is_local(req.model) else litellm().completion(**req.kwargs())
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
    with call.sending():
        if is_local(req.model):
            response = served_locally(req)
        else:
            response = await litellm().acompletion(**req.kwargs())
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


@dataclass(kw_only=True)
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
        if ledger is not None and shape(role, Kind.GENERATE) is not ModelCallDetail:
            raise InvalidSetting(
                f"role {role!r} is one of the engine's roles (labkit.record.events.Role): a model "
                "call is recorded under its model-backed role's own name, e.g. 'model' or 'judge'"
            )
        call = cls(
            req=req,
            ledger=ledger,
            run_id=run_id or ADHOC_RUN,
            round=round,
            role=role,
            budget=budget,
            cache=None if is_simulated(req.model) else cache,
        )
        if not is_local(req.model):
            litellm()  # imported (once) before any clock starts
        if call.cache is not None and (entry := call.cache.get(req.key)) is not None:
            call.hit = call._serve_hit(entry.reply, entry.prompt_tokens, entry.completion_tokens)
            return call
        try:
            preflight(req.model, **req.params)
        except ModelError as e:
            call._error(e, Usage())
            raise
        if budget is not None:
            call.reservation = budget.reserve(Kind.GENERATE, req.upper(), round=round)
        call.t0 = time.perf_counter()
        return call

    def _serve_hit(self, stored: Reply, prompt_tokens: int, completion_tokens: int) -> Reply:
        # A hit is charged what the original call cost (tokens, calls, cost units), so a
        # budgeted comparison stops at the same point whether or not its calls were cached;
        # only the wall time is the hit's own.
        wall = time.perf_counter() - self.t0
        charge = Usage(stored.usage.tokens, stored.usage.calls, wall, stored.usage.cost_units)
        if self.budget is not None:
            self.budget.settle(self.budget.reserve(Kind.GENERATE, charge, round=self.round), charge)
        reply = Reply(
            text=stored.text, model=self.req.model, usage=charge, simulated=False, cached=True, logprobs=stored.logprobs
        )
        self._check_format(reply)
        self._generated(
            reply,
            prompt_tokens,
            completion_tokens,
            usd=None,
            detail={"original_wall_seconds": stored.usage.wall_seconds},
        )
        return reply

    @contextmanager
    def sending(self) -> Iterator[None]:
        """Around the one line that sends: a failure is settled, recorded and raised as labkit's."""
        try:
            yield
        except BaseException as e:
            err = self.failed(e)
            if err is e:
                raise
            raise err from e

    def failed(self, exc: BaseException) -> BaseException:
        """Settle and record a failed call; return the labkit error to raise (or exc itself)."""
        err = model_error(exc, self.req) if isinstance(exc, Exception) else exc
        carried = getattr(err, "usage", None)
        used = carried if isinstance(carried, Usage) else None
        wall = time.perf_counter() - self.t0
        if self.budget is not None and self.reservation is not None:
            self.budget.settle(
                self.reservation, None if used is None else _walled(used, wall), error=f"{type(err).__name__}: {err}"
            )
            self.reservation = None
        partial = getattr(err, "partial", "") or None  # a timed-out reply's text so far (its hash is kept)
        self._error(err, _walled(used or Usage(calls=1), wall), outputs=partial)
        return err

    def finish(self, response: Any) -> Reply:
        """Turn litellm's response into a Reply; settle, record, cache, then check the format."""
        wall = time.perf_counter() - self.t0
        text, prompt, completion, lps = unpack(response, self.req)
        usd = None if self.req.is_labkit else price_usd(response)
        usage = Usage(prompt + completion, 1, wall, usd if usd else NOMINAL_COST)
        reply = Reply(
            text=text, model=self.req.model, usage=usage, simulated=is_simulated(self.req.model), logprobs=lps
        )
        if self.budget is not None and self.reservation is not None:
            self.budget.settle(self.reservation, usage)
            self.reservation = None
        if self.cache is not None:
            self.cache.put(
                self.req.key,
                reply,
                prompt_tokens=prompt,
                completion_tokens=completion,
                request=json.dumps(self.req.kwargs() | {"api_key": None}, default=repr),
            )
        self._check_format(reply)
        self._generated(reply, prompt, completion, usd=usd)
        return reply

    def _check_format(self, reply: Reply) -> None:
        if self.req.json_schema is None:
            return
        try:
            check_json(reply.text, self.req.json_schema)
        except ReplyFormatError as e:
            e.usage = reply.usage  # the call was made and paid for
            self._error(e, reply.usage, outputs=reply.text)
            raise

    def _generated(
        self, reply: Reply, prompt: int, completion: int, *, usd: float | None, detail: Mapping[str, Any] | None = None
    ) -> None:
        recorder = replay.active_recorder()
        if recorder is not None:
            recorder.add(
                self.req.model,
                self.req.messages,
                reply,
                key=str(self.req.params.get("replay_key", "")),
                prompt_tokens=prompt,
                completion_tokens=completion,
            )
        if self.ledger is None:
            return
        self.ledger.record(
            self.run_id,
            self.round,
            self.role,
            Kind.GENERATE,
            inputs=_messages_text(self.req),
            outputs=reply.text,
            usage=reply.usage,
            started_at=self.started_at,
            ended_at=self.started_at + reply.usage.wall_seconds,
            detail={
                "model": self.req.model,
                "simulated": reply.simulated,
                "cached": reply.cached,
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "usd": usd,
                "key": self.req.key,
                "params": _shown_params(self.req),
                **(detail or {}),
            },
        )

    def _error(self, err: BaseException, usage: Usage, outputs: str | None = None) -> None:
        if self.ledger is None:
            return
        self.ledger.record(
            self.run_id,
            self.round,
            self.role,
            Kind.ERROR,
            inputs=_messages_text(self.req),
            outputs=outputs,
            usage=usage,
            started_at=self.started_at,
            ended_at=max(time.time(), self.started_at),
            detail={
                "model": self.req.model,
                "error": type(err).__name__,
                "message": str(err),
                "key": self.req.key,
                "params": _shown_params(self.req),
            },
        )


# -- recording --------------------------------------------------------------------------------


def _walled(u: Usage, wall: float) -> Usage:
    return Usage(u.tokens, u.calls, max(u.wall_seconds, wall), u.cost_units)


def _messages_text(req: Request) -> str:
    return json.dumps([dict(m) for m in req.messages], ensure_ascii=False)


def _shown_params(req: Request) -> dict[str, Any]:
    shown = {k: v for k, v in req.params.items() if k not in NOT_IN_KEY and k != "extra_body"}
    return dict(json.loads(json.dumps(shown, default=repr)))  # whatever a caller passed, as JSON
