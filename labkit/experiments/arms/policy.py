"""Who writes the code an arm proposes: a simulated policy (fast, labelled simulated) or a model.

Every policy answers the same five requests, each one model call (`Act`, with its usage):

- `draft(s, k)`: a fresh solution from the task alone (sample `k`; no test results);
- `revise(s, evidence)`: a new solution given the failing *visible* tests' messages;
- `critique(s, critic)`: a critique of the held code by the model itself (`critic=False`,
  Self-Refine) or by a separate critic call (`critic=True`, evaluator-optimizer); it sees
  no test result; `Act.ok` says whether it accepts the code;
- `refine(s, critique)`: a new solution given that critique (no test feedback);
- `write_tests(s)`: test code the model writes for its own use (Reflexion's HumanEval setup).

A `Situation` holds the visible suite only, so nothing here can show a hidden test.

SIMULATED policy parameters: p(fix | evidence), p(fix | no evidence), p(break | correct)
(a correct answer revised without evidence turns wrong), the correlation between samples
of one case (a Gaussian copula: a case's latent difficulty is shared by its samples), the
share of wrong answers that overfit the visible tests, and the share of self-written test
files that are weak (only check the function runs). Every draw is seeded by
(seed, case, round, request, k), so results do not depend on scheduling.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Protocol

from labkit.core.types import Candidate, Usage
from labkit.loop.engine.strategy import Situation
from labkit.loop.strategies.rewrite import module_of
from labkit.models.role import ModelRole

if TYPE_CHECKING:  # annotations only: the suites (and the case loader behind them) load when a sweep builds cases
    from labkit.experiments.arms.suites import ArmCase, StateKind

__all__ = [
    "CODE_SCHEMA",
    "CRITIQUE_SCHEMA",
    "TESTS_SCHEMA",
    "Act",
    "ModelPolicy",
    "Policy",
    "SimulatedPolicy",
    "evidence_of",
]

_N = NormalDist()
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
SIM_USAGE = Usage(tokens=300, calls=1, cost_units=1.0)  # nominal: one simulated call


@dataclass(frozen=True, kw_only=True)
class Act:
    text: str = ""
    candidate: Candidate | None = None
    usage: Usage = field(default_factory=Usage)
    ok: bool = False  # a critique accepts the code
    state: str = ""  # the simulated state reached ("" for a model)
    prompt: str = ""  # the request as sent (for the stepper and the hidden-text test)
    error: str = ""  # why the reply is unusable (not the format asked for), "" if usable


class Policy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def draft(self, s: Situation, k: int) -> Act: ...
    def revise(self, s: Situation, evidence: str) -> Act: ...
    def critique(self, s: Situation, critic: bool) -> Act: ...
    def refine(self, s: Situation, critique: str) -> Act: ...
    def write_tests(self, s: Situation) -> Act: ...


def evidence_of(s: Situation, limit: int = 1200) -> str:
    """The failing visible tests' ids and messages, bounded to `limit` characters."""
    lines = [
        f"- {r.nodeid}: {r.outcome}: {r.message[:300]}" for r in s.verdict.evidence.results if r.outcome != "passed"
    ]
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit - 15] + "\n… (truncated)"


def _visible_tests(s: Situation) -> str:
    if s.suite is None:
        return ""
    return "\n".join(str(s.suite.tests[p]) for p in sorted(s.suite.tests))


def _u(*key: object) -> float:
    h = hashlib.sha256(":".join(map(str, key)).encode()).digest()
    return (int.from_bytes(h[:8], "big") + 0.5) / 2**64


