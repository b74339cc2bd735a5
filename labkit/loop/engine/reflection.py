"""Reflection records and distilled experience: what a reflection must contain to drive an action.

A record has five required inputs (SPEC §3): the failure phenomenon with a reference to
its evidence, the environment version, one falsifiable hypothesis, a single action, and
an expected verification that protects both goals (the failing acceptance AND the
protective tests). A record missing any of them cannot drive the loop, and `check_record`
says which are missing and what the record degrades to without them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labkit.core.errors import InvalidRecord, ReplyFormatError
from labkit.core.types import Hypothesis

# What a record is without each part (seed 000): evidence -> a guess, hypothesis -> a
# restatement, action -> a complaint, expected verification -> cannot be accepted.
_WITHOUT = {
    "phenomenon": "a guess (no reproducible evidence)",
    "environment": "unauditable (no environment version to reproduce it on)",
    "hypothesis": "a restatement (no falsifiable cause)",
    "action": "a complaint (no single action)",
    "expected": "unacceptable (no expected verification)",
}

# A hypothesis that enumerates causes ("1) … 2) …", bullet lists, "or" chains) is not one hypothesis.
_ENUMERATION = re.compile(r"(?:^|\s)(?:\(?\d+[.)]|[-*•])\s+\S", re.MULTILINE)


@dataclass(frozen=True)
class Expectation:
    """Expected verification: which failing tests should pass, which protective ones must stay green."""

    acceptance: tuple[str, ...]  # the failing acceptance that must now pass
    protective: tuple[str, ...]  # protective tests that must still pass


@dataclass(frozen=True, kw_only=True)
class ReflectionRecord:
    phenomenon: str
    evidence_ref: str  # digest of the Evidence the phenomenon was read from
    environment: str
    hypothesis: Hypothesis
    action: str
    expected: Expectation

    def as_dict(self) -> dict[str, Any]:
        return {
            "phenomenon": self.phenomenon,
            "evidence_ref": self.evidence_ref,
            "environment": self.environment,
            "hypothesis": {
                "cause": self.hypothesis.cause,
                "refuted_if": self.hypothesis.refuted_if,
            },
            "action": self.action,
            "expected": {
                "acceptance": list(self.expected.acceptance),
                "protective": list(self.expected.protective),
            },
        }


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())


def check_record(data: Mapping[str, Any] | str, raw: str = "") -> ReflectionRecord:
    """Validate a record given as a mapping (or free text). Raise InvalidRecord naming every gap.

    Free text such as "check the code logic" is read as a phenomenon with nothing else:
    it lacks the hypothesis, the action and the expected verification.
    """
    if isinstance(data, str):
        raw = raw or data
        data = {"phenomenon": data}
    problems: list[str] = []
    phenomenon = _text(data.get("phenomenon"))
    evidence_ref = _text(data.get("evidence_ref"))
    if not phenomenon:
        problems.append(f"missing phenomenon: the record is {_WITHOUT['phenomenon']}")
    elif not evidence_ref:
        problems.append("phenomenon has no evidence reference (evidence_ref): it is a guess, not evidence")
    if not _text(data.get("environment")):
        problems.append(f"missing environment: the record is {_WITHOUT['environment']}")

    hyp = data.get("hypothesis")
    cause = _text(hyp.get("cause")) if isinstance(hyp, Mapping) else _text(hyp)
    refuted_if = _text(hyp.get("refuted_if")) if isinstance(hyp, Mapping) else ""
    if isinstance(hyp, list) and len(hyp) > 1:
        problems.append(
            f"hypothesis lists {len(hyp)} causes: that is not one hypothesis; run a discriminating experiment first"
        )
        cause = ""
    elif not cause:
        problems.append(f"missing hypothesis: the record is {_WITHOUT['hypothesis']}")
    elif len(_ENUMERATION.findall(cause)) > 1:
        problems.append(
            f"hypothesis enumerates {len(_ENUMERATION.findall(cause))} causes: that is not one hypothesis; "
            "run a discriminating experiment first"
        )
    elif not refuted_if:
        problems.append("hypothesis is not falsifiable: say which observation would refute it (refuted_if)")

    action = _text(data.get("action"))
    if not action:
        problems.append(f"missing action: the record is {_WITHOUT['action']}")

    exp = data.get("expected")
    acceptance = _names(exp.get("acceptance")) if isinstance(exp, Mapping) else ()
    protective = _names(exp.get("protective")) if isinstance(exp, Mapping) else ()
    if not acceptance and not protective:
        problems.append(f"missing expected verification: the record is {_WITHOUT['expected']}")
    elif not protective:
        problems.append("expected verification names no protective test: it must protect both goals")
    elif not acceptance:
        problems.append("expected verification names no failing acceptance test: it must protect both goals")

    if problems:
        raise InvalidRecord(problems, raw)
    return ReflectionRecord(
        phenomenon=phenomenon,
        evidence_ref=evidence_ref,
        environment=_text(data.get("environment")),
        hypothesis=Hypothesis(cause=cause, refuted_if=refuted_if, evidence_ref=evidence_ref),
        action=action,
        expected=Expectation(acceptance=acceptance, protective=protective),
    )


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a model reply (bare, or inside a ```json fence). ReplyFormatError if none."""
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", body, re.DOTALL)
    if fence:
        body = fence.group(1)
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        start, end = body.find("{"), body.rfind("}")
        try:
            value = json.loads(body[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise ReplyFormatError(f"reply is not JSON ({exc.msg} at char {exc.pos})", text) from exc
    if not isinstance(value, dict):
        raise ReplyFormatError(f"reply is JSON but a {type(value).__name__}, not an object", text)
    return value


@dataclass(frozen=True)
class Expiry:
    """When a lesson stops being trusted: on an environment version change, after a date, or both."""

    on_version_change: bool = True
    after: dt.date | None = None

    @classmethod
    def parse(cls, value: Any) -> Expiry:
        """From a mapping {"on_version_change": bool, "after": "YYYY-MM-DD"}, an ISO date, or a
        sentence (kept as the default: the lesson expires when the environment version changes)."""
        if value is None or value == "":
            return cls()
        if isinstance(value, str):
            return cls(after=_date(value)) if _ISO_DATE.fullmatch(value.strip()) else cls()
        if not isinstance(value, Mapping):
            raise ReplyFormatError(f"expires must be a mapping, a date or a sentence, not {type(value).__name__}")
        after = value.get("after")
        return cls(bool(value.get("on_version_change", True)), _date(after) if after else None)

    def describe(self) -> str:
        parts = ["when the environment version changes"] if self.on_version_change else []
        if self.after is not None:
            parts.append(f"after {self.after.isoformat()}")
        return " or ".join(parts) or "never"


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date(value: Any) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError as exc:
        raise ReplyFormatError(f"expires.after must be an ISO date (YYYY-MM-DD), got {value!r}") from exc


@dataclass(frozen=True)
class Applicability:
    """The re-check of a lesson against a new task. `ok` only if every stored condition is a
    known, true fact and the lesson has not expired; even then it is a candidate explanation."""

    ok: bool
    reason: str
    unmet: tuple[str, ...] = ()  # conditions the task's facts say are false
    unknown: tuple[str, ...] = ()  # conditions the task's facts do not mention
    expired: bool = False


@dataclass(frozen=True, kw_only=True)
class Experience:
    """A conditioned lesson distilled from a verified correction (SPEC §9's five fields + provenance).

    `requires` is the machine-checkable form of `condition`: the facts (name -> required value)
    a new task must state for the lesson to apply. Without an explicit `requires`, the
    condition text itself is the one fact that must be stated true.
    """

    lesson: str
    condition: str  # when it applies
    failure_mode: str
    signal: str  # how to recognise it
    strategy: str  # the verified strategy
    counterexample: str  # when it fails / does not apply
    source: str  # run id / evidence that verified it
    version: str  # environment version it was verified on
    expiry: Expiry = field(default_factory=Expiry)
    rejected: tuple[tuple[str, str], ...] = field(default=())  # (wrong generalisation, why it is wrong)
    requires: tuple[tuple[str, bool], ...] = ()

    _REQUIRED = (
        "condition",
        "failure_mode",
        "signal",
        "strategy",
        "counterexample",
        "source",
        "version",
    )

    def __post_init__(self) -> None:
        if not self.requires:
            object.__setattr__(self, "requires", ((self.condition, True),))

    @property
    def expires(self) -> str:
        return self.expiry.describe()

    def as_dict(self) -> dict[str, Any]:
        """The mapping `from_mapping` reads back (round-trips exactly)."""
        return {
            "lesson": self.lesson,
            **{k: getattr(self, k) for k in self._REQUIRED},
            "expires": {
                "on_version_change": self.expiry.on_version_change,
                "after": self.expiry.after.isoformat() if self.expiry.after else None,
            },
            "rejected": [{"claim": c, "why_wrong": w} for c, w in self.rejected],
            "requires": dict(self.requires),
        }

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Experience:
        missing = [k for k in ("lesson", *cls._REQUIRED) if not _text(data.get(k))]
        if missing:
            raise ReplyFormatError("experience is not reusable without: " + ", ".join(missing), json.dumps(dict(data)))
        rejected = tuple(
            (_text(r.get("claim")), _text(r.get("why_wrong")))
            for r in data.get("rejected", [])
            if isinstance(r, Mapping)
        )
        req = data.get("requires") or {}
        if not isinstance(req, Mapping) or not all(isinstance(v, bool) for v in req.values()):
            raise ReplyFormatError("requires must map each condition to true/false", json.dumps(dict(data)))
        return cls(
            lesson=_text(data["lesson"]),
            **{k: _text(data[k]) for k in cls._REQUIRED},
            expiry=Expiry.parse(data.get("expires")),
            rejected=rejected,
            requires=tuple((str(k), v) for k, v in req.items()),
        )

    def applies_to(self, facts: Mapping[str, bool], *, environment: str, today: dt.date | None = None) -> Applicability:
        """Re-check the stored conditions and the expiry against a new task's facts.

        A condition the facts do not mention is unknown, and an unknown condition does not
        hold: the lesson is withheld rather than guessed into a task it may not fit.
        """
        exp = self.expiry
        if exp.on_version_change and environment != self.version:
            return Applicability(
                False, f"expired: verified on {self.version!r}, the task runs on {environment!r}", expired=True
            )
        if exp.after is not None and (today or dt.date.today()) > exp.after:
            return Applicability(False, f"expired: trusted until {exp.after.isoformat()}", expired=True)
        unmet = tuple(k for k, want in self.requires if k in facts and bool(facts[k]) != want)
        unknown = tuple(k for k, _ in self.requires if k not in facts)
        if unmet or unknown:
            why = [f"not met: {', '.join(unmet)}"] if unmet else []
            why += [f"not stated for this task: {', '.join(unknown)}"] if unknown else []
            return Applicability(
                False, "preconditions fail (" + "; ".join(why) + ") — do not apply this lesson", unmet, unknown
            )
        return Applicability(True, "preconditions hold; treat the lesson as a hypothesis to test, not a fact")
