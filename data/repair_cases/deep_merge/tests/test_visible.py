from merge import merge


def test_does_not_mutate():
    a = {"x": {"y": 1}}
    merge(a, {"x": {"z": 2}})
    assert a == {"x": {"y": 1}}


def test_nested():
    assert merge({"x": {"y": 1}}, {"x": {"z": 2}}) == {"x": {"y": 1, "z": 2}}


def test_override():
    assert merge({"a": 1}, {"a": 2}) == {"a": 2}
