from roman import roman


def test_four():
    assert roman(4) == "IV"


def test_three():
    assert roman(3) == "III"


def test_eight():
    assert roman(8) == "VIII"
