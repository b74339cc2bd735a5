"""The model gateway: choice, offline providers through litellm, specific errors, ledger and budget."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from stub_openai import StubOpenAI

from labkit import models
from labkit.core.errors import (
    BudgetExhausted,
    InvalidSetting,
    MissingKey,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
    ReplyFormatError,
    UnknownModel,
)
from labkit.models import replay
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

ASK = [{"role": "user", "content": "What is 2+3?"}]


def test_import_labkit_does_not_import_litellm() -> None:
    code = "import labkit, labkit.models.gateway, labkit.models.replay, labkit.models.batch, labkit.models.cache, labkit.models.smollm2, sys; assert 'litellm' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_scripted_and_replayed_models_are_served_without_litellm(tmp_path) -> None:
    # labkit/scripted and labkit/replay are local: the gateway serves them in-process (recorded,
    # paid, cached like any call); only a real provider imports litellm.
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"key": "k", "reply": "seven"}\n')
    code = f"""
import asyncio, sys
from labkit import models
from labkit.core.errors import ModelError, UnknownModel
from labkit.models import replay
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger
ask = [{{"role": "user", "content": "hi"}}]
ledger, budget = Ledger(), Budget(limits(calls=9))
m = replay.script(["one", replay.Scripted("A", {{"A": -0.1, "B": -2.0}})], name="local")
assert models.complete(m, ask, ledger=ledger, budget=budget, run_id="r").text == "one"
assert models.option_probs(m, ask).pick == "A"
r = models.complete("labkit/replay:{transcript}", ask, replay_key="k", budget=budget)
assert (r.text, r.simulated) == ("seven", True)
s2 = replay.script(["two"], name="async")
assert asyncio.run(models.acomplete(s2, ask, ledger=ledger, run_id="r")).text == "two"
try:
    models.complete(s2, ask)
except ModelError as e:
    assert "has 1 replies" in str(e)
assert [e.kind for e in ledger.events("r")] == ["generate", "generate"], ledger.events("r")
assert budget.spent.calls == 2
print("before", "litellm" in sys.modules)
try:
    models.complete("no-such-provider-xyz", ask)
except UnknownModel:
    pass
print("after", "litellm" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["before", "False", "after", "True"], out.stdout


def test_choose_prefers_explicit_then_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.DEFAULT_ENV, raising=False)
    assert models.choose(default="labkit/smollm2") == "labkit/smollm2"
    monkeypatch.setenv(models.DEFAULT_ENV, "openai/gpt-4o-mini")
    assert models.choose(default="labkit/smollm2") == "openai/gpt-4o-mini"
    assert models.choose("labkit/scripted", default="labkit/smollm2") == "labkit/scripted"
    assert models.known_models()[0] == "openai/gpt-4o-mini"


def test_simulated_models_are_labelled() -> None:
    assert models.is_simulated("labkit/scripted") and models.is_simulated("labkit/replay:x.jsonl")
    assert not models.is_simulated("labkit/smollm2") and not models.is_simulated("openai/gpt-4o")
    assert "simulated" in models.label("labkit/replay:x.jsonl")
    assert models.label("labkit/smollm2") == "labkit/smollm2"


def test_scripted_reply_goes_through_litellm_into_ledger_and_budget() -> None:
    model = replay.script(["five", "six"], name="gateway")
    ledger, budget = Ledger(), Budget(limits(calls=5))
    reply = models.complete(model, ASK, ledger=ledger, budget=budget, run_id="r", round=2, role="repairer")
    assert (reply.text, reply.model, reply.simulated, reply.cached) == ("five", model, True, False)
    assert reply.usage.calls == 1 and reply.usage.tokens == 3 + 1  # simulated: words in, words out
    (event,) = ledger.events("r")
    assert (event.kind, event.role, event.round, event.tokens) == ("generate", "repairer", 2, 4)
    assert event.detail["simulated"] is True and event.detail["completion_tokens"] == 1
    assert ledger.get(event.output_hash) == "five"
    # an engine role's name is refused before anything is called, paid or recorded
    with pytest.raises(InvalidSetting, match="role 'executor' is one of the engine's roles"):
        models.complete(model, ASK, ledger=ledger, budget=budget, run_id="r", role="executor")
    assert len(ledger.events("r")) == 1 and budget.spent.calls == 1
    assert budget.spent.calls == 1 and budget.reserved.calls == 0


