import pytest

from labkit.core.errors import ReplyFormatError
from labkit.loop.engine.reflection import Experience, InvalidRecord, check_record, parse_json_reply

GOOD = {
    "phenomenon": "user B is served user A's price",
    "evidence_ref": "tests/test_isolation.py::test_user_b_does_not_get_user_a_price",
    "environment": "pricing v1",
    "hypothesis": {
        "cause": "the key lacks user_id",
        "refuted_if": "with user_id in the key B still gets A's price",
    },
    "action": "key -> (user_id, product_id)",
    "expected": {"acceptance": ["iso_a", "iso_b"], "protective": ["hit_a", "hit_b"]},
}


def test_complete_record_is_accepted():
    r = check_record(GOOD)
    assert r.hypothesis.cause == "the key lacks user_id"
    assert r.expected.protective == ("hit_a", "hit_b")


def test_check_the_code_logic_lacks_hypothesis_action_and_expectation():
    with pytest.raises(InvalidRecord) as err:
        check_record("Check the code logic.")
    missing = " ".join(err.value.problems)
    for part in ("missing hypothesis", "missing action", "missing expected verification"):
        assert part in missing
    # and it degrades to what the seed says each gap makes it
    assert "restatement" in missing and "complaint" in missing and "unacceptable" in missing


def test_ten_causes_are_not_one_hypothesis():
    bad = dict(GOOD, hypothesis=[f"cause {i}" for i in range(10)])
    with pytest.raises(InvalidRecord, match="lists 10 causes: that is not one hypothesis"):
        check_record(bad)
    enumerated = dict(GOOD, hypothesis={"cause": "1) stale cache 2) race 3) bad SQL", "refuted_if": "x"})
    with pytest.raises(InvalidRecord, match="enumerates 3 causes"):
        check_record(enumerated)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("environment", "missing environment"),
        ("action", "missing action"),
        ("evidence_ref", "no evidence reference"),
    ],
)
def test_each_missing_part_is_named(field, message):
    with pytest.raises(InvalidRecord, match=message):
        check_record({k: v for k, v in GOOD.items() if k != field})


def test_expectation_must_protect_both_goals():
    only_acceptance = dict(GOOD, expected={"acceptance": ["iso_a"]})
    with pytest.raises(InvalidRecord, match="names no protective test"):
        check_record(only_acceptance)


def test_unfalsifiable_hypothesis_is_rejected():
    with pytest.raises(InvalidRecord, match="not falsifiable"):
        check_record(dict(GOOD, hypothesis={"cause": "the key lacks user_id"}))


def test_parse_json_reply_accepts_fences_and_rejects_prose():
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Sure! {"a": 2} hope that helps') == {"a": 2}
    with pytest.raises(ReplyFormatError, match="not JSON"):
        parse_json_reply("I think the cache is wrong")
    with pytest.raises(ReplyFormatError, match="not an object"):
        parse_json_reply("[1, 2]")


def test_experience_requires_conditions_and_rechecks_on_retrieval():
    with pytest.raises(ReplyFormatError, match="condition"):
        Experience.from_mapping({"lesson": "always add user_id to every cache"})
    exp = Experience.from_mapping(
        {
            "lesson": "multi-tenant cache keys must cover the tenant boundary",
            "condition": "multi-tenant",
            "failure_mode": "leak",
            "signal": "same price",
            "strategy": "tenant in key",
            "counterexample": "public data",
            "source": "run",
            "version": "v1",
            "rejected": [{"claim": "always add user_id", "why_wrong": "drops the condition"}],
        }
    )
    assert exp.rejected == (("always add user_id", "drops the condition"),)
    got = exp.applies_to({"multi-tenant": False, "shared cache": True}, environment="v1")
    assert not got.ok and "multi-tenant" in got.reason
    assert exp.applies_to({"multi-tenant": True}, environment="v1").ok


def _lesson(**extra):
    return Experience.from_mapping(
        {
            "lesson": "multi-tenant cache keys must cover the tenant boundary",
            "condition": "multi-tenant",
            "failure_mode": "leak",
            "signal": "same price",
            "strategy": "tenant in key",
            "counterexample": "public data",
            "source": "run",
            "version": "pricing v1",
            **extra,
        }
    )


def test_applies_to_honours_the_stored_condition_not_whatever_facts_are_passed():
    exp = _lesson()
    # a fact the lesson never asked about says nothing about its condition
    ok = exp.applies_to({"public catalogue": True}, environment="pricing v1")
    assert not ok.ok and ok.unknown == ("multi-tenant",)
    empty = exp.applies_to({}, environment="pricing v1")
    assert not empty.ok and "multi-tenant" in empty.reason
    assert exp.applies_to({"multi-tenant": True}, environment="pricing v1").ok
    # structured conditions: every one must hold, a false one is named as unmet
    exp2 = _lesson(requires={"multi-tenant": True, "per-tenant values": True})
    got = exp2.applies_to({"multi-tenant": True, "per-tenant values": False}, environment="pricing v1")
    assert not got.ok and got.unmet == ("per-tenant values",)


def test_expiry_is_checked_not_a_free_string():
    import datetime as dt

    from labkit.core.errors import ReplyFormatError

    exp = _lesson()  # default: expires when the environment version changes
    assert exp.applies_to({"multi-tenant": True}, environment="pricing v1").ok
    moved = exp.applies_to({"multi-tenant": True}, environment="pricing v2")
    assert not moved.ok and moved.expired and "pricing v2" in moved.reason
    dated = _lesson(expires={"after": "2026-06-30", "on_version_change": False})
    assert dated.applies_to({"multi-tenant": True}, environment="x", today=dt.date(2026, 6, 1)).ok
    late = dated.applies_to({"multi-tenant": True}, environment="x", today=dt.date(2026, 7, 1))
    assert not late.ok and late.expired and "2026-06-30" in late.reason
    with pytest.raises(ReplyFormatError, match="expires"):
        _lesson(expires={"after": "next spring"})
