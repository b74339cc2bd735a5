"""The episodic buffer: reflections rule actions out, truncation under a token budget, the
revision rule strikes a refuted belief. Unit level; the measured run is in test_memory_reflexion."""

from __future__ import annotations

from labkit.loop.strategies.memory.episodic import Episode, EpisodicBuffer, tokens


def r(trial: int, action: str, err: str = "test failure: protective regression", recommends: str = "") -> Episode:
    return Episode(
        trial=trial, action=action, error_class=err, artifact="m.py", open=("fix", "other"), recommends=recommends
    )


def test_a_reflection_with_an_error_class_rules_its_action_out_a_sparse_one_does_not() -> None:
    buf = EpisodicBuffer(budget=1000)
    buf.append("c", r(1, "wrong_a"))
    buf.append("c", r(2, "wrong_b", err=""))
    w = buf.window("c")
    assert w.ruled_out == {"wrong_a"}
    assert "unknown (pass/fail only" in w.text and "Not yet ruled out: fix, other" in w.text


def test_the_window_keeps_the_newest_reflections_under_the_budget() -> None:
    buf = EpisodicBuffer(budget=30)
    for i in range(5):
        buf.append("c", r(i + 1, f"wrong_{i}"))
    w = buf.window("c")
    assert w.tokens <= 30 and w.dropped == 5 - len(w.reflections) > 0
    assert w.reflections[-1].action == "wrong_4"  # the newest survives
    assert tokens("abcd") == 1 and tokens("abcde") == 2


def test_a_false_belief_is_followed_until_the_revision_rule_strikes_it() -> None:
    for revise_after, struck in ((None, False), (2, True)):
        buf = EpisodicBuffer(budget=1000)
        buf.append("c", r(1, "wrong_a", recommends="wrong_a"))
        assert buf.window("c").recommended == "wrong_a" and "wrong_a" not in buf.window("c").ruled_out
        for _ in range(3):
            buf.refute("c", "wrong_a", revise_after)
        w = buf.window("c")
        assert (w.recommended == "") is struck
        assert ("wrong_a" in w.ruled_out) is struck
        assert ("REVISED" in w.text) is struck


def test_a_real_model_actor_gets_the_buffer_prepended_and_never_a_hidden_test() -> None:
    from labkit.experiments import repair
    from labkit.experiments.memory.reflexion_repair import ModelActor
    from labkit.grading.verdicts import Checker
    from labkit.loop.strategies.memory.episodic import Reflexion
    from labkit.models.replay import script

    case = repair.load_cases(ids=["slugify"])[0]
    wrong = case.candidate("drop_spaces").files[case.module]  # breaks a protective visible test
    for memory in (True, False):
        prompts: list[str] = []

        def reply(messages, params, prompts=prompts):  # type: ignore[no-untyped-def]
            prompts.append(messages[-1]["content"])
            return f"```python\n{wrong}```"

        strategy = Reflexion(
            actor=ModelActor(script(reply, name="recorder")),
            checker=Checker(),
            buffer=EpisodicBuffer() if memory else None,
        )
        repair.run([case], strategy, rounds=2, rules=(), case_rules=(), checker=strategy.checker)
        assert len(prompts) == 2
        assert "Reflections on your earlier failed trials" not in prompts[0]
        assert ("Reflections on your earlier failed trials" in prompts[1]) is memory
        assert ("TEST_FAILURE: protective regression" in prompts[1]) is memory
        assert all("test_hidden" not in p for p in prompts)


def test_the_wrapper_reads_the_engines_verdict_and_never_validates() -> None:
    # the wrapper's checker shares no cache with the engine's: it finds no verdict, so it
    # reflects on nothing (counted as unseen) and never runs a validation of its own
    from labkit.experiments import repair
    from labkit.experiments.memory.reflexion_repair import ModelActor
    from labkit.grading.verdicts import Checker
    from labkit.loop.strategies.memory.episodic import Reflexion
    from labkit.models.replay import script

    case = repair.load_cases(ids=["slugify"])[0]
    wrong = case.candidate("drop_spaces").files[case.module]
    prompts: list[str] = []

    def reply(messages, params):  # type: ignore[no-untyped-def]
        prompts.append(messages[-1]["content"])
        return f"```python\n{wrong}```"

    engine_checker, own = Checker(), Checker()
    strategy = Reflexion(actor=ModelActor(script(reply, name="recorder")), checker=own, buffer=EpisodicBuffer())
    repair.run([case], strategy, rounds=2, rules=(), case_rules=(), checker=engine_checker)
    assert engine_checker.runs > 0 and own.runs == 0
    assert [(c, t) for c, t, _ in strategy.unseen] == [(case.id, 1)]
    assert len(prompts) == 2 and "Reflections on your earlier failed trials" not in prompts[1]


def test_the_three_truncations_keep_different_reflections_under_one_budget() -> None:
    items = [r(i + 1, f"wrong_{i}") for i in range(6)]
    one = tokens(items[0].text()) + 1
    windows = {}
    for how in ("newest", "oldest", "summarise"):
        buf = EpisodicBuffer(budget=2 * one + 2, truncate=how)  # type: ignore[arg-type]
        for it in items:
            buf.append("c", it)
        windows[how] = buf.window("c")
        assert windows[how].tokens <= buf.budget
    assert [x.action for x in windows["newest"].reflections] == ["wrong_4", "wrong_5"]
    assert [x.action for x in windows["oldest"].reflections] == ["wrong_0", "wrong_1"]
    # summarise: the newest in full, and every older action still ruled out through one line
    s = windows["summarise"]
    assert s.reflections and s.reflections[-1].action == "wrong_5"
    assert s.ruled_out == {f"wrong_{i}" for i in range(6)}
    assert s.text.startswith("Earlier trials (summarised) ruled out: wrong_0")
    assert windows["newest"].ruled_out == {"wrong_4", "wrong_5"}


def test_a_summary_that_cannot_fit_keeps_its_newest_names() -> None:
    buf = EpisodicBuffer(budget=14, truncate="summarise")
    for i in range(8):
        buf.append("c", r(i + 1, f"wrong_{i}"))
    w = buf.window("c")
    assert w.tokens <= 14 and not w.reflections and w.summarised and "wrong_7" in w.summarised
    assert "wrong_0" not in w.summarised
