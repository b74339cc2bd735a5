"""The real offline model: SmolLM2-135M through xllamacpp, behind labkit/smollm2 in litellm."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from labkit import models
from labkit.core.errors import ModelError, ModelTimeout, ModelUnavailable
from labkit.models import smollm2
from labkit.record.ledger import Ledger

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True, scope="module")
def _smollm2_installed() -> None:
    """A missing model FAILS every test here, with how to install it: never a silent skip."""
    missing = smollm2.available()
    if missing is not None:
        pytest.fail(f"SmolLM2 is not installed here: {missing}", pytrace=False)


MODEL = "labkit/smollm2"


def test_tiny_real_generation_is_recorded_as_not_simulated() -> None:
    ledger = Ledger()
    reply = models.complete(
        MODEL,
        [{"role": "user", "content": "What is 2+3? Answer with a number."}],
        max_tokens=8,
        ledger=ledger,
    )
    assert "5" in reply.text and not reply.simulated
    (event,) = ledger.events()
    assert event.kind == "generate" and event.detail["prompt_tokens"] > 10
    assert 1 <= event.detail["completion_tokens"] <= 8
    assert reply.usage.tokens == event.detail["prompt_tokens"] + event.detail["completion_tokens"]


def test_logprob_call_gives_a_distribution_over_A_and_B() -> None:
    ask = [
        {"role": "user", "content": "Which is correct? A: 2+2=5. B: 2+2=4. Reply with the letter."},
        {"role": "assistant", "content": "The correct one is"},
    ]
    got = models.option_probs(MODEL, ask, options=("A", "B"))
    assert got.reply.logprobs is not None and len(got.reply.logprobs) == 20
    assert all(lp <= 0 for lp in got.reply.logprobs.values())
    assert got.probs["A"] + got.probs["B"] == pytest.approx(1.0)
    assert 0.05 < got.mass <= 1.0  # the letters are among the top tokens, not noise
    top = max(got.reply.logprobs.values())
    assert math.exp(top) < 1.0


def test_grammar_constrains_the_reply() -> None:
    reply = models.complete(
        MODEL,
        [{"role": "user", "content": "Pick a colour."}],
        max_tokens=6,
        grammar='root ::= "red" | "blue"',
    )
    assert reply.text in ("red", "blue")


def test_prefilled_assistant_turn_is_continued_and_only_the_continuation_returned() -> None:
    ask = [
        {"role": "user", "content": "Count from one to five in words."},
        {"role": "assistant", "content": "one, two, three,"},
    ]
    reply = models.complete(MODEL, ask, max_tokens=4)
    assert "four" in reply.text and not reply.text.startswith("one")


def test_one_engine_per_process_on_a_loopback_port() -> None:
    first, again = smollm2.engine(), smollm2.engine()
    assert first is again
    assert first.address.startswith("http://127.0.0.1:") and not first.address.endswith(":0")


def test_timeout_and_bad_requests_are_specific_errors() -> None:
    with pytest.raises(ModelTimeout, match="0.01s"):
        models.complete(MODEL, [{"role": "user", "content": "Write a long story."}], max_tokens=64, timeout=0.01)
    with pytest.raises(ModelError, match="grammar"):
        models.complete(MODEL, [{"role": "user", "content": "hi"}], max_tokens=2, grammar="root ::= (")


def test_model_path_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = smollm2.model_path()
    assert default.name == smollm2.MODEL_FILE
    monkeypatch.setenv(smollm2.GGUF_ENV, str(default))
    assert smollm2.model_path() == default
    monkeypatch.setenv(smollm2.GGUF_ENV, str(tmp_path / "absent.gguf"))
    with pytest.raises(ModelUnavailable, match="absent.gguf"):
        models.complete(MODEL, [{"role": "user", "content": "hi"}])
    with pytest.raises(ModelUnavailable, match="needs a file"):
        models.complete("labkit/gguf", [{"role": "user", "content": "hi"}])


@pytest.mark.timeout(900)  # 6 generations; the machine is shared
def test_a_schema_constraint_makes_replies_the_record_asked_for_where_the_prompt_alone_does_not() -> None:
    """The arms' critique request on 3 HumanEval problems (one seed each; `sample(3)` is the first
    three seeded picks of the arms' own HumanEval slice `sample(6)`, 3 of the 10 problems in
    data/arms/README.md's run): with the schema sent as a decoding constraint every reply is the
    record; asked only in the prompt, some are not."""
    from labkit.experiments.arms import wellformed

    cases = wellformed.sample(3)
    assert {c.id for c in cases} < {c.id for c in wellformed.sample(6)}
    on = wellformed.measure(MODEL, cases, what="critique", constrained=True, max_tokens=192)
    off = wellformed.measure(MODEL, cases, what="critique", constrained=False, max_tokens=192)
    print(f"\nwell-formed critique records: constrained {on.records}/{on.asked}, prompt only {off.records}/{off.asked}")
    assert on.asked == off.asked == 3
    assert on.records == 3, on.errors
    assert off.records < on.records, "the prompt alone already gave every record: the test shows nothing"
    assert all(e.startswith("reply is not the record asked for") for e in off.errors)


@pytest.mark.timeout(900)
def test_a_constrained_code_request_is_a_json_module_through_the_arms_policy() -> None:
    from labkit.experiments.arms import wellformed

    got = wellformed.measure(MODEL, wellformed.sample(2, seed=5), what="code", constrained=True)
    print(f"\nconstrained code records {got.records}/2, defining the function {got.defines}/2; {got.errors}")
    assert got.records + len(got.errors) == 2
    # under the constraint only a reply cut off by max_tokens (not JSON) or an empty module may fail
    assert all("not JSON" in e or "empty" in e for e in got.errors), got.errors


def test_a_constrained_distill_decodes_a_well_formed_lesson_record() -> None:
    """DISTILL_SCHEMA becomes llama.cpp's decoding constraint: SmolLM2's lesson is a record with
    every field (its content is a 135M model's; only the shape is guaranteed)."""
    from labkit.loop.strategies.reflector import DISTILL_SCHEMA, ModelReflector

    ledger = Ledger()
    refl = ModelReflector(model=MODEL, max_tokens=400, extra={"ledger": ledger, "run_id": "distill"})
    exp = refl.distill(
        "Run r1: kept 'composite key (user_id, product_id)'; final verdict: isolation 2/2, "
        "same-user hit 2/2. Environment: pricing v1."
    )
    assert all(
        getattr(exp, k)
        for k in ("lesson", "condition", "failure_mode", "signal", "strategy", "counterexample", "source", "version")
    )
    (event,) = ledger.events("distill")
    assert event.kind == "generate" and event.detail["completion_tokens"] < 400  # ended, not cut off
    assert len(exp.rejected) <= DISTILL_SCHEMA["properties"]["rejected"]["maxItems"]


def test_the_recorded_speed_was_measured_on_the_round_one_prompt_the_button_sends_now() -> None:
    """data/models/smollm2_speed.json (the cache_isolation button's time estimate) timed the prompt
    the button sends today: re-sent with a 1-token reply, llama.cpp counts the same prompt tokens."""
    from labkit.core.versions import describe_drift
    from labkit.experiments import smollm2_speed

    recorded = smollm2_speed.load()
    now = smollm2_speed.send_round_one(max_tokens=1)
    # The prompt quotes the round's evidence digest (16 hex digits, new on every run: it covers
    # the run's own timings), and those digits tokenize into a few more or fewer tokens from run
    # to run; everything else in the prompt is fixed. A changed prompt moves the count by more.
    drift = now["usage"]["prompt_tokens"] - recorded.prompt_tokens
    assert abs(drift) <= 4, f"{drift:+d} prompt tokens; " + describe_drift(recorded.versions)
    assert recorded.reply_tokens <= recorded.max_tokens and recorded.finish_reason in ("stop", "length")
