from merge import merge


def test_result_does_not_alias_b():
    b = {"k": {"v": 1}}
    out = merge({}, b)
    out["k"]["v"] = 9
    assert b["k"]["v"] == 1


def test_none_is_a_value():
    assert merge({"a": 1}, {"a": None}) == {"a": None}


def test_two_levels_untouched():
    a = {"x": {"y": {"z": 1}}}
    merge(a, {"x": {"y": {"w": 2}}})
    assert a == {"x": {"y": {"z": 1}}}
