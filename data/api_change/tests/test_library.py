"""userlib 2.0's own contract (dev checks)."""

import dataclasses

import pytest


def test_fetch_user_returns_user() -> None:
    from userlib import UnknownUser, User, fetch_user

    user = fetch_user(2)
    assert isinstance(user, User) and (user.name, user.born) == ("Alan Turing", 1912)
    with pytest.raises(UnknownUser):
        fetch_user(99)


def test_user_records_are_frozen() -> None:
    from userlib import fetch_user

    user = fetch_user(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        user.name = "Mallory"  # type: ignore[misc]
    with pytest.raises(TypeError):
        user["name"] = "Mallory"  # type: ignore[index]
    assert fetch_user(1).name == "Ada Lovelace"
