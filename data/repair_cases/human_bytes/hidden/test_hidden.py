import pytest

from humanbytes import human_bytes


def test_gib_boundary():
    assert human_bytes(1024**3 - 1) == "1.0 GiB"


def test_tib_is_the_largest_unit():
    assert human_bytes(1024**5) == "1024.0 TiB"


def test_negative_is_an_error():
    with pytest.raises(ValueError):
        human_bytes(-5)
