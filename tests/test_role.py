"""ModelRole: the one base that records, pays and caches a model-backed role's calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from labkit import models
from labkit.core.types import Reply, Usage
from labkit.experiments.judging import selfcorrect as sc
from labkit.experiments.judging.judge import ModelJudge
from labkit.experiments.judging.pairs import Pair, Question
from labkit.models import replay
from labkit.models.cache import ResponseCache
from labkit.models.role import ModelRole
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

ASK = [{"role": "user", "content": "two plus three"}]


@dataclass(frozen=True)
class Reviewer(ModelRole):
    ROLE: ClassVar[str] = "reviewer"
    max_tokens: int = 16


def test_ask_records_pays_and_names_the_role() -> None:
    ledger, budget = Ledger(), Budget(limits(calls=3))
    role = Reviewer(model=replay.script(["five"], name="role"), ledger=ledger, run_id="r", budget=budget)
    reply = role.ask(ASK, round=2, max_tokens=role.max_tokens)
    assert reply.text == "five" and role.simulated and role.name == role.model
    (event,) = ledger.events("r")
    assert (event.kind, event.role, event.round) == ("generate", "reviewer", 2)
    assert budget.spent.calls == 1 and budget.reserved.calls == 0


def test_ask_is_served_from_the_cache_and_still_charged() -> None:
    model = "openai/gpt-4o-mini"  # never called: the reply is in the cache under this request's key
    cache, ledger, budget = ResponseCache(":memory:"), Ledger(), Budget(limits(calls=3))
    stored = Reply(text="cached five", model=model, usage=Usage(12, 1, 0.5, 0.25))
    cache.put(models.request(model, ASK, max_tokens=16).key, stored, prompt_tokens=9, completion_tokens=3)
    role = Reviewer(model=model, ledger=ledger, run_id="r", budget=budget, cache=cache)
    reply = role.ask(ASK, max_tokens=16)
    assert (reply.text, reply.cached) == ("cached five", True)
    assert budget.spent.calls == 1 and budget.spent.cost_units == 0.25
    (event,) = ledger.events("r")
    assert event.role == "reviewer" and event.detail["cached"] is True


def test_options_and_recording_reach_an_injected_complete() -> None:
    seen: list[dict[str, Any]] = []

    def fake(model: str, messages: list[dict[str, str]], **kwargs: Any) -> Reply:
        seen.append(kwargs)
        return Reply(text="ok", model=model, usage=Usage(1, 1, 0.0, 0.0))

    ModelRole(model="m", complete=fake).ask(ASK)
    budget = Budget(limits())
    Reviewer(model="m", complete=fake, run_id="x", budget=budget, options={"seed": 3, "max_tokens": 5}).ask(
        ASK, role="critic", round=4, max_tokens=99, temperature=0.5
    )
    assert seen[0] == {"ledger": None, "run_id": "", "round": 0, "role": "model"}  # no budget, no cache
    assert seen[1] == {
        "ledger": None,
        "run_id": "x",
        "round": 4,
        "role": "critic",
        "budget": budget,
        "max_tokens": 5,
        "temperature": 0.5,
        "seed": 3,
    }  # the role's options win


def test_judge_and_answerer_record_through_the_base() -> None:
    ledger = Ledger()
    judge = ModelJudge(model=replay.script(["[[A]]", "[[B]]"], name="role-judge"), ledger=ledger, run_id="j")
    judgment = judge.judge(Pair(id="p", question="q", output_1="x", output_2="y"), "12")
    assert judgment.pick == "A"
    answerer = sc.ModelAnswerer(model=replay.script(["\\boxed{5}"], name="role-ans"), ledger=ledger, run_id="a")
    q = Question(
        id="q1", kind="arithmetic", text="2+3?", answer="5", working="2+3=5", wrong_answer="6", wrong_working="2+3=6"
    )
    assert answerer.respond(q, ASK, "review", 1) == "\\boxed{5}"
    assert [(e.run_id, e.role, e.round) for e in ledger.events()] == [("j", "judge", 0), ("a", "review", 1)]
