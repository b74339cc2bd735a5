import pytest

from labkit.core.types import Reply
from labkit.experiments.judging import selfcorrect as sc
from labkit.experiments.judging.questions import make_questions

QS = make_questions(4, seed=7)


class Scripted:
    """Answers question i at round r right or wrong as `plan[i][r]` says."""

    name = "scripted-answerer"
    simulated = True

    def __init__(self, plan):
        self.plan = plan
        self.seen = []

    def respond(self, question, messages, step, round):
        self.seen.append((question.id, step, round, [dict(m) for m in messages]))
        if step == "review":
            return "I re-checked my steps."
        i = int(question.id[1:])
        value = question.answer if self.plan[i][round] else question.wrong_answer
        return f"So the result is \\boxed{{{value}}}."


PLAN = [(1, 1, 1), (1, 0, 0), (0, 1, 1), (0, 0, 1)]


def test_loop_has_no_oracle_and_follows_the_huang_prompts():
    a = Scripted(PLAN)
    run = sc.run_intrinsic(QS, a, rounds=2)
    assert run.n == 4 and run.rounds == 2 and run.simulated
    steps = [(qid, step, r) for qid, step, r, _ in a.seen if qid == QS[0].id]
    assert steps == [
        (QS[0].id, "answer", 0),
        (QS[0].id, "review", 1),
        (QS[0].id, "revise", 1),
        (QS[0].id, "review", 2),
        (QS[0].id, "revise", 2),
    ]
    last = [m for qid, step, r, m in a.seen if qid == QS[0].id][4]
    assert [m["role"] for m in last] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert last[2]["content"] == sc.REVIEW and last[4]["content"] == sc.REVISE
    # the ground truth never reaches the model except through its own answers
    for qid, _, _, messages in a.seen:
        q = next(q for q in QS if q.id == qid)
        for m in messages:
            if m["role"] == "user":
                assert f"{{{q.answer}}}" not in m["content"] and "correct" not in m["content"].lower()


def test_accuracy_transitions_and_oracle_stopping_by_hand():
    run = sc.run_intrinsic(QS, Scripted(PLAN), rounds=2)
    assert run.correct().tolist() == [[bool(x) for x in row] for row in PLAN]
    assert [iv.estimate for iv in sc.accuracy(run)] == [0.5, 0.5, 0.75]
    assert [iv.estimate for iv in sc.oracle_stopping(run)] == [0.5, 0.75, 1.0]
    t1, t2 = sc.transitions(run)
    assert (t1.right_right.estimate, t1.right_wrong.estimate, t1.wrong_right.estimate, t1.wrong_wrong.estimate) == (
        0.25,
        0.25,
        0.25,
        0.25,
    )
    assert (t2.right_right.estimate, t2.right_wrong.estimate, t2.wrong_right.estimate, t2.wrong_wrong.estimate) == (
        0.5,
        0.0,
        0.25,
        0.25,
    )
    # unchanged: q1 (right twice) and q4 (the same wrong number twice) in round 1
    assert t1.unchanged.estimate == 0.5 and t2.unchanged.estimate == 0.75
    assert t1.right_right.low <= 0.25 <= t1.right_right.high


def test_random_reanswerer_shows_oracle_stopping_inflation():
    qs = make_questions(600, seed=11)
    run = sc.run_intrinsic(qs, sc.RandomReanswerer(p_correct=0.3, seed=2), rounds=2)
    assert run.simulated and run.answerer == "sim/random-reanswerer"
    plain, oracle = sc.accuracy(run), sc.oracle_stopping(run)
    want_plain, want_oracle = sc.expected_random(0.3, 2)
    assert want_oracle == pytest.approx([0.3, 0.51, 0.657])
    for iv, want in zip(plain, want_plain, strict=True):
        assert iv.low <= want <= iv.high
    for iv, want in zip(oracle, want_oracle, strict=True):
        assert iv.low <= want <= iv.high
    # with no oracle nothing improves; with one, "accuracy" climbs though the answerer knows nothing
    assert oracle[2].low > plain[2].high
    t1 = sc.transitions(run)[0]
    assert t1.wrong_right.low <= 0.7 * 0.3 <= t1.wrong_right.high
    assert t1.right_wrong.low <= 0.3 * 0.7 <= t1.right_wrong.high


def test_model_answerer_passes_round_and_role():
    calls = []

    def fake(model, messages, **kw):
        calls.append(kw)
        return Reply(text="\\boxed{1}", model=model)

    sc.run_intrinsic(QS[:1], sc.ModelAnswerer(model="m", complete=fake, max_tokens=64), rounds=1)
    assert [(c["round"], c["role"]) for c in calls] == [(0, "answer"), (1, "review"), (1, "revise")]
    assert all(c["max_tokens"] == 64 and c["temperature"] == 0.0 for c in calls)


def test_negative_rounds_are_refused():
    with pytest.raises(ValueError, match="rounds"):
        sc.run_intrinsic(QS, Scripted(PLAN), rounds=-1)


