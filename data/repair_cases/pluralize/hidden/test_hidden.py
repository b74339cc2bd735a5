from plural import plural


def test_zero_berries():
    assert plural("berry", 0) == "0 berries"


def test_boxes():
    assert plural("box", 2) == "2 boxes"


def test_days():
    assert plural("day", 2) == "2 days"


def test_roofs():
    assert plural("roof", 2) == "2 roofs"


def test_one_box():
    assert plural("box", 1) == "1 box"