@dataclass(frozen=True, kw_only=True)
class SimulatedPolicy:
    """SIMULATED: picks among each case's measured states (see module docstring)."""

    # Defaults: where the Reflexion authors' GPT-4 logs identify a parameter with this meaning, its
    # value is taken from them (labkit.experiments.published.calibration, 95% intervals), rounded
    # onto the sliders' grid inside the interval; the rest are typed in and say why there.
    p_fix_evidence: float = 0.6  # logs: 0.533 [0.367, 0.700] per problem; per revision not identified
    p_fix_blind: float = 0.3  # not identifiable: no logged run revises without evidence
    p_break: float = 0.15  # logs bound it from above only: 0.293 [0.212, 0.384]
    rho: float = 0.9  # logs: 0.933 [0.830, 0.999] (was typed in as 0.5)
    overfit: float = 0.7  # logs: 0.708 [0.542, 0.875] (was 0.3)
    weak_tests: float = 0.15  # logs: 0.125 [0.000, 0.292] (was 0.4)
    critic_accuracy: float = 0.7  # P(critique says "ok" exactly when the code is right on what it sees)
    seed: int = 0
    name: str = "simulated policy"
    simulated: bool = True
    cases: Mapping[str, ArmCase] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for what in ("p_fix_evidence", "p_fix_blind", "p_break", "overfit", "weak_tests", "critic_accuracy"):
            v = getattr(self, what)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"SimulatedPolicy.{what} must be in [0, 1], got {v!r}")
        if not 0.0 <= self.rho < 1.0:
            raise ValueError(f"SimulatedPolicy.rho must be in [0, 1), got {self.rho!r}")

    def bind(self, cases: tuple[ArmCase, ...] | list[ArmCase]) -> SimulatedPolicy:
        return replace(self, cases={c.id: c for c in cases})

    def _case(self, s: Situation) -> ArmCase:
        c = self.cases.get(s.case)
        if c is None:
            raise KeyError(f"SimulatedPolicy knows no case {s.case!r}: bind the cases first")
        return c

    def _kind(self, c: ArmCase, s: Situation) -> StateKind:
        if s.state in c.states:
            return c.states[s.state][1]
        return c.start_kind

    def _success(self, c: ArmCase, p: float, *key: object) -> bool:
        """Correlated Bernoulli(p): latent sqrt(rho)·z_case + sqrt(1-rho)·e below the p-quantile."""
        if p <= 0.0:
            return False
        if p >= 1.0:
            return True
        z = _N.inv_cdf(_u(self.seed, c.id, "case"))
        e = _N.inv_cdf(_u(self.seed, c.id, *key))
        latent = self.rho**0.5 * z + (1 - self.rho) ** 0.5 * e
        return latent < _N.inv_cdf(p)

    def _pick(self, c: ArmCase, good: bool, *key: object) -> Act:
        if good and c.of_kind("correct"):
            name = c.of_kind("correct")[0]
        else:
            over, wrong = c.of_kind("overfit"), c.of_kind("wrong")
            pool = over if over and (_u(self.seed, c.id, "overfit", *key) < self.overfit or not wrong) else wrong
            pool = pool or c.of_kind("correct")
            name = pool[int(_u(self.seed, c.id, "which", *key) * len(pool))]
        return Act(text=f"[simulated] {name}", candidate=c.states[name][0], usage=SIM_USAGE, state=name)

    def draft(self, s: Situation, k: int) -> Act:
        c = self._case(s)
        return self._pick(c, self._success(c, self.p_fix_blind, "draft", k), "draft", k)

    def revise(self, s: Situation, evidence: str) -> Act:
        c = self._case(s)
        if not evidence:  # nothing fails visibly: a revision may still break a correct answer
            return self._blind(c, s, "revise")
        return self._pick(c, self._success(c, self.p_fix_evidence, "revise", s.round), "revise", s.round)

    def _blind(self, c: ArmCase, s: Situation, what: str) -> Act:
        if self._kind(c, s) == "correct":
            broken = _u(self.seed, c.id, what, "break", s.round) < self.p_break
            return self._pick(c, not broken, what, s.round)
        return self._pick(c, self._success(c, self.p_fix_blind, what, s.round), what, s.round)

    def critique(self, s: Situation, critic: bool) -> Act:
        c = self._case(s)
        right = self._kind(c, s) == "correct"
        truthful = _u(self.seed, c.id, "critique", critic, s.round) < self.critic_accuracy
        ok = right if truthful else not right
        return Act(text="[simulated] looks correct" if ok else "[simulated] there is a bug", usage=SIM_USAGE, ok=ok)

    def refine(self, s: Situation, critique: str) -> Act:
        return self._blind(self._case(s), s, "refine")

    def write_tests(self, s: Situation) -> Act:
        c = self._case(s)
        weak = _u(self.seed, c.id, "tests", s.round) < self.weak_tests
        mod = module_of(s.candidate)[:-3].replace("/", ".")
        text = f"import {mod}\n\n\ndef test_self_runs():\n    assert {mod}\n" if weak else _visible_tests(s)
        return Act(text=text, usage=SIM_USAGE)


