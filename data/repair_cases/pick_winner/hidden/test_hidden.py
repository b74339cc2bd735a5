from winner import pick_winner


def test_empty():
    assert pick_winner({}) is None


def test_tie_is_one_of_the_leaders():
    assert pick_winner({"a": 2, "b": 2, "c": 1}) in {"a", "b"}


def test_ties_are_random():
    seen = {pick_winner({"a": 1, "b": 1}) for _ in range(200)}
    assert seen == {"a", "b"}
