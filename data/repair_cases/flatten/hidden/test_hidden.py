from flatten import flatten


def test_tuples():
    assert flatten([(1, 2), [3]]) == [1, 2, 3]


def test_bytes_and_dicts_are_atoms():
    assert flatten([b"xy", {"a": 1}]) == [b"xy", {"a": 1}]


def test_none_is_kept():
    assert flatten([None, [1]]) == [None, 1]
