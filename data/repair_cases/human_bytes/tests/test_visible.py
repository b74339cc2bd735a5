from humanbytes import human_bytes


def test_kib_boundary():
    assert human_bytes(1048575) == "1.0 MiB"


def test_bytes():
    assert human_bytes(512) == "512 B"


def test_kib():
    assert human_bytes(1536) == "1.5 KiB"
