"""The reflector role backed by a model: evidence in, one hypothesis + one patch out.

The model (any litellm model string, or labkit's offline replay of an authored
transcript) is asked for a JSON reflection record plus a unified diff. Nothing it says is
trusted: a reply that is not JSON, a record missing a required part, evidence it did not
see, or a diff that does not apply becomes a recorded, explained failure of that round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.errors import ModelError, ModelTimeout, ReplyFormatError
from labkit.core.types import Patch, Reply, Usage
from labkit.loop.engine.probe import Experiment
from labkit.loop.engine.reflection import Experience, check_record, parse_json_reply
from labkit.loop.engine.strategy import Proposal, Situation
from labkit.models.call import check_json
from labkit.models.role import ModelRole

CALL_FAILED = "model call failed: "  # how a reflection whose model call raised begins its `failure`

SYSTEM = """You are the reflector in a self-correction loop. You never edit code yourself and you never
judge the tests. Read the external evidence (test results from the validator, and any observations),
then answer with ONE JSON object and nothing else, in one of two forms:

1. If the cause is unclear, ask for a discriminating experiment first:
   {"experiment": {"question": "<what the observation will tell apart>", "probe": "<python script that prints it>"}}

2. Otherwise, a reflection record with exactly one falsifiable hypothesis and one minimal patch:
   {"phenomenon": "<what failed, as observed>",
    "evidence_ref": "<the failing test node id (or evidence digest) this is read from>",
    "environment": "<environment version>",
    "hypothesis": {"cause": "<one cause>", "refuted_if": "<observation that would refute it>"},
    "action": "<the single change>",
    "expected": {"acceptance": ["<failing tests that must now pass>"], "protective": ["<tests that must still pass>"]},
    "diff": "<unified diff against the candidate files, paths relative to the candidate root>"}