def test_the_loop_is_an_engine_run_and_its_ledger_shows_the_engine_steps():
    from labkit.record.events import Kind, Role

    run = sc.run_intrinsic(QS, Scripted(PLAN), rounds=2)
    assert run.engine is not None
    ev = [(e.round, e.role, e.kind, e.detail.get("case")) for e in run.engine.ledger.events(run.engine.run_id)]
    for q in QS:
        mine = [(r, role, kind) for r, role, kind, case in ev if case == q.id]
        assert mine[:2] == [(0, Role.DECISION, Kind.DEFINE), (0, Role.EXECUTOR, Kind.GENERATE)]
        for r in (1, 2):  # each revision: proposed, (applied and validated if new), decided, scored
            steps = [(role, kind) for rr, role, kind in mine if rr == r]
            changed = PLAN[int(q.id[1:])][r] != PLAN[int(q.id[1:])][r - 1]
            want = [(Role.REFLECTOR, Kind.REFLECT)]
            want += [(Role.EXECUTOR, Kind.GENERATE), (Role.VALIDATOR, Kind.VERIFY)] if changed else []
            assert steps == [*want, (Role.DECISION, Kind.DECIDE), (Role.SCORER, Kind.SCORE)]
    decided = [e.detail for e in run.engine.ledger.events(run.engine.run_id) if e.kind == Kind.DECIDE]
    # no gate: a new answer is kept as given; the same answer again changes nothing
    changes = sum(row[r] != row[r - 1] for row in PLAN for r in (1, 2))
    assert changes == 3 and sorted(d["rule"] for d in decided) == ["always"] * 3 + ["no-change"] * 5
    assert ev[-1][1:3] == (Role.DECISION, Kind.STOP) and run.engine.rounds_run == 2
    # the hidden check scored every round; the loop only ever saw the visible suite (no evidence)
    scores = [e.detail for e in run.engine.ledger.events(run.engine.run_id) if e.kind == Kind.SCORE]
    assert len(scores) == 4 * 3 and {s["scored_on"] for s in scores} == {"hidden"} and all(s["visible"] for s in scores)


def test_huang_table_ships_the_spec_numbers_with_its_source():
    pts = sc.load_huang()
    table = {(p.model, p.benchmark): [] for p in pts}
    for p in sorted(pts, key=lambda p: p.round):
        table[(p.model, p.benchmark)].append(p.accuracy)
    assert table == {
        ("GPT-3.5", "GSM8K"): [75.9, 75.1, 74.7],
        ("GPT-3.5", "CommonSenseQA"): [75.8, 38.1, 41.8],
        ("GPT-4", "GSM8K"): [95.5, 91.5, 89.0],
        ("GPT-4", "HotpotQA"): [49.0, 43.0],
        ("Llama-2", "GSM8K"): [62.0, 43.5, 36.5],
    }
    assert all("Huang et al." in p.source and "ICLR 2024" in p.source for p in pts)


def test_huang_loader_rejects_a_file_without_the_columns(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="expected columns"):
        sc.load_huang(bad)


def test_own_answers_are_round_zero_answers():
    own = sc.own_answers(Scripted(PLAN), QS)
    assert list(own) == [q.id for q in QS]
    assert [QS[i].is_correct(own[QS[i].id]) for i in range(4)] == [True, True, False, False]


def test_model_answerer_through_the_scripted_provider():
    from labkit.models.replay import script

    q = QS[0]
    model = script([f"\\boxed{{{q.wrong_answer}}}", "Looks wrong.", f"\\boxed{{{q.answer}}}"], name="sc-test")
    answerer = sc.ModelAnswerer(model=model)
    run = sc.run_intrinsic([q], answerer, rounds=1)
    assert run.simulated and run.correct().tolist() == [[False, True]]
    assert run.attempts[0][1].review == "Looks wrong."


def test_the_answer_check_reads_the_reply_and_the_visible_suite_gives_no_evidence():
    from labkit.core.errors import SuiteError
    from labkit.core.types import Candidate
    from labkit.experiments.judging import answer_check as ac
    from labkit.grading.acceptance import AcceptanceSuite

    q, check = QS[0], ac.AnswerCheck()
    right, wrong = (Candidate({ac.ANSWER_FILE: f"so \\boxed{{{v}}}"}) for v in (q.answer, q.wrong_answer))
    assert [check.run(c, ac.hidden_suite(q)).resolved for c in (right, wrong)] == [True, False]
    assert [check.run(c, ac.visible_suite()).resolved for c in (right, wrong)] == [True, True]
    assert not check.run(Candidate({"other.md": "1"}), ac.visible_suite()).resolved
    plain = AcceptanceSuite(
        name="p", tests={"test_a.py": "def test_a(): ..."}, fail_to_pass=("test_a.py::test_a",), pass_to_pass=()
    )
    with pytest.raises(SuiteError, match="not an answer check"):
        check.run(right, plain)
