"""judge_bias in a class's words: no "pass api_key=..." a student cannot act on, attempts as a table."""

from __future__ import annotations

from labkit.experiments.judging import pairs
from labkit.experiments.judging import selfcorrect as sc
from labkit.models.choice import problem
from labkit.views.judge_class import attempts_frame, for_class


def test_a_keyless_providers_reason_is_said_without_api_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    why = problem("openai/gpt-4o-mini")
    assert why is not None and "OPENAI_API_KEY" in why
    said = for_class(why)
    assert said is not None and "api_key" not in said and "OPENAI_API_KEY" in said and " or or " not in said
    assert "`export OPENAI_API_KEY=<your key>; ./run lab`" in said and "LABKIT_MODEL=labkit/smollm2" in said
    assert for_class(None) is None


def test_no_real_judge_says_the_real_model_is_not_available() -> None:
    from labkit.views.judge_class import NO_REAL_JUDGE

    assert NO_REAL_JUDGE.startswith("the real model is not available here, so no real judge ran")


def test_attempts_are_a_table_with_numbers_not_latex() -> None:
    run = sc.run_intrinsic(pairs.make_questions(4, seed=3), sc.RandomReanswerer(0.3, seed=3), rounds=2)
    frame = attempts_frame(run)
    assert frame.height == sum(len(row) for row in run.attempts)
    assert frame.columns == ["question", "round", "answer", "right", "critique before it (start)"]
    assert set(frame["right"]) <= {"yes", "no"}
    first = run.attempts[0][0]
    assert frame["answer"][0] == ("—" if first.value is None else f"{first.value:g}")
    boxed = sc.RoundAnswer(
        question_id="q",
        round=1,
        text="so \\boxed{361}",
        value=361.0,
        correct=True,
        review="I think \\boxed{361} is right",
    )
    shown = attempts_frame(sc.SelfCorrectionRun("m", False, 1, ((boxed,),))).row(0, named=True)
    assert shown["answer"] == "361" and shown["critique before it (start)"] == "I think 361 is right"


def test_the_judge_cache_is_kept_in_the_build_folder_not_the_working_directory(tmp_path, monkeypatch) -> None:
    from pathlib import Path

    from labkit.core.paths import CHECKOUT
    from labkit.models.cache import open_cache

    monkeypatch.chdir(tmp_path)  # a notebook's kernel runs in notebooks/
    monkeypatch.setenv("LABKIT_BUILD", str(tmp_path / "b"))
    assert Path(open_cache().path) == tmp_path / "b" / "model_cache.sqlite"
    monkeypatch.delenv("LABKIT_BUILD")
    assert Path(open_cache().path) == CHECKOUT.parent / "build" / "model_cache.sqlite"
    assert not (tmp_path / "runs").exists()
