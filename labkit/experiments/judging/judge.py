"""A pairwise LLM judge, asked twice per pair: once in each order.

The prompt follows MT-Bench's pairwise template (Zheng et al., 2023): explain, then a
verdict "[[A]]", "[[B]]" or "[[C]]" (tie). A second template asks for the letter alone,
so that when the provider returns log-probabilities the verdict can be read from the
probabilities of the answer tokens A / B / C instead of the sampled text.

A reply that yields no verdict is kept as a Judgment with `pick=None` and counted by
the bias metrics; it is never dropped. Anything with `judge(pair, order) -> Judgment`,
a `name` and a `simulated` flag is a judge: the simulated judge (labkit.experiments.judging.simjudge) plugs
in wherever a model judge does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from labkit.core.errors import LabkitError
from labkit.core.types import Reply
from labkit.experiments.judging.pairs import Pair
from labkit.models.role import ModelRole

Order = Literal["12", "21"]  # "12": output_1 is shown as assistant A; "21": swapped
Pick = Literal["A", "B", "tie"]  # the slot the judge chose
Winner = Literal[0, 1, 2]  # the output the judge chose (0: tie), independent of order
Source = Literal["text", "logprobs", "simulated"]
ORDERS: tuple[Order, Order] = ("12", "21")


@dataclass(frozen=True, kw_only=True)
class Judgment:
    """One verdict on one pair shown in one order. `pick` is None when the reply was unparseable."""

    pair_id: str
    order: Order
    pick: Pick | None
    judge: str
    simulated: bool
    source: Source = "text"
    raw: str = ""
    probs: tuple[float, float, float] | None = None  # P(A), P(B), P(tie) from log-probs, renormalised
    mass: float | None = None  # how much probability the first token put on A, B and C together

    @property
    def winner(self) -> Winner | None:
        """The chosen output (1 or 2; 0 for a tie) once the order is undone."""
        return winner_of(self.pick, self.order)


@dataclass(frozen=True)
class Swap:
    """A pair judged in both orders."""

    pair: Pair
    first: Judgment  # order "12"
    second: Judgment  # order "21"

    @property
    def flipped(self) -> bool:
        """The verdict changed with the order (both parsed, different outputs chosen)."""
        a, b = self.first.winner, self.second.winner
        return a is not None and b is not None and a != b


class Judge(Protocol):
    """What the experiments need from a judge."""

    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def judge(self, pair: Pair, order: Order) -> Judgment: ...


def winner_of(pick: Pick | None, order: Order) -> Winner | None:
    if pick is None:
        return None
    if pick == "tie":
        return 0
    first_shown = pick == "A"
    if order == "12":
        return 1 if first_shown else 2
    return 2 if first_shown else 1


def shown(pair: Pair, order: Order) -> tuple[str, str]:
    """(assistant A's text, assistant B's text) for the pair in this order."""
    return (pair.output_1, pair.output_2) if order == "12" else (pair.output_2, pair.output_1)


def length_feature(len_a: Any, len_b: Any, scale: float) -> Any:
    """tanh of a length difference in units of `scale` characters: the judge models' length term.

    Works on floats and numpy arrays alike.
    """
    import numpy as np

    return np.tanh((np.asarray(len_a, dtype=float) - np.asarray(len_b, dtype=float)) / scale)


# --- prompts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """A pairwise prompt: system text plus a user text with {question}, {answer_a}, {answer_b}."""

    name: str
    system: str
    user: str
    max_tokens: int

    def messages(self, question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user.format(question=question, answer_a=answer_a, answer_b=answer_b)},
        ]


_IMPARTIAL = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user question displayed below. You should choose the assistant that follows "
    "the user's instructions and answers the user's question better. Your evaluation should consider "
    "factors such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of "
    "their responses. "
)
_FAIRNESS = (
    "Avoid any position biases and ensure that the order in which the responses were presented does "
    "not influence your decision. Do not allow the length of the responses to influence your "
    "evaluation. Do not favor certain names of the assistants. Be as objective as possible. "
)
_USER = (
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

# MT-Bench's pairwise judge prompt ("pair-v2" in FastChat's judge_prompts.jsonl).
MT_BENCH = Template(
    "mt-bench-pair",
    _IMPARTIAL
    + "Begin your evaluation by comparing the two responses and provide a short explanation. "
    + _FAIRNESS
    + "After providing your explanation, output your final verdict by strictly following this "
    'format: "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.',
    _USER,
    max_tokens=512,
)

# The same judge asked for the verdict letter only: the first generated token is the verdict,
# so its log-probabilities over A / B / C are the judge's preference.
LETTER = Template(
    "letter",
    _IMPARTIAL + _FAIRNESS + "Do not provide any explanation. Output only one letter: A if assistant A "
    "is better, B if assistant B is better, C for a tie.",
    _USER + "\n\nVerdict (A, B or C):",
    max_tokens=3,
)


# --- parsing ---------------------------------------------------------------------------------

_LETTERS: dict[str, Pick] = {"A": "A", "B": "B", "C": "tie"}
_BRACKETED = re.compile(r"\[\[\s*([ABC])\s*\]\]")
_BARE = re.compile(r"^\s*[\(\[\"']?([ABC])[\)\]\"']?\s*(?:[.:!,\n]|$)")
_TIE = re.compile(r"^\s*\W*tie\W*$", re.IGNORECASE)
_SAYS = re.compile(r"assistant\s+([AB])\s+is\s+(?:better|the better)", re.IGNORECASE)


def parse_verdict(text: str) -> Pick | None:
    """A / B / tie from a judge's reply, or None if it gives no single clear verdict.

    Accepted, in order: MT-Bench's "[[A]]"/"[[B]]"/"[[C]]" (several different ones are
    ambiguous -> None); a reply that starts with a bare letter ("B", "(A)", "C."); "tie";
    one "Assistant A is better" style sentence.
    """
    found = {m.upper() for m in _BRACKETED.findall(text)}
    if found:
        return _LETTERS[found.pop()] if len(found) == 1 else None
    m = _BARE.match(text)
    if m:
        return _LETTERS[m.group(1)]
    if _TIE.match(text):
        return "tie"
    says = {s.upper() for s in _SAYS.findall(text)}
    if len(says) == 1:
        return _LETTERS[says.pop()]
    return None


def verdict_from_logprobs(logprobs: Mapping[str, float]) -> tuple[Pick, tuple[float, float, float], float] | None:
    """The most probable of A / B / C among the top next tokens, with P(A), P(B), P(tie)
    renormalised over those three and the total probability they had before that.
    None if no verdict letter is among the tokens.

    Tokens are compared after stripping whitespace, quotes, brackets and tokenizer space
    marks ("▁", "Ġ"); variants of a letter (" A", "A") are summed.
    """
    mass = {"A": 0.0, "B": 0.0, "C": 0.0}
    for token, lp in logprobs.items():
        key = token.strip().strip("▁Ġ\"'([").strip()
        if key in mass:
            mass[key] += math.exp(lp)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    probs = (mass["A"] / total, mass["B"] / total, mass["C"] / total)
    best = max(range(3), key=lambda i: probs[i])
    return ("A", "B", "tie")[best], probs, min(total, 1.0)


# --- a model as judge ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelJudge(ModelRole):
    """A model asked through `labkit.models.gateway.complete` (or an injected `complete` with the same
    signature), recorded, paid and cached as a `ModelRole`. With `use_logprobs`, the verdict comes
    from answer-token probabilities when the reply has them, and from the text otherwise."""

    ROLE: ClassVar[str] = "judge"

    template: Template = MT_BENCH
    use_logprobs: bool = False
    temperature: float = 0.0

    def judge(self, pair: Pair, order: Order) -> Judgment:
        reply = self.ask(self.messages(pair, order), **self.call_options())
        return self.read(pair, order, reply)

    def messages(self, pair: Pair, order: Order) -> list[dict[str, str]]:
        return self.template.messages(pair.question, *shown(pair, order))

    def call_options(self) -> dict[str, Any]:
        """Generation options for every call (max_tokens, temperature, log-probs, extras)."""
        kwargs: dict[str, Any] = dict(max_tokens=self.template.max_tokens, temperature=self.temperature)
        if self.use_logprobs:
            kwargs.update(logprobs=True, top_logprobs=20)
        kwargs.update(self.options)
        return kwargs

    def read(self, pair: Pair, order: Order, reply: Reply) -> Judgment:
        """The verdict in a reply: from answer-token log-probabilities if asked for and present."""
        if self.use_logprobs and reply.logprobs:
            read = verdict_from_logprobs(reply.logprobs)
            if read is not None:
                return Judgment(
                    pair_id=pair.id,
                    order=order,
                    pick=read[0],
                    judge=self.model,
                    simulated=reply.simulated,
                    source="logprobs",
                    raw=reply.text,
                    probs=read[1],
                    mass=read[2],
                )
        return Judgment(
            pair_id=pair.id,
            order=order,
            pick=parse_verdict(reply.text),
            judge=self.model,
            simulated=reply.simulated,
            source="text",
            raw=reply.text,
        )


# --- running ---------------------------------------------------------------------------------


def iter_swaps(judge: Judge, pairs: Iterable[Pair]) -> Iterator[Swap]:
    """Judge each pair in both orders, yielding as each pair finishes (stop early, keep these)."""
    for pair in pairs:
        yield Swap(pair, judge.judge(pair, "12"), judge.judge(pair, "21"))


def judge_both(judge: Judge, pairs: Iterable[Pair], progress: Callable[[int], None] | None = None) -> list[Swap]:
    """Every pair judged in both orders; `progress(k)` is called after the k-th pair."""
    out = []
    for k, swap in enumerate(iter_swaps(judge, pairs), 1):
        out.append(swap)
        if progress is not None:
            progress(k)
    return out


@dataclass(frozen=True)
class BatchRun:
    """What a batch of judgments left: pairs judged in both orders, and calls that failed."""

    swaps: list[Swap]
    failed: tuple[tuple[str, Order, str], ...]  # (pair id, order, error) — not verdicts, not dropped
    stopped: str = ""  # "" when every call ran; else "cancelled" or "budget exhausted"


def judge_batch(
    judge: ModelJudge,
    pairs: Sequence[Pair],
    *,
    concurrency: int = 8,
    on_progress: Callable[[Any], None] | None = None,
    cancel: Any = None,
) -> BatchRun:
    """Both orders of every pair through `labkit.models.batch` (at most `concurrency` calls in flight;
    set the `cancel` threading.Event to stop and keep what finished). A pair with a failed or
    unfinished call is left out of `swaps` and listed in `failed`."""
    from labkit.models import batch

    jobs = [batch.Job(judge.messages(p, o)) for p in pairs for o in ORDERS]
    extra = {k: v for k, v in (("cache", judge.cache), ("budget", judge.budget)) if v is not None}
    result = batch.run(
        judge.model,
        jobs,
        concurrency=concurrency,
        on_progress=on_progress,
        cancel=cancel,
        ledger=judge.ledger,
        run_id=judge.run_id,
        role="judge",
        **extra,
        **judge.call_options(),
    )
    swaps, failed = [], []
    for i, p in enumerate(pairs):
        got = []
        for k, order in enumerate(ORDERS):
            out = result.outcomes[2 * i + k]
            if isinstance(out, Reply):
                got.append(judge.read(p, order, out))
            else:
                failed.append((p.id, order, "not run" if out is None else f"{type(out).__name__}: {out}"))
        if len(got) == 2:
            swaps.append(Swap(p, got[0], got[1]))
    return BatchRun(swaps, tuple(failed), result.stopped)


def unparseable(swaps: Iterable[Swap]) -> list[Judgment]:
    """The judgments whose reply gave no verdict, for reporting."""
    return [j for s in swaps for j in (s.first, s.second) if j.pick is None]


def find_flip(judge: Judge, pairs: Iterable[Pair], limit: int = 8) -> tuple[Swap | None, list[Swap]]:
    """Judge pairs in both orders until one flips its verdict (at most `limit` pairs).

    Returns the first flipped pair (None if none did) and every pair judged on the way.
    """
    seen = []
    for k, swap in enumerate(iter_swaps(judge, pairs)):
        seen.append(swap)
        if swap.flipped:
            return swap, seen
        if k + 1 >= limit:
            break
    return None, seen


T = TypeVar("T")
J = TypeVar("J")


def with_fallback(run: Callable[[J], T], preferred: J, fallback: J) -> tuple[T, J, str | None]:
    """`run(preferred)`, or `run(fallback)` if the preferred model cannot be used.

    Returns (result, what was used, why it fell back or None). Only "cannot be used" errors
    (labkit errors such as ModelUnavailable, MissingKey, ModelTimeout, or a missing optional
    package) fall back; bugs still raise.
    """
    try:
        return run(preferred), preferred, None
    except (LabkitError, ImportError) as e:
        return run(fallback), fallback, f"{type(e).__name__}: {e}"
