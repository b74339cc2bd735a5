"""The persistent response cache: hits, misses, invalidation, ledger marks, budget charges."""

from __future__ import annotations

from pathlib import Path

import pytest
from stub_openai import StubOpenAI

from labkit import models
from labkit.core.errors import BudgetExhausted
from labkit.core.types import Reply, Usage
from labkit.models import replay
from labkit.models.cache import CacheError, ResponseCache
from labkit.record.budget import Budget, limits
from labkit.record.ledger import Ledger

ASK = [{"role": "user", "content": "What is two plus three?"}]


@pytest.fixture
def stub():
    with StubOpenAI(reply="five") as server:
        yield server


def _ask(stub: StubOpenAI, cache: ResponseCache, **kw):
    return models.complete("openai/stub", ASK, api_base=stub.url, api_key="none", cache=cache, **kw)


def test_miss_then_hit_calls_the_model_once(stub: StubOpenAI, tmp_path: Path) -> None:
    cache, ledger = ResponseCache(tmp_path / "c.sqlite"), Ledger()
    first = _ask(stub, cache, ledger=ledger)
    second = _ask(stub, cache, ledger=ledger)
    assert stub.requests == 1 and (cache.misses, cache.hits) == (1, 1)
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "five"
    assert [e.detail["cached"] for e in ledger.events()] == [False, True]
    hit = ledger.events()[1]
    assert hit.tokens == first.usage.tokens and hit.detail["original_wall_seconds"] == first.usage.wall_seconds


def test_hits_survive_reopening_the_file(stub: StubOpenAI, tmp_path: Path) -> None:
    _ask(stub, ResponseCache(tmp_path / "c.sqlite"))
    reopened = ResponseCache(tmp_path / "c.sqlite")
    assert _ask(stub, reopened).cached and stub.requests == 1 and len(reopened) == 1


def test_any_parameter_change_is_a_miss(stub: StubOpenAI) -> None:
    cache = ResponseCache(":memory:")
    _ask(stub, cache, temperature=0.0)
    _ask(stub, cache, temperature=0.7)
    _ask(stub, cache, temperature=0.7, seed=2)
    _ask(stub, cache, max_tokens=17)
    assert stub.requests == 4 and cache.hits == 0
    _ask(stub, cache, temperature=0.7, seed=2, timeout=30)  # timeout is not part of the question
    assert stub.requests == 4 and cache.hits == 1


def test_a_hit_is_still_charged_to_the_budget(stub: StubOpenAI) -> None:
    cache = ResponseCache(":memory:")
    fresh, cached = Budget(limits(calls=10)), Budget(limits(calls=10))
    paid = _ask(stub, cache, budget=fresh)
    _ask(stub, cache, budget=cached)
    assert cached.spent.calls == fresh.spent.calls == 1
    assert cached.spent.tokens == fresh.spent.tokens == paid.usage.tokens
    assert cached.spent.cost_units == fresh.spent.cost_units
    empty = Budget(limits(calls=0))
    with pytest.raises(BudgetExhausted):
        _ask(stub, cache, budget=empty)


def test_simulated_models_are_never_cached() -> None:
    cache = ResponseCache(":memory:")
    model = replay.script(["one", "two"], name="nocache")
    texts = [models.complete(model, ASK, cache=cache).text for _ in range(2)]
    assert texts == ["one", "two"] and len(cache) == 0


def test_store_fields_round_trip_and_forget(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    reply = Reply(text="A", model="m", usage=Usage(5, 1, 0.25, 1.0), logprobs={"A": -0.1, "B": -2.0})
    cache.put("k", reply, prompt_tokens=4, completion_tokens=1)
    entry = cache.get("k")
    assert entry is not None and entry.reply.cached and entry.reply.usage == reply.usage
    assert dict(entry.reply.logprobs or {}) == {"A": -0.1, "B": -2.0}
    assert (entry.prompt_tokens, entry.completion_tokens) == (4, 1)
    assert cache.forget("k") and cache.get("k") is None and not cache.forget("k")


def test_unopenable_cache_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(CacheError, match="dir.sqlite"):
        ResponseCache(tmp_path / "dir.sqlite")


def test_the_default_cache_is_never_relative_to_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    """Run from notebooks/ (as `marimo edit notebooks/x.py` from there does), a default cache
    writes nothing into the repository's notebooks/: it goes to build/ (git-ignored) or $LABKIT_BUILD."""
    import os
    import subprocess
    import sys

    from labkit.core.paths import CHECKOUT
    from labkit.models.cache import default_path

    repo, notebooks = CHECKOUT.parent, CHECKOUT.parent / "notebooks"
    for name in ("LABKIT_CACHE", "LABKIT_BUILD"):
        monkeypatch.delenv(name, raising=False)
    assert default_path() == repo / "build" / "model_cache.sqlite"
    ignored = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", "build/model_cache.sqlite"], check=False)
    assert ignored.returncode == 0, "build/ must be git-ignored"
    before = sorted(notebooks.rglob("*.sqlite*"))  # (other tests may write notebooks/__marimo__ meanwhile)
    env = {**os.environ, "LABKIT_BUILD": str(tmp_path / "b"), "PYTHONPATH": str(repo)}
    code = (
        "from labkit.core.types import Reply, Usage\nfrom labkit.models.cache import ResponseCache\n"
        "c = ResponseCache()\nc.put('k', Reply(text='hi', model='m', usage=Usage(1, 1, 0.1, 1.0)), prompt_tokens=1, "
        "completion_tokens=0, request='{}')\nprint(c.path)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=notebooks,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(out.stdout.strip()) == tmp_path / "b" / "model_cache.sqlite" and Path(out.stdout.strip()).is_file()
    assert sorted(notebooks.rglob("*.sqlite*")) == before and not (notebooks / "runs").exists()
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "mine.sqlite"))
    assert ResponseCache().path == str(tmp_path / "mine.sqlite")
