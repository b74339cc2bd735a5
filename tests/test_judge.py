import dataclasses
import math

import pytest

from labkit.core.types import Reply
from labkit.experiments.judging.judge import (
    LETTER,
    MT_BENCH,
    ModelJudge,
    find_flip,
    iter_swaps,
    judge_batch,
    judge_both,
    parse_verdict,
    shown,
    unparseable,
    verdict_from_logprobs,
    winner_of,
    with_fallback,
)
from labkit.experiments.judging.pairs import Pair

PAIR = Pair(
    id="p1",
    question="What is 2 + 2?",
    output_1="2 + 2 = 4. The answer is 4.",
    output_2="2 + 2 = 5. The answer is 5.",
    label=1,
    kind="correctness",
)


@pytest.mark.parametrize(
    "text, pick",
    [
        ("Assistant A is accurate. [[A]]", "A"),
        ("The second one is right.\n\n[[B]]", "B"),
        ("Both equal: [[C]]", "tie"),
        ("[[A]] ... on reflection [[B]]", None),  # two different verdicts: ambiguous
        ("[[B]] and again [[B]]", "B"),
        ("B", "B"),
        ("(A)", "A"),
        ("A.\nBecause it is correct.", "A"),
        ("C", "tie"),
        ("tie", "tie"),
        ("A crate holds twelve boxes", None),  # a sentence starting with the article "A"
        ("I think Assistant B is better overall.", "B"),
        ("I cannot decide.", None),
        ("", None),
    ],
)
def test_parse_verdict(text, pick):
    assert parse_verdict(text) == pick


def test_verdict_from_logprobs_normalises_over_letters_and_merges_variants():
    lp = {"A": math.log(0.3), " A": math.log(0.1), "B": math.log(0.2), "▁C": math.log(0.1), "The": math.log(0.3)}
    pick, probs, mass = verdict_from_logprobs(lp)
    assert pick == "A" and mass == pytest.approx(0.7)
    assert probs == pytest.approx((0.4 / 0.7, 0.2 / 0.7, 0.1 / 0.7))
    assert verdict_from_logprobs({"The": -0.1, "I": -2.0}) is None


@pytest.mark.parametrize(
    "pick, order, winner",
    [("A", "12", 1), ("B", "12", 2), ("A", "21", 2), ("B", "21", 1), ("tie", "21", 0), (None, "12", None)],
)
def test_winner_undoes_the_order(pick, order, winner):
    assert winner_of(pick, order) == winner


def test_shown_swaps_the_outputs():
    assert shown(PAIR, "12") == (PAIR.output_1, PAIR.output_2)
    assert shown(PAIR, "21") == (PAIR.output_2, PAIR.output_1)