# ----------------------------------------------------------------------------- a model


_SYSTEM = "You write correct Python. Reply with the complete module in one ```python block."
_SYSTEM_JSON = (
    'You write correct Python. Reply with JSON: {"code": [...]}, the complete module, one string '
    'per source line, for example {"code": ["import math", "", "def area(r):", "    return math.pi * r * r"]}.'
)
MAX_LINES, LINE_CHARS = 40, 120  # a constrained module: at most 40 lines of at most 120 characters


def _record(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


# What a constrained model is asked for (litellm `response_format`; llama.cpp decodes under it).
# Code is a list of lines: a small model ends a JSON string where it would end a line, so one
# string per line keeps it writing past the first line (one long string stopped there).
_LINES = {"type": "array", "items": {"type": "string", "maxLength": LINE_CHARS}, "minItems": 1, "maxItems": MAX_LINES}
CODE_SCHEMA = _record(code=_LINES)
CRITIQUE_SCHEMA = _record(
    verdict={"type": "string", "enum": ["OK", "BUG"]}, reason={"type": "string", "maxLength": 300}
)
TESTS_SCHEMA = _record(tests=_LINES)


def _unfence(text: str) -> str:
    """Code given inside a JSON string may still carry a ```python fence: keep what is inside."""
    m = _FENCE.search(text)
    return m.group(1) if m else text


@dataclass(frozen=True, kw_only=True)
class ModelPolicy(ModelRole):
    """A model by name through labkit.models.gateway (SmolLM2 offline, or any litellm name).

    `records` (the default) asks for JSON records: code as {"code": [lines]}, a critique as
    {"verdict": "OK"|"BUG", "reason": ...}, self-written tests as {"tests": [lines]}; each
    reply is checked against its schema. `constrained` (the default) also sends the schema
    through the gateway's `json_schema` (litellm's `response_format`; SmolLM2's llama.cpp
    decodes under it as a grammar); `constrained=False` only asks for it in the prompt (the
    well-formed rate with and without the constraint: `labkit.experiments.arms.wellformed`).
    A reply that is still not what was asked (cut off by max_tokens, empty code) is an
    `Act` with `error` saying so, recorded as that round's failure. `records=False` asks for
    a ```python block in free text instead. Calls go through `ModelRole.ask` (role "model").
    """

    max_tokens: int = 384  # room for a 40-line module as JSON (truncated JSON is an unusable reply)
    temperature: float = 0.8  # drafts are samples; revisions too (seeded per request)
    seed: int = 0
    name: str = ""
    ledger_run: str = ""
    records: bool = True
    constrained: bool = True
    timeout: float = 120.0  # seconds per call: the wall each call reserves (arms.CALL_WALL)

    def _ask(self, user: str, system: str, key: str, schema: dict[str, Any] | None = None) -> Act:
        from labkit.core.errors import ReplyFormatError
        from labkit.models.call import check_json

        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        seed = int(_u(self.seed, key) * 2**31)
        shape = schema if self.records else None
        try:
            reply = self.ask(
                messages,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                seed=seed,
                json_schema=shape if self.constrained else None,
                timeout=self.timeout,
            )
        except ReplyFormatError as e:  # paid for, recorded as this round's failure
            return Act(
                text=e.reply,
                usage=e.usage or Usage(calls=1),
                prompt=user,
                error=f"reply is not the record asked for: {e}",
            )
        if shape is not None:  # checked here too: unconstrained, and for any stand-in for the gateway
            try:
                check_json(reply.text, shape)
            except ReplyFormatError as e:
                return Act(
                    text=reply.text, usage=reply.usage, prompt=user, error=f"reply is not the record asked for: {e}"
                )
        return Act(text=reply.text, usage=reply.usage, prompt=user)

    def _lines(self, act: Act, name: str) -> str:
        """A record reply's `name` field (a list of lines, checked against the schema) as text."""
        if act.error or not self.records:
            return ""
        return "\n".join(json.loads(act.text)[name])

    def _code(self, s: Situation, act: Act) -> Act:
        if act.error:
            return act
        if self.records:
            code = _unfence(self._lines(act, "code"))
            if not code.strip():
                return replace(act, error='reply\'s "code" is empty')
        else:
            m = _FENCE.search(act.text)
            if m is None:
                return replace(act, error="reply has no ```python block")
            code = m.group(1)
        code = code if code.endswith("\n") else code + "\n"
        cand = s.candidate.with_files({**s.candidate.files, module_of(s.candidate): code}, label="model")
        return replace(act, candidate=cand)

    @property
    def _system(self) -> str:
        return _SYSTEM_JSON if self.records else _SYSTEM

    def _task(self, s: Situation) -> str:
        mod = module_of(s.candidate)
        return f"Module {mod}:\n```python\n{s.candidate.files[mod]}```\n\nVisible tests:\n```python\n{_visible_tests(s)}```"

    def draft(self, s: Situation, k: int) -> Act:
        ask = f"{self._task(s)}\n\nWrite the complete module so the function is correct."
        return self._code(s, self._ask(ask, self._system, f"{s.case}:draft:{k}", CODE_SCHEMA))

    def revise(self, s: Situation, evidence: str) -> Act:
        ask = (
            f"These visible tests fail:\n{evidence}\nFix the module."
            if evidence
            else "The visible tests pass. Fix any real bug."
        )
        return self._code(
            s, self._ask(f"{self._task(s)}\n\n{ask}", self._system, f"{s.case}:revise:{s.round}", CODE_SCHEMA)
        )

    def critique(self, s: Situation, critic: bool) -> Act:
        who = "You review Python code written by someone else. " if critic else "You wrote this code; review it. "
        how = (
            'Reply with JSON: {"verdict": "OK" if it is correct else "BUG", "reason": "<why; what is wrong>"}.'
            if self.records
            else "Answer with one line: OK if it is correct, else BUG: <what is wrong>."
        )
        act = self._ask(self._task(s), who + how, f"{s.case}:critique:{critic}:{s.round}", CRITIQUE_SCHEMA)
        if self.records:
            return replace(act, ok=not act.error and json.loads(act.text)["verdict"] == "OK")
        return replace(act, ok=act.text.strip().upper().startswith("OK"))

    def refine(self, s: Situation, critique: str) -> Act:
        if self.records:  # the critique's reason, not its JSON wrapping
            with contextlib.suppress(json.JSONDecodeError, AttributeError):
                critique = str(json.loads(critique).get("reason", critique))
        ask = f"{self._task(s)}\n\nReview: {critique[:600]}\nRewrite the module accordingly."
        return self._code(s, self._ask(ask, self._system, f"{s.case}:refine:{s.round}", CODE_SCHEMA))

    def write_tests(self, s: Situation) -> Act:
        mod = module_of(s.candidate)[:-3].replace("/", ".")
        user = (
            f"{self._task(s)}\n\nWrite pytest tests (import {mod}; plain assert statements) for this code. Tests only."
        )
        if self.records:
            system = 'You write pytest tests. Reply with JSON: {"tests": [...]}, the test module, one string per source line.'
            act = self._ask(user, system, f"{s.case}:tests:{s.round}", TESTS_SCHEMA)
            return replace(act, text=_unfence(self._lines(act, "tests")))
        act = self._ask(user, "You write pytest tests. Reply with one ```python block.", f"{s.case}:tests:{s.round}")
        m = _FENCE.search(act.text)
        return replace(act, text=m.group(1) if m else "")
