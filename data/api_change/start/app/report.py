"""The birth-year report."""

from userlib import get_user


def birth_years(uids: list[int]) -> dict[str, int]:
    out = {}
    for uid in uids:
        user = get_user(uid)
        out[user["name"]] = user["born"]
    return out
