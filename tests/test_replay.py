"""Replay and scripted providers, and the recorder that turns a real run into a replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit import models
from labkit.core.errors import ModelError
from labkit.models import replay
from labkit.record.ledger import Ledger

EXAMPLE = Path(__file__).parent.parent / "data" / "transcripts" / "example.jsonl"
ASK = [{"role": "user", "content": "Which answer is better?"}]


@pytest.fixture(autouse=True)
def _fresh_replay_state() -> None:
    replay.rewind()


def test_replay_by_explicit_key_with_recorded_usage_and_logprobs() -> None:
    reply = models.complete(f"labkit/replay:{EXAMPLE}", ASK, replay_key="judge/pair-1", logprobs=True)
    assert (reply.text, reply.simulated) == ("A", True)
    assert reply.usage.tokens == 41 + 1
    assert reply.logprobs is not None and reply.logprobs["A"] == -0.05


def test_transcript_from_parameter_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    by_param = models.complete("labkit/replay", ASK, transcript=str(EXAMPLE), replay_key="round-2")
    assert by_param.text.endswith("a + b") and by_param.usage.tokens == 72
    monkeypatch.setenv(replay.TRANSCRIPT_ENV, str(EXAMPLE))
    assert models.complete("labkit/replay", ASK, replay_key="round-1").text.endswith("a - b")


def test_repeated_keys_replay_in_order_then_the_last_repeats() -> None:
    model = f"labkit/replay:{EXAMPLE}"
    got = [models.complete(model, ASK, replay_key="retry").text for _ in range(3)]
    assert got == ["first try", "second try", "second try"]
    replay.rewind(EXAMPLE)
    assert models.complete(model, ASK, replay_key="retry").text == "first try"


def test_a_miss_names_the_key_and_the_file() -> None:
    ledger = Ledger()
    with pytest.raises(replay.ReplayMiss, match=r"'round-9'.*example\.jsonl"):
        models.complete(f"labkit/replay:{EXAMPLE}", ASK, replay_key="round-9", ledger=ledger)
    with pytest.raises(replay.ReplayMiss, match="messages digest"):
        models.complete(f"labkit/replay:{EXAMPLE}", ASK)
    assert [e.detail["error"] for e in ledger.events()] == ["ReplayMiss"]


def test_malformed_transcripts_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a", "reply": "fine"}\n\n{"key": "b"}\n')
    with pytest.raises(replay.TranscriptError, match=r"bad\.jsonl:3: 'reply'"):
        models.complete(f"labkit/replay:{bad}", ASK, replay_key="a")
    bad.write_text("not json\n")
    with pytest.raises(replay.TranscriptError, match=r"bad\.jsonl:1: not JSON"):
        replay.load(bad)
    with pytest.raises(replay.TranscriptError, match="does not exist"):
        models.complete(f"labkit/replay:{tmp_path / 'missing.jsonl'}", ASK)
    with pytest.raises(replay.TranscriptError, match="needs a transcript"):
        replay.transcript_path("replay", {})


def test_an_edited_transcript_is_reloaded(tmp_path: Path) -> None:
    t = tmp_path / "t.jsonl"
    t.write_text('{"key": "k", "reply": "old"}\n')
    assert models.complete(f"labkit/replay:{t}", ASK, replay_key="k").text == "old"
    t.write_text('{"key": "k", "reply": "new text"}\n')
    assert models.complete(f"labkit/replay:{t}", ASK, replay_key="k").text == "new text"


def test_recording_a_run_then_replaying_it_gives_the_same_replies(tmp_path: Path) -> None:
    live = replay.script([replay.Scripted("B", {"B": -0.1, "A": -2.5}), "the answer is 5"], name="live")
    questions = [[{"role": "user", "content": "A or B?"}], [{"role": "user", "content": "2+3?"}]]
    path = tmp_path / "run.jsonl"
    with replay.recording(path):
        first = models.complete(live, questions[0], logprobs=True, replay_key="q1")
        second = models.complete(live, questions[1])  # keyed by its messages' digest
    assert len(path.read_text().splitlines()) == 2
    again = [
        models.complete(f"labkit/replay:{path}", questions[0], replay_key="q1", logprobs=True),
        models.complete(f"labkit/replay:{path}", questions[1]),
    ]
    assert [r.text for r in again] == [first.text, second.text]
    assert again[0].logprobs == first.logprobs
    assert [r.usage.tokens for r in again] == [first.usage.tokens, second.usage.tokens]
    assert all(r.simulated for r in again)


def test_record_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "env.jsonl"
    monkeypatch.setenv(replay.RECORD_ENV, str(path))
    models.complete(replay.script(["recorded"], name="env"), ASK)
    monkeypatch.delenv(replay.RECORD_ENV)
    models.complete(replay.script(["not recorded"], name="env"), ASK)
    (line,) = replay.load(path)[replay.message_key(ASK)]
    assert line.reply == "recorded"


def test_scripts_by_function_and_exhaustion() -> None:
    echo = replay.script(lambda messages, params: messages[-1]["content"].upper(), name="echo")
    assert models.complete(echo, ASK).text == "WHICH ANSWER IS BETTER?"
    short = replay.script(["only one"], name="short")
    models.complete(short, ASK)
    with pytest.raises(replay.ScriptExhausted, match="'short' has 1 replies"):
        models.complete(short, ASK)
    with pytest.raises(ModelError, match="no script named 'ghost'"):
        models.complete("labkit/scripted:ghost", ASK)
