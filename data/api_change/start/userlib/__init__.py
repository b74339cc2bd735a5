"""userlib 2.0: users as frozen records.

2.0 renamed ``get_user(uid) -> dict`` to ``fetch_user(user_id) -> User`` and made the
records immutable (CHANGELOG: "get_user removed; use fetch_user and attributes").
"""

from __future__ import annotations

from dataclasses import dataclass

__version__ = "2.0"
__all__ = ["UnknownUser", "User", "fetch_user"]

_USERS = {
    1: ("Ada Lovelace", "ada@example.org", 1815),
    2: ("Alan Turing", "alan@example.org", 1912),
    3: ("Grace Hopper", "grace@example.org", 1906),
}


class UnknownUser(KeyError):
    """No user with that id."""


@dataclass(frozen=True)
class User:
    user_id: int
    name: str
    email: str
    born: int


def fetch_user(user_id: int) -> User:
    try:
        name, email, born = _USERS[user_id]
    except KeyError:
        raise UnknownUser(user_id) from None
    return User(user_id, name, email, born)
