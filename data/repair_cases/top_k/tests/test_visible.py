from topk import top_k


def test_ties_by_name():
    assert top_k({"b": 2, "a": 2, "c": 1}, 2) == ["a", "b"]


def test_highest():
    assert top_k({"x": 1, "y": 3}, 1) == ["y"]


def test_empty():
    assert top_k({}, 3) == []