Never edit test files. Never list several causes: if you cannot choose one, ask for an experiment."""


_TEXT: dict[str, Any] = {"type": "string"}
_TEXTS: dict[str, Any] = {"type": "array", "items": _TEXT}


def _object(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


# The two reply forms of SYSTEM as one JSON Schema: sent as litellm's `response_format` when
# the reflector is constrained (llama.cpp engines decode under it). It fixes the shape only;
# read_reply still checks the content (evidence seen, one cause, a diff that applies).
REPLY_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _object(experiment=_object(question=_TEXT, probe=_TEXT)),
        _object(
            phenomenon=_TEXT,
            evidence_ref=_TEXT,
            environment=_TEXT,
            hypothesis=_object(cause=_TEXT, refuted_if=_TEXT),
            action=_TEXT,
            expected=_object(acceptance=_TEXTS, protective=_TEXTS),
            diff=_TEXT,
        ),
    ]
}
LOCAL_ENGINES = ("labkit/smollm2", "labkit/gguf")  # decode under a schema in-process

DISTILL_SYSTEM = (
    "Distill one reusable, conditioned lesson as ONE JSON object with the keys lesson, condition, "
    "failure_mode, signal, strategy, counterexample, source, version (each a non-empty string), "
    "expires (a sentence, an ISO date, or {on_version_change, after}), rejected (a list of "
    "{claim, why_wrong}) and, optionally, requires ({condition: true/false})."
)
_NONEMPTY: dict[str, Any] = {"type": "string", "minLength": 1}

# The distilled lesson (`Experience.from_mapping`'s input) as a JSON Schema: sent like
# REPLY_SCHEMA when the reflector is constrained, and every distill reply is checked against it
# (a malformed one is a ReplyFormatError carrying what the call spent, never a half-read lesson).
DISTILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{k: _NONEMPTY for k in ("lesson", "condition", "failure_mode", "signal", "strategy",
                                  "counterexample", "source", "version")},
        "expires": {"anyOf": [_TEXT, {
            "type": "object",
            "properties": {"on_version_change": {"type": "boolean"},
                           "after": {"anyOf": [_TEXT, {"type": "null"}]}},
            "additionalProperties": False,
        }]},
        "rejected": {"type": "array", "maxItems": 3, "items": {
            "type": "object", "properties": {"claim": _NONEMPTY, "why_wrong": _NONEMPTY},
            "required": ["claim", "why_wrong"], "additionalProperties": False,
        }},
        "requires": {"type": "object", "additionalProperties": {"type": "boolean"}},
    },
    "required": ["lesson", "condition", "failure_mode", "signal", "strategy", "counterexample",
                 "source", "version", "expires", "rejected"],
    "additionalProperties": False,
}  # fmt: skip


def situation_prompt(s: Situation, environment: str) -> str:
    """The user message: environment, evidence table, observations, rejected hypotheses, candidate."""
    lines = [
        f"Environment: {environment}",
        f"Round {s.round}. Evidence {s.verdict.evidence.digest}:",
    ]
    for r in s.verdict.evidence.results:
        msg = f" — {r.message.splitlines()[0][:200]}" if r.message else ""
        lines.append(f"  {r.outcome.upper():7} {r.nodeid}{msg}")
        if r.outcome == "error" and "\n" in r.message:  # a collection/import error: its traceback
            lines.append("    " + r.message.split("\n", 1)[1].replace("\n", "\n    "))
    a, n = s.verdict.score("acceptance")
    p, m = s.verdict.score("protective")
    lines.append(f"Failing acceptance passes {a}/{n}; protective tests pass {p}/{m}.")
    for o in s.observations:
        lines.append(f"Observation for '{o.experiment.question}':\n{o.output}")
    if s.rejected:
        lines.append("Hypotheses already tried and rolled back: " + "; ".join(s.rejected))
    for path, text in s.candidate.files.items():
        lines.append(f"--- candidate file {path} ---\n{text}")
    return "\n".join(lines)


@dataclass(frozen=True, kw_only=True)
class ModelReflector(ModelRole):
    """A reflector that asks a model (or replays a transcript) for a record + diff. Its calls
    go through `ModelRole.ask` (role "model": the engine's Role.REFLECTOR is the strategy's
    own events, not the model call's)."""

    environment: str = ""
    transcript: Path | None = None  # for labkit/replay: the authored/recorded transcript file
    branch: str = "main"  # replay key prefix: which authored storyline to follow
    max_tokens: int = 1024
    timeout: float = 60.0  # seconds to wait for one reply; a reply cut off there is kept as `raw`
    extra: dict[str, Any] = field(default_factory=dict)
    # Ask for REPLY_SCHEMA as a decoding constraint. None: only for labkit's llama.cpp engines
    # (SmolLM2, labkit/gguf:...); scripted and replayed transcripts keep their replies as authored.
    constrained: bool | None = None

    @property
    def uses_schema(self) -> bool:
        if self.constrained is not None:
            return self.constrained
        return self.model.startswith(LOCAL_ENGINES)

    @property
    def name(self) -> str:
        if self.transcript is not None and self.simulated:
            return f"scripted ({Path(self.transcript).name}, {self.branch})"
        return self.model

    def _call(self, messages: list[dict[str, str]], key: str, schema: dict[str, Any]) -> Reply:
        """One call, under `schema` when constrained (the gateway then checks the reply and
        raises ReplyFormatError carrying the reply and its usage)."""
        params: dict[str, Any] = {"timeout": self.timeout, **self.extra}
        if self.transcript is not None:
            params.update(transcript=str(self.transcript), replay_key=f"{self.branch}/{key}")
        return self.ask(
            messages,
            max_tokens=self.max_tokens,
            temperature=0.0,
            json_schema=schema if self.uses_schema else None,
            **params,
        )

    def _ask(self, messages: list[dict[str, str]], key: str) -> tuple[str, Usage]:
        try:
            reply = self._call(messages, key, REPLY_SCHEMA)
        except ReplyFormatError as e:  # not the shape asked for: read_reply names what is wrong
            return e.reply, e.usage or Usage(calls=1)
        return reply.text, reply.usage

    def propose(self, situation: Situation) -> Proposal:
        """The strategy seam: reflect with the visible evidence (one record + one patch)."""
        return self.reflect(situation)

    def messages(self, situation: Situation) -> list[dict[str, str]]:
        """The chat messages `reflect` sends for `situation`: the system prompt and the evidence."""
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": situation_prompt(situation, self.environment)},
        ]

    def reflect(self, situation: Situation) -> Proposal:
        key = f"round-{situation.round}" + (f"/obs-{len(situation.observations)}" if situation.observations else "")
        try:
            text, usage = self._ask(self.messages(situation), key)
        except ModelError as exc:  # a timeout keeps the reply received so far, shown raw
            partial = exc.partial if isinstance(exc, ModelTimeout) else ""
            return Proposal(failure=CALL_FAILED + str(exc), raw=partial)
        return read_reply(text, situation, usage)

    def distill(self, trace_summary: str) -> Experience:
        """Ask for the conditioned lesson of a verified correction (five fields + provenance).

        The reply must match DISTILL_SCHEMA (decoded under it when constrained): otherwise a
        ReplyFormatError with the raw reply and the call's usage (it was paid for) is raised.
        """
        messages = [
            {"role": "system", "content": DISTILL_SYSTEM},
            {"role": "user", "content": trace_summary},
        ]
        reply = self._call(messages, "distill", DISTILL_SCHEMA)
        try:
            data = parse_json_reply(reply.text)
            check_json(json.dumps(data), DISTILL_SCHEMA)  # also for replies not decoded under it
            return Experience.from_mapping(data)
        except ReplyFormatError as e:
            raise ReplyFormatError(f"distilled lesson: {e}", reply.text, reply.usage) from e