class FakeModel:
    """Records every call; answers from a list of replies in turn."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, model, messages, **kwargs):
        self.calls.append((model, messages, kwargs))
        text, logprobs = self.replies.pop(0)
        return Reply(text=text, model=model, simulated=True, logprobs=logprobs)


def test_model_judge_sends_both_orders_in_mt_bench_format():
    fake = FakeModel([("A is right. [[A]]", None), ("[[A]]", None)])
    judge = ModelJudge(model="labkit/scripted", complete=fake)
    swap = judge_both(judge, [PAIR])[0]
    (_, m1, kw1), (_, m2, _) = fake.calls
    assert m1[0]["content"] == MT_BENCH.system and "[[C]]" in m1[0]["content"]
    user1, user2 = m1[1]["content"], m2[1]["content"]
    assert user1.index("The answer is 4") < user1.index("The answer is 5")  # output_1 is A
    assert user2.index("The answer is 5") < user2.index("The answer is 4")  # swapped
    assert kw1["temperature"] == 0.0 and kw1["max_tokens"] == MT_BENCH.max_tokens and "logprobs" not in kw1
    # "A" both times: output 1, then output 2 -> the verdict flipped with the order
    assert (swap.first.winner, swap.second.winner, swap.flipped) == (1, 2, True)
    assert swap.first.simulated and swap.first.source == "text"


def test_model_judge_reads_logprobs_and_falls_back_to_text():
    fake = FakeModel(
        [
            ("B", {"B": math.log(0.7), "A": math.log(0.2)}),  # logprobs decide
            ("[[B]]", {"Sure": -0.01}),  # no letter among the tokens: parse the text
        ]
    )
    judge = ModelJudge(model="labkit/scripted", template=LETTER, use_logprobs=True, complete=fake)
    swap = judge_both(judge, [PAIR])[0]
    assert fake.calls[0][2]["logprobs"] is True and fake.calls[0][2]["top_logprobs"] == 20
    assert swap.first.source == "logprobs" and swap.first.pick == "B"
    assert swap.first.probs == pytest.approx((0.2 / 0.9, 0.7 / 0.9, 0.0)) and swap.first.mass == pytest.approx(0.9)
    assert swap.second.source == "text" and swap.second.pick == "B" and swap.second.probs is None


def test_unparseable_replies_are_kept_and_listed():
    fake = FakeModel([("I like both of them", None), ("[[A]]", None), ("hmm", None), ("???", None)])
    pairs = [PAIR, Pair(id="p2", question="q", output_1="x", output_2="y", label=2)]
    swaps = judge_both(ModelJudge(model="m", complete=fake), pairs)
    assert len(swaps) == 2
    bad = unparseable(swaps)
    assert [(j.pair_id, j.order) for j in bad] == [("p1", "12"), ("p2", "12"), ("p2", "21")]
    assert bad[0].raw == "I like both of them"


def test_iter_swaps_keeps_what_finished_when_stopped_early():
    fake = FakeModel([("[[A]]", None)] * 4)
    pairs = [Pair(id=f"p{i}", question="q", output_1="x", output_2="y") for i in range(10)]
    done = []
    for swap in iter_swaps(ModelJudge(model="m", complete=fake), pairs):
        done.append(swap)
        if len(done) == 2:
            break
    assert len(done) == 2 and len(fake.calls) == 4


def test_progress_is_called_per_pair():
    fake = FakeModel([("[[A]]", None)] * 6)
    seen = []
    judge_both(
        ModelJudge(model="m", complete=fake),
        [Pair(id=f"p{i}", question="q", output_1="x", output_2="y") for i in range(3)],
        progress=seen.append,
    )
    assert seen == [1, 2, 3]


def test_find_flip_stops_at_the_first_flip():
    fake = FakeModel(
        [
            ("[[A]]", None),
            ("[[B]]", None),  # consistent: output 1 both times
            ("[[A]]", None),
            ("[[A]]", None),
        ]
    )  # slot A both times: flipped
    pairs = [Pair(id=f"p{i}", question="q", output_1="x", output_2="y") for i in range(5)]
    flip, seen = find_flip(ModelJudge(model="m", complete=fake), pairs)
    assert flip is seen[1] and len(seen) == 2 and flip.flipped
    none, seen = find_flip(
        ModelJudge(model="m", complete=FakeModel([("[[A]]", None), ("[[B]]", None)] * 3)), pairs, limit=3
    )
    assert none is None and len(seen) == 3


def test_with_fallback_only_for_models_that_cannot_be_used():
    from labkit.core.errors import ModelUnavailable

    def run(name):
        if name == "down":
            raise ModelUnavailable("server at 127.0.0.1:9 refused the connection")
        if name == "buggy":
            raise KeyError("a bug")
        return f"ran {name}"

    assert with_fallback(run, "up", "sim") == ("ran up", "up", None)
    result, used, why = with_fallback(run, "down", "sim")
    assert (result, used) == ("ran sim", "sim") and why.startswith("ModelUnavailable: server")
    with pytest.raises(KeyError):
        with_fallback(run, "buggy", "sim")


def test_through_labkit_models_with_the_scripted_provider():
    from labkit.models.replay import Scripted, script

    model = script(
        [
            Scripted("A", {"A": math.log(0.9), "B": math.log(0.05)}),
            Scripted("A", {"A": math.log(0.8)}),
            "[[B]]",
            "no idea",
        ],
        name="judge-test",
    )
    judge = ModelJudge(model=model, template=LETTER, use_logprobs=True)
    assert judge.simulated  # the scripted provider is labelled simulated
    first, second = judge_both(judge, [PAIR, Pair(id="p2", question="q", output_1="x", output_2="y", label=2)])
    assert first.first.source == "logprobs" and first.first.simulated and first.flipped
    assert first.second.probs == pytest.approx((1.0, 0.0, 0.0))
    assert second.first.pick == "B" and second.second.pick is None  # no logprobs: the text decides


def test_judge_batch_runs_both_orders_and_lists_failed_calls():
    from labkit.core.errors import ModelTimeout
    from labkit.models.replay import script

    def reply(messages, params):
        user = messages[-1]["content"]
        if "boom" in user:
            raise ModelTimeout("scripted timeout")
        first = user.index("[The Start of Assistant A's Answer]")
        return "[[A]]" if "The answer is 4" in user[first : first + 80] else "[[B]]"

    model = script(reply, name="batch-test")
    pairs = [
        PAIR,
        Pair(id="p2", question="q", output_1="boom", output_2="y", label=2),
        dataclasses.replace(PAIR, id="p3"),
    ]
    seen = []
    run = judge_batch(ModelJudge(model=model), pairs, concurrency=3, on_progress=seen.append)
    assert [s.pair.id for s in run.swaps] == ["p1", "p3"]
    assert all(s.first.winner == 1 and s.second.winner == 1 for s in run.swaps)  # always the right answer
    assert [(pid, order) for pid, order, _ in run.failed] == [("p2", "12"), ("p2", "21")]
    assert "ModelTimeout" in run.failed[0][2] and run.stopped == ""
    assert seen[-1].done == 6 and seen[-1].failed == 2