def test_unknown_models_are_named_and_recorded_without_losing_earlier_events() -> None:
    ledger = Ledger()
    models.complete(replay.script(["ok"], name="before"), ASK, ledger=ledger, run_id="r")
    for bad in ("labkit/nope", "no-such-provider-xyz"):
        with pytest.raises(UnknownModel, match=bad):
            models.complete(bad, ASK, ledger=ledger, run_id="r")
    kinds = [(e.kind, e.detail["model"]) for e in ledger.events("r")]
    assert kinds == [
        ("generate", "labkit/scripted:before"),
        ("error", "labkit/nope"),
        ("error", "no-such-provider-xyz"),
    ]
    assert ledger.events("r")[1].detail["error"] == "UnknownModel"


def test_missing_key_is_caught_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ledger, budget = Ledger(), Budget(limits(calls=3))
    with pytest.raises(MissingKey, match="OPENAI_API_KEY"):
        models.complete("openai/gpt-4o-mini", ASK, ledger=ledger, budget=budget)
    assert budget.spent.calls == 0  # refused before reserving anything
    assert [e.kind for e in ledger.events()] == ["error"]


def test_stub_server_reply_and_nominal_cost() -> None:
    with StubOpenAI(reply="5") as stub:
        reply = models.complete("openai/stub", ASK, api_base=stub.url, api_key="none", max_tokens=4)
    assert (reply.text, reply.simulated) == ("5", False)
    assert reply.usage.tokens == 3 + 1 and reply.usage.cost_units == models.NOMINAL_COST
    assert stub.requests == 1 and stub.bodies[0]["max_tokens"] == 4


SCHEMA = {"type": "object", "properties": {"code": {"type": "array", "items": {"type": "string"}}},
          "required": ["code"], "additionalProperties": False}  # fmt: skip
FORMAT = {"type": "json_schema", "json_schema": {"name": "module", "schema": SCHEMA, "strict": True}}


def test_response_format_goes_to_a_real_provider_unchanged_and_the_reply_is_checked() -> None:
    with StubOpenAI(reply='{"code": ["x = 1"]}') as stub:
        reply = models.complete("openai/stub", ASK, api_base=stub.url, api_key="none", response_format=FORMAT)
        assert reply.text == '{"code": ["x = 1"]}'
        assert stub.bodies[-1]["response_format"] == FORMAT  # litellm's own field, as given
        models.complete("openai/stub", ASK, api_base=stub.url, api_key="none", json_schema=SCHEMA)
        assert stub.bodies[-1]["response_format"]["json_schema"]["schema"] == SCHEMA  # the same request
    ledger = Ledger()
    with StubOpenAI(reply='{"code": "x = 1"}') as stub, pytest.raises(ReplyFormatError, match="code") as err:
        models.complete("openai/stub", ASK, api_base=stub.url, api_key="none", response_format=FORMAT, ledger=ledger)
    assert err.value.reply == '{"code": "x = 1"}' and err.value.usage is not None and err.value.usage.calls == 1
    assert ledger.events()[-1].detail["error"] == "ReplyFormatError"


def test_response_format_reaches_a_scripted_provider_and_a_bad_one_is_named() -> None:
    seen: list[dict[str, object]] = []

    def fn(messages: object, params: dict[str, object]) -> str:
        seen.append(dict(params))
        return '{"code": []}'

    models.complete(replay.script(fn, name="fmt-pass"), ASK, response_format=FORMAT)
    assert seen[-1]["response_format"] == FORMAT
    with pytest.raises(ModelError, match="response_format must be"):
        models.complete(replay.script(fn, name="fmt-pass"), ASK, response_format={"type": "json"})
    with pytest.raises(ModelError, match="not both"):
        models.complete(replay.script(fn, name="fmt-pass"), ASK, response_format=FORMAT, json_schema=SCHEMA)
    assert (
        models.complete(replay.script(fn, name="fmt-pass"), ASK, response_format={"type": "json_object"}).text
        == '{"code": []}'
    )


def test_timeout_is_model_timeout_and_budget_keeps_the_reservation() -> None:
    ledger, budget = Ledger(), Budget(limits(calls=3))
    with StubOpenAI(latency=3.0) as stub, pytest.raises(ModelTimeout, match="0.5s"):
        models.complete(
            "openai/stub", ASK, api_base=stub.url, api_key="none", timeout=0.5, ledger=ledger, budget=budget
        )
    assert ledger.events()[-1].detail["error"] == "ModelTimeout"
    assert budget.spent.calls == 1 and len(budget.unreconciled) == 1  # usage unknown: flagged


