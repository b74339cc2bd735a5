from shop.parse import Line, parse_line


def test_parses_a_line():
    assert parse_line("A1,2,3.50") == Line("A1", 2, 350)


def test_strips_the_sku():
    assert parse_line(" B2 ,1,10.00").sku == "B2"
