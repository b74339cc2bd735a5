"""The app's callers of userlib (dev checks: failures come back with diagnostics)."""


def test_profile_line() -> None:
    from app.profile import profile_line

    assert profile_line(1) == "Ada Lovelace <ada@example.org>"


def test_birth_years() -> None:
    from app.report import birth_years

    assert birth_years([2, 3]) == {"Alan Turing": 1912, "Grace Hopper": 1906}
