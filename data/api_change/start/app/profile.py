"""One line per user for the profile page."""

from userlib import get_user


def profile_line(uid: int) -> str:
    user = get_user(uid)
    return f"{user['name']} <{user['email']}>"