def read_reply(text: str, situation: Situation, usage: Usage | None = None) -> Proposal:
    """Turn a reply into a Proposal, or a Proposal whose `failure` says exactly what is wrong."""
    usage = usage or Usage()
    try:
        data = parse_json_reply(text)
    except ReplyFormatError as exc:
        # Read prose as a free-text record, so "check the code logic" is told what it lacks.
        try:
            check_record(text)
        except ReplyFormatError as gaps:
            return Proposal(failure=f"{exc}; as a free-text record it is {gaps}", raw=text, usage=usage)
        return Proposal(failure=str(exc), raw=text, usage=usage)
    exp = data.get("experiment")
    if isinstance(exp, dict):
        question, probe = exp.get("question"), exp.get("probe")
        if isinstance(question, str) and isinstance(probe, str) and probe.strip():
            return Proposal(experiment=Experiment(question, probe), raw=text, usage=usage)
        return Proposal(
            failure="experiment request needs a 'question' and a non-empty 'probe'",
            raw=text,
            usage=usage,
        )
    try:
        record = check_record(data, raw=text)
    except ReplyFormatError as exc:
        return Proposal(failure=str(exc), raw=text, usage=usage)
    known = {
        situation.verdict.evidence.digest,
        *(r.nodeid for r in situation.verdict.evidence.results),
        *(o.digest for o in situation.observations),
    }
    refs = [r.strip() for r in record.evidence_ref.split(",")]
    if not all(r in known for r in refs):
        return Proposal(
            record=record,
            raw=text,
            usage=usage,
            failure=f"evidence_ref {record.evidence_ref!r} names no evidence the validator produced",
        )
    diff = data.get("diff")
    if not isinstance(diff, str) or not diff.strip():
        return Proposal(record=record, raw=text, usage=usage, failure="record has no 'diff': no patch to apply")
    return Proposal(record=record, patch=Patch(diff, description=record.action), raw=text, usage=usage)
