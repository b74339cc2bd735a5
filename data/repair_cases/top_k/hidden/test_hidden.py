import pytest

from topk import top_k


def test_k_bigger_than_scores():
    assert top_k({"a": 1, "b": 2}, 5) == ["b", "a"]


def test_zero():
    assert top_k({"a": 1}, 0) == []


def test_negative_k():
    with pytest.raises(ValueError):
        top_k({"a": 1}, -1)
