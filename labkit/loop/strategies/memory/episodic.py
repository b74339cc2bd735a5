"""Reflexion's episodic memory as a strategy wrapper (SPEC §9; seed 001 §06.1).

After a failed trial on an external signal, a short verbal reflection — the action taken, the
error class the signal shows, the artifact, and the explanations not yet ruled out — is
appended to a persistent buffer; on the next trial the buffer is prepended to what the
wrapped actor reads. The buffer is cut to a token budget, so what the actor reads is the
rendered window, not the whole history. How it is cut (`Truncation`):
- "newest": keep the newest reflections that fit, drop the oldest first (the default);
- "oldest": keep the oldest that fit, drop the newest;
- "summarise": drop the oldest first, but fold what they ruled out into one summary line
  ("Earlier trials (summarised) ruled out: a, b.") that counts against the same budget.

The external signal is the engine's own validation of the last trial's child on the visible
suite (rolled back, or kept as progress that still fails), read back through the verdict cache
(`Checker.lookup`, a read that cannot validate): the wrapper never sees hidden tests and runs
no validation of its own. A trial whose verdict the engine did not keep (a timeout or an integrity
alarm is never cached) gets no reflection; it is counted in `Reflexion.unseen`.

Two failure modes (seed 001) are parameters, not accidents:
- `signal="sparse"`: the reflection gets pass/fail only — no failing test, no message — so it
  cannot name an error class and rules nothing out;
- an entrenched false belief: a reflection that recommends retrying what failed ("the idea
  was right, the implementation slipped"). Without `revise_after`, the actor follows it for
  ever; with it, a recommendation the environment refuted `revise_after` times is struck and
  its action ruled out (the revision rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Protocol

from labkit.loop.engine.strategy import Proposal, Situation

if TYPE_CHECKING:
    from labkit.core.types import Candidate, Verdict
    from labkit.grading.verdicts import Checker

__all__ = [
    "Actor", "Episode", "EpisodicBuffer", "Reflexion", "Truncation", "Window", "error_class", "tokens",
]  # fmt: skip

Signal = Literal["message", "sparse"]
Truncation = Literal["newest", "oldest", "summarise"]
_SUMMARY = "Earlier trials (summarised) ruled out: "


def tokens(text: str) -> int:
    """The buffer's token estimate: one token per 4 characters, rounded up (stated, not a tokenizer)."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One verbal reflection on a failed trial: an episode of the buffer (a strategy's answer
    to the engine is a `Proposal`; this is what the buffer keeps between trials)."""

    trial: int
    action: str  # what was tried (the child's name)
    error_class: str  # what the external signal shows; "" when the signal had no message (sparse)
    artifact: str  # the module the action changed
    open: tuple[str, ...]  # explanations not yet ruled out
    recommends: str = ""  # what it says to try next ("" = nothing); may be a false belief
    refuted: int = 0  # times the environment refuted `recommends`
    struck: bool = False  # revised away: the recommendation is dropped, the action ruled out

    @property
    def rules_out(self) -> str:
        """The action this reflection rules out ("" if it cannot: no error class, or it recommends retrying it)."""
        if self.struck:
            return self.action
        return self.action if self.error_class and self.recommends != self.action else ""

    def text(self) -> str:
        err = self.error_class or "unknown (pass/fail only, no message)"
        line = f"Trial {self.trial}: tried {self.action} on {self.artifact}; failed: {err}."
        if self.struck:
            return line + f" REVISED: retrying {self.action} was refuted {self.refuted}x; ruled out."
        if self.recommends:
            line += f" Belief: the idea was right; retry {self.recommends}."
        return line + f" Not yet ruled out: {', '.join(self.open) or 'nothing'}."


@dataclass(frozen=True)
class Window:
    """What the actor reads this trial: the newest reflections that fit the budget."""

    reflections: tuple[Episode, ...]
    text: str
    tokens: int
    dropped: int  # reflections not shown in full (truncated away, or only summarised)
    summarised: frozenset[str] = frozenset()  # actions the summary line rules out

    @property
    def ruled_out(self) -> frozenset[str]:
        return frozenset(r.rules_out for r in self.reflections if r.rules_out) | self.summarised

    @property
    def recommended(self) -> str:
        """The newest live recommendation (what a believing actor follows)."""
        return next((r.recommends for r in reversed(self.reflections) if r.recommends and not r.struck), "")


@dataclass(kw_only=True)  # SessionTranscript extends it past five parameters
class EpisodicBuffer:
    """The persistent buffer of reflections, per case, rendered under `budget` tokens, cut as `truncate` says."""

    budget: int = 400
    items: dict[str, list[Episode]] = field(default_factory=dict)
    truncate: Truncation = "newest"

    def append(self, case: str, r: Episode) -> None:
        self.items.setdefault(case, []).append(r)

    def window(self, case: str) -> Window:
        items = self.items.get(case, [])
        if self.truncate == "summarise":
            return self._summarised(items)
        order = items if self.truncate == "oldest" else list(reversed(items))
        kept = _fit(order, self.budget)
        if self.truncate == "newest":
            kept.reverse()
        text = "\n".join(r.text() for r in kept)
        return Window(tuple(kept), text, tokens(text) if text else 0, len(items) - len(kept))

    def _summarised(self, items: list[Episode]) -> Window:
        """The most recent reflections in full, and what every older one ruled out in one line."""
        for k in range(len(items), -1, -1):  # show k newest in full, summarise the rest
            older, newer = items[: len(items) - k], items[len(items) - k :]
            names = list(dict.fromkeys(r.rules_out for r in older if r.rules_out))
            summary = _SUMMARY + ", ".join(names) + "." if names else ""
            room = self.budget - (tokens(summary) + 1 if summary else 0)
            if room >= 0 and sum(tokens(r.text()) + 1 for r in newer) <= room:
                break
        while names and tokens(summary) + 1 > self.budget:  # even alone it does not fit: keep the newest names
            names = names[1:]
            summary = _SUMMARY + ", ".join(names) + "." if names else ""
        text = "\n".join(([summary] if summary else []) + [r.text() for r in newer])
        return Window(tuple(newer), text, tokens(text) if text else 0, len(older), frozenset(names))

    def refute(self, case: str, action: str, revise_after: int | None) -> None:
        """The environment refuted a retry of `action`: count it against every live
        recommendation of it, and strike those refuted `revise_after` times (if a rule is set)."""
        out = []
        for r in self.items.get(case, []):
            if r.recommends == action and not r.struck:
                r = replace(r, refuted=r.refuted + 1)
                if revise_after is not None and r.refuted >= revise_after:
                    r = replace(r, struck=True, recommends="")
            out.append(r)
        self.items[case] = out


def _fit(order: list[Episode], budget: int) -> list[Episode]:
    """The leading reflections of `order` whose texts fit in `budget` tokens (one per line break)."""
    kept: list[Episode] = []
    used = 0
    for r in order:
        cost = tokens(r.text()) + 1
        if used + cost > budget:
            break
        kept.append(r)
        used += cost
    return kept


class Actor(Protocol):
    """Proposes a trial's child from the situation and the memory window it is shown."""

    @property
    def name(self) -> str: ...

    @property
    def simulated(self) -> bool: ...

    def act(self, situation: Situation, memory: Window) -> Proposal: ...


