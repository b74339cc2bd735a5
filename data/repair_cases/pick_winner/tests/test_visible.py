import pytest

from winner import pick_winner


def test_empty_returns_none():
    assert pick_winner({}) is None


def test_highest_wins():
    assert pick_winner({"a": 1, "b": 3}) == "b"


# FLAKY: this test contradicts the requirement (ties are random), so it passes
# about half the time. Re-running the same candidate gives different verdicts.
@pytest.mark.parametrize("trial", range(4))
def test_tie_goes_to_first(trial):
    assert pick_winner({"a": 1, "b": 1}) == "a"
