from flatten import flatten


def test_strings_are_atoms():
    assert flatten(["ab", ["cd"]]) == ["ab", "cd"]


def test_deep():
    assert flatten([1, [2, [3]]]) == [1, 2, 3]


def test_empty():
    assert flatten([]) == []