def error_class(verdict: Verdict, signal: Signal) -> str:
    """The error class a reflection can name from the external signal — the class from
    `labkit.loop.control.classify` (TEST_FAILURE, POLICY_DENIED, …), which check broke and how (first
    failing test and its exception) — or "" when the signal is pass/fail only (sparse)."""
    from labkit.loop.control.classify import classify

    if signal == "sparse":
        return ""
    cls = classify(verdict, "validator")
    if cls is None:
        return ""
    fails = verdict.evidence.failures
    what = "protective regression" if verdict.pass_to_fail else "acceptance still fails"
    if not fails:
        return f"{cls.error_class.value}: {what} ({cls.reason})"
    first = fails[0]
    exc = first.message.strip().splitlines()[-1][:80] if first.message.strip() else first.outcome
    return f"{cls.error_class.value}: {what} ({first.nodeid}: {exc})"


Believe = Callable[[str, int, str], bool]  # (case, trial, action) -> misattribute this failure?


@dataclass(kw_only=True)
class Reflexion:
    """Wraps an `Actor` with the episodic buffer. `buffer=None` is the no-memory arm (same actor,
    same trials, nothing prepended). `believe` decides when a reflection misattributes the
    failure (recommends retrying the action); `revise_after` is the revision rule."""

    actor: Actor
    checker: Checker
    buffer: EpisodicBuffer | None = None
    signal: Signal = "message"
    believe: Believe | None = None
    revise_after: int | None = None
    last: dict[str, tuple[str, Candidate]] = field(default_factory=dict)  # case -> (action, child target)
    windows: list[tuple[str, int, Window]] = field(default_factory=list)  # what each trial read
    unseen: list[tuple[str, int, str]] = field(
        default_factory=list
    )  # (case, trial, action) with no engine verdict kept

    @property
    def name(self) -> str:
        mem = "no memory" if self.buffer is None else f"reflexion buffer ({self.signal}, {self.buffer.budget} tok)"
        return f"{self.actor.name} + {mem}"

    @property
    def simulated(self) -> bool:
        return self.actor.simulated

    def propose(self, situation: Situation) -> Proposal:
        if self.buffer is not None:
            self._reflect(situation)
            window = self.buffer.window(situation.case)
        else:
            window = Window((), "", 0, 0)
        self.windows.append((situation.case, situation.round, window))
        p = self.actor.act(situation, window)
        if p.children and p.children[0].target is not None:
            self.last[situation.case] = (p.children[0].name, p.children[0].target)
        return p

    def _reflect(self, s: Situation) -> None:
        """If the last trial's child failed the visible suite — rolled back, or kept as progress
        that still fails (a stub start keeps any partial answer) — reflect on its verdict."""
        assert self.buffer is not None
        prev = self.last.pop(s.case, None)
        if prev is None or s.suite is None:
            return
        action, target = prev
        verdict = self.checker.lookup(target, s.suite)  # the engine's verdict: a read, never a validation
        if verdict is None:
            self.unseen.append((s.case, s.round - 1, action))
            return
        if verdict.resolved:
            return
        window = self.buffer.window(s.case)
        if window.recommended == action:
            self.buffer.refute(s.case, action, self.revise_after)
        err = error_class(verdict, self.signal)
        ruled = window.ruled_out | ({action} if err else set())
        open_ = tuple(sorted(set(self._explanations(s)) - ruled))
        believe = bool(err) and self.believe is not None and self.believe(s.case, s.round - 1, action)
        already = any(r.struck and r.action == action for r in self.buffer.items.get(s.case, []))
        self.buffer.append(
            s.case,
            Episode(
                trial=s.round - 1,
                action=action,
                error_class=err,
                artifact=_artifact(s),
                open=open_,
                recommends=action if believe and not already else "",
            ),
        )

    def _explanations(self, s: Situation) -> tuple[str, ...]:
        ex = getattr(self.actor, "explanations", None)
        return tuple(ex(s)) if callable(ex) else ()


def _artifact(s: Situation) -> str:
    code = [p for p in s.candidate.files if p.endswith(".py") and not p.startswith("tests/")]
    return code[0] if len(code) == 1 else ", ".join(sorted(code))
