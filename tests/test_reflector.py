"""A model-backed reflector: nothing it says is trusted, every bad reply is an explained round."""

import json

from labkit.core.errors import ModelTimeout
from labkit.core.types import Decision
from labkit.experiments import cache_isolation as cache_case
from labkit.loop.strategies.reflector import ModelReflector
from labkit.models.replay import script
from labkit.record.ledger import Ledger

CASE = cache_case.case()
ISO = list(CASE.suite.groups["isolation"])
HITS = list(CASE.suite.groups["same-user hit"])


def reply(diff: str, evidence_ref: str = ISO[0]) -> str:
    return json.dumps(
        {
            "phenomenon": "B is served A's price",
            "evidence_ref": evidence_ref,
            "environment": CASE.environment,
            "hypothesis": {"cause": "key lacks user_id", "refuted_if": "B still gets A's price"},
            "action": "key -> (user_id, product_id)",
            "expected": {"acceptance": ISO, "protective": HITS},
            "diff": diff,
        }
    )


def test_bad_replies_are_recorded_failures_then_a_good_one_is_kept():
    model = script(
        [
            "Sure, the bug is in the cache.",  # not JSON, not a record
            ModelTimeout("no answer in 60 s"),  # provider error
            reply(CASE.patch("composite_key").diff, "made-up-ref"),  # evidence it never saw
            reply("--- a/pricing.py\n+++ b/pricing.py\n@@ -1,1 +1,1 @@\n-x\n+y\n"),  # does not apply
            reply(CASE.patch("composite_key").diff),
        ],
        name="reflector-test",
    )
    refl = cache_case.reflector(model=model)
    assert isinstance(refl, ModelReflector) and refl.transcript is None
    assert refl.simulated and refl.name == model  # labelled: a scripted model is not a real one
    ledger = Ledger()
    trace = cache_case.run(model=model, ledger=ledger, run_id="model", max_rounds=6)
    reasons = [r.decision.reason for r in trace.rounds]
    assert [r.decision.decision for r in trace.rounds] == [Decision.INVESTIGATE] * 4 + [Decision.KEEP]
    assert "not JSON" in reasons[0] and "missing hypothesis" in reasons[0]
    assert "model call failed" in reasons[1] and "60 s" in reasons[1]
    assert "names no evidence" in reasons[2]
    assert "does not apply" in reasons[3]
    assert trace.final_verdict.resolved
    assert ledger.frame("model").filter(ledger.frame("model")["kind"] == "reflect").height == 5


def test_a_constrained_reflector_sends_the_record_schema_and_bad_replies_keep_their_specific_errors():
    from labkit.grading.validator import Validator
    from labkit.loop.engine import run_loop
    from labkit.loop.strategies.reflector import REPLY_SCHEMA

    replies = iter(["Sure, the bug is in the cache.", reply(CASE.patch("composite_key").diff)])
    sent = []

    def fn(messages, params):
        sent.append(dict(params))
        return next(replies)

    model = script(fn, name="reflector-constrained")
    refl = ModelReflector(model=model, environment=CASE.environment, constrained=True)
    assert not ModelReflector(model=model).uses_schema and ModelReflector(model="labkit/smollm2").uses_schema
    trace = run_loop(
        CASE.start, CASE.suite, Validator(), refl, max_rounds=3, patch_cap=dict(CASE.patch_cap), run_id="constrained"
    )
    assert [s["response_format"]["json_schema"]["schema"] for s in sent] == [REPLY_SCHEMA] * 2
    reason = trace.rounds[0].decision.reason
    assert "not JSON" in reason and "missing hypothesis" in reason  # the same error as unconstrained
    assert trace.rounds[1].decision.decision == Decision.KEEP and trace.final_verdict.resolved


LESSON = {
    "lesson": "Multi-tenant cache keys must cover the tenant boundary.",
    "condition": "a cache shared by tenants whose values differ per tenant",
    "failure_mode": "cross-tenant leak", "signal": "two users get the same price",
    "strategy": "key on (user_id, product_id)", "counterexample": "public catalogue data",
    "source": "cache-isolation run", "version": CASE.environment, "expires": "on a version change",
    "rejected": [{"claim": "always add user_id to every cache key", "why_wrong": "drops the condition"}],
}  # fmt: skip
# A lesson whose rejected generalisation lost its reason: from_mapping alone would keep it as
# ("always add user_id ...", "") — a silent bad record.
HALF_LESSON = {**LESSON, "rejected": [{"claim": "always add user_id to every cache key"}]}


def _recording(replies):
    sent, it = [], iter(replies)

    def fn(messages, params):
        sent.append(dict(params))
        return next(it)

    return fn, sent


def test_a_constrained_distill_sends_its_own_schema_and_a_malformed_reply_is_a_paid_for_error():
    import pytest

    from labkit.core.errors import ReplyFormatError
    from labkit.loop.strategies.reflector import DISTILL_SCHEMA, REPLY_SCHEMA

    fn, sent = _recording([json.dumps(LESSON), json.dumps(HALF_LESSON), "Keys should include the user."])
    refl = ModelReflector(model=script(fn, name="distill-constrained"), constrained=True)
    exp = refl.distill("run r: kept 'composite key'")
    assert exp.rejected == (("always add user_id to every cache key", "drops the condition"),)
    for bad, where in ((HALF_LESSON, "rejected/0"), ("Keys should include the user.", "not JSON")):
        with pytest.raises(ReplyFormatError, match=where) as caught:
            refl.distill("run r: kept 'composite key'")
        assert caught.value.reply == (bad if isinstance(bad, str) else json.dumps(bad))
        usage = caught.value.usage  # the gateway's: what the call spent
        assert usage is not None and usage.calls == 1 and usage.tokens > 0
    schemas = [s["response_format"]["json_schema"]["schema"] for s in sent]
    assert schemas == [DISTILL_SCHEMA] * 3 and DISTILL_SCHEMA != REPLY_SCHEMA


def test_an_unconstrained_distill_reply_is_checked_against_the_schema_too():
    import pytest

    from labkit.core.errors import ReplyFormatError

    fenced = "Here it is:\n```json\n" + json.dumps(LESSON) + "\n```"
    fn, sent = _recording([fenced, json.dumps(HALF_LESSON), json.dumps({**LESSON, "lesson": ""})])
    refl = ModelReflector(model=script(fn, name="distill-free"))
    assert refl.distill("run r").lesson == LESSON["lesson"]  # a fenced object is still read
    for where in ("rejected/0", "lesson"):
        with pytest.raises(ReplyFormatError, match=f"distilled lesson: .*{where}") as caught:
            refl.distill("run r")
        assert caught.value.usage is not None and caught.value.usage.calls == 1
    assert not any("response_format" in s for s in sent)  # not decoded under it: only checked
