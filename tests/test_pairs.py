import json
from pathlib import Path

import pytest

from labkit.core.errors import PairFormatError
from labkit.experiments.judging import pairs, questions
from labkit.experiments.judging.pair_files import load_pairs, load_questions
from labkit.experiments.judging.pairs import Pair

DATA = Path(__file__).resolve().parent.parent / "data" / "judge"


def test_questions_have_computed_answers_and_a_real_mistake():
    qs = questions.make_questions(50, seed=1)
    assert len({q.kind for q in qs}) == 5
    for q in qs:
        assert q.answer != q.wrong_answer
        # the worked steps end in the answer they claim, right and wrong alike
        assert questions.extract_number(q.working) == float(q.answer)
        assert questions.extract_number(q.wrong_working) == float(q.wrong_answer)
        assert q.is_correct(pairs.concise(q.working, q.answer))
        assert not q.is_correct(pairs.concise(q.wrong_working, q.wrong_answer))


def test_answers_are_actually_right():
    # recompute a few by hand from the question text
    qs = {q.kind: q for q in questions.make_questions(5, seed=2)}
    t = qs["temperature"].text  # "Convert C °C to °F."
    c = float(t.split()[1])
    assert float(qs["temperature"].answer) == c * 9 / 5 + 32
    nums = [float(w.rstrip("%?")) for w in qs["percent"].text.split() if w.rstrip("%?").isdigit()]
    assert float(qs["percent"].answer) == nums[0] * nums[1] / 100


def test_extract_number_prefers_boxed_and_handles_commas():
    assert questions.extract_number("so 3 then \\boxed{1,250} and 7") == 1250.0
    assert questions.extract_number("it is -4.5 degrees") == -4.5
    assert questions.extract_number("no digits here") is None


def test_padded_keeps_the_answer_and_adds_no_numbers():
    q = questions.make_questions(1, seed=3)[0]
    import random

    text = pairs.padded(q.working, q.answer, random.Random(0), 6)
    short = pairs.concise(q.working, q.answer)
    assert len(text) > 2 * len(short)
    assert questions.extract_number(text) == float(q.answer)
    import re

    assert sorted(re.findall(r"\d+", text)) == sorted(re.findall(r"\d+", short))


def test_pair_sets_have_gold_labels_matching_quality():
    qs = questions.make_questions(20, seed=4)
    cp = pairs.correctness_pairs(qs, seed=4)
    assert {p.label for p in cp} == {1, 2}  # the correct answer lands in both slots
    for p in cp:
        right = p.output_1 if p.label == 1 else p.output_2
        assert qs[int(p.question_id[1:])].is_correct(right)
    vp = pairs.verbosity_pairs(qs, seed=4)
    assert {p.label for p in vp if p.kind == "verbosity"} == {0}
    assert all(p.label in (1, 2) for p in vp if p.kind == "verbosity_wrong")
    wp = pairs.writer_pairs(qs, seed=4)
    assert {p.model_2 for p in wp} == {"writer/baseline"}
    for p in wp:
        assert p.label == (0 if p.quality_1 == p.quality_2 else (1 if p.quality_1 > p.quality_2 else 2))


def test_swapped_moves_label_and_models():
    p = Pair(
        id="x",
        question="q",
        output_1="one",
        output_2="two",
        label=1,
        kind="k",
        model_1="m1",
        model_2="m2",
        quality_1=1.0,
        quality_2=0.0,
    )
    s = p.swapped()
    assert (s.output_1, s.output_2, s.label, s.model_1, s.quality_1) == ("two", "one", 2, "m2", 0.0)


def test_main_writes_files_that_load_back(tmp_path):
    counts = pairs.main(tmp_path, n=10, seed=0)
    assert counts["correctness.jsonl"] == 10 and counts["verbosity.jsonl"] == 20
    back = load_pairs(tmp_path / "writers.jsonl")
    assert len(back) == counts["writers.jsonl"] and back[0].kind == "writer"
    assert load_questions(tmp_path / "questions.jsonl") == questions.make_questions(10, seed=0)


def test_shipped_data_is_what_the_script_writes(tmp_path):
    pairs.main(tmp_path)
    for name in ("questions.jsonl", "correctness.jsonl", "verbosity.jsonl", "writers.jsonl"):
        assert (DATA / name).read_text() == (tmp_path / name).read_text(), name


def test_loads_llmbar_and_mtbench_examples():
    lb = load_pairs(DATA / "example_llmbar.jsonl")
    assert lb and all(p.label in (1, 2) and p.kind == "llmbar" for p in lb)
    mt = load_pairs(DATA / "example_mtbench.jsonl")
    assert {p.label for p in mt} <= {0, 1, 2}
    assert all(p.model_1 and p.model_2 for p in mt)
    turn2 = [p for p in mt if p.id.split("-")[2] == "2"]
    assert turn2 and "Assistant:" in turn2[0].question  # the first turn is kept as context


def _write(tmp_path, rows, name="f.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize(
    "rows, fmt, message",
    [
        (['{"input": "q", "output_1": "a"'], "auto", "f.jsonl:1: not valid JSON"),
        (
            [{"input": "q", "output_1": "a", "output_2": "b", "label": 1}, {"input": "q", "output_1": "a", "label": 2}],
            "auto",
            "f.jsonl:2: missing field 'output_2'",
        ),
        ([{"input": "q", "output_1": "a", "output_2": "b", "label": 3}], "auto", "label must be 1 or 2"),
        ([{"foo": 1}], "auto", "cannot tell the format"),
        ([[1, 2]], "llmbar", "expected a JSON object"),
        (
            [
                {
                    "question_id": 1,
                    "model_a": "x",
                    "model_b": "y",
                    "winner": "model_c",
                    "conversation_a": [],
                    "conversation_b": [],
                }
            ],
            "auto",
            "winner must be one of",
        ),
        (
            [
                {
                    "question_id": 1,
                    "model_a": "x",
                    "model_b": "y",
                    "winner": "tie",
                    "conversation_a": [{"role": "user", "content": "q"}],
                    "conversation_b": [{"role": "user", "content": "q"}],
                }
            ],
            "auto",
            "0 assistant turn",
        ),
        ([{"input": 5, "output_1": "a", "output_2": "b", "label": 1}], "auto", "'input' must be a string"),
        ([{"input": "q", "output_1": "a", "output_2": "b", "label": 1}], "yaml", "unknown format"),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, rows, fmt, message):
    path = _write(tmp_path, rows)
    with pytest.raises(PairFormatError, match=message):
        load_pairs(path, format=fmt)


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(PairFormatError, match="empty"):
        load_pairs(tmp_path / "e.jsonl")
    with pytest.raises(PairFormatError, match="no such file"):
        load_pairs(tmp_path / "missing.jsonl")


def test_self_pairs_keep_only_correct_own_answers():
    qs = questions.make_questions(3, seed=5)
    own = {qs[0].id: f"I get \\boxed{{{qs[0].answer}}}", qs[1].id: "I get \\boxed{-1}"}
    sp = pairs.self_pairs(qs, own, "me")
    assert [p.question_id for p in sp] == [qs[0].id]
    assert {sp[0].model_1, sp[0].model_2} == {"me", "reference"} and sp[0].label == 0
    kinds = {p.kind for p in pairs.battery(qs, own=own, judge="me")}
    assert kinds == {"correctness", "verbosity", "verbosity_wrong", "writer", "self"}