def test_connection_refused_is_model_unavailable() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    budget = Budget(limits(calls=3))
    with pytest.raises(ModelUnavailable, match=f"127.0.0.1:{port}"):
        models.complete(
            "openai/stub", ASK, api_base=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=10, budget=budget
        )
    assert budget.spent.tokens == 0 and budget.spent.calls == 1 and not budget.unreconciled


def test_reply_not_matching_the_schema_is_a_format_error_with_the_raw_reply() -> None:
    model = replay.script(['{"answer": "five"}', "not json"], name="fmt")
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    ledger = Ledger()
    with pytest.raises(ReplyFormatError, match="answer") as wrong_type:
        models.complete(model, ASK, json_schema=schema, ledger=ledger)
    assert wrong_type.value.reply == '{"answer": "five"}'
    with pytest.raises(ReplyFormatError, match="not JSON") as not_json:
        models.complete(model, ASK, json_schema=schema, ledger=ledger)
    assert not_json.value.reply == "not json"
    errors = ledger.events()
    assert [e.detail["error"] for e in errors] == ["ReplyFormatError"] * 2
    assert ledger.get(errors[1].output_hash) == "not json" and errors[1].tokens > 0  # the call was paid


def test_labkit_errors_raised_inside_a_provider_come_out_unchanged() -> None:
    model = replay.script([ModelTimeout("scripted slowness")], name="err")
    with pytest.raises(ModelTimeout, match="scripted slowness"):
        models.complete(model, ASK)


def test_budget_refusal_runs_nothing() -> None:
    model = replay.script(["never served", "served"], name="budget")
    budget = Budget(limits(calls=0))
    with pytest.raises(BudgetExhausted):
        models.complete(model, ASK, budget=budget)
    assert models.complete(model, ASK).text == "never served"  # the script was not consumed


def test_bad_messages_get_a_specific_error() -> None:
    with pytest.raises(ModelError, match=r"messages\[1\]"):
        models.complete("labkit/scripted", [{"role": "user", "content": "x"}, {"role": "user"}])
    with pytest.raises(ModelError, match="non-empty list"):
        models.complete("labkit/scripted", "just a string")  # type: ignore[arg-type]


def test_option_probs_reads_first_token_logprobs() -> None:
    model = replay.script([replay.Scripted("A", {" A": -0.5, "B": -1.5, "x": -3.0})], name="judge")
    got = models.option_probs(model, ASK)
    assert got.pick == "A" and got.probs["A"] > got.probs["B"]
    assert got.probs["A"] + got.probs["B"] == pytest.approx(1.0)
    assert 0 < got.mass < 1 and got.reply.simulated


def test_request_key_changes_with_any_parameter_but_not_timeout_or_key() -> None:
    base = models.request("openai/x", ASK, temperature=0.0)
    assert models.request("openai/x", ASK, temperature=0.7).key != base.key
    assert models.request("openai/x", ASK, seed=1).key != base.key
    assert models.request("openai/x", ASK, temperature=0.0, timeout=5, api_key="sk").key == base.key


def test_problem_explains_why_a_model_cannot_be_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "OPENAI_API_KEY" in (models.problem("openai/gpt-4o-mini") or "")
    assert models.problem("openai/gpt-4o-mini", api_base="http://127.0.0.1:1/v1") is None
    assert "labkit/nope" in (models.problem("labkit/nope") or "")
    assert "does not exist" in (models.problem("labkit/gguf:/no/such/model.gguf") or "")
    assert models.problem("labkit/scripted") is None


def test_priced_models_cost_their_usd_price_and_reserve_an_upper_bound() -> None:
    budget = Budget(limits(cost_units=1.0))
    # litellm's mock_response: no network, but litellm prices it as the real model
    reply = models.complete("gpt-4o-mini", ASK, api_key="none", mock_response="five", budget=budget)
    assert reply.text == "five" and 0 < reply.usage.cost_units < 0.01
    assert budget.spent.cost_units == pytest.approx(reply.usage.cost_units)
    upper = models.request("gpt-4o-mini", ASK, max_tokens=256).upper()
    assert reply.usage.cost_units < upper.cost_units < 0.01 and upper.tokens >= 256 + 3
