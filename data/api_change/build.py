"""Write the three route diffs from their full after-states (run from the repo root).

    python data/api_change/build.py

Each route is a real, different fix of the same breakage; the diffs under patches/ are
what the search applies. Regenerate them only after editing a route below.
"""

from __future__ import annotations

from pathlib import Path

from labkit.core.patch import make

ROOT = Path(__file__).parent
START = {p.relative_to(ROOT / "start").as_posix(): p.read_text() for p in sorted((ROOT / "start").rglob("*.py"))}

LIB = "userlib/__init__.py"

# A: restore the old API inside the library (a local fork of userlib 2.0).
RESTORE = (
    START[LIB].replace(
        '__all__ = ["UnknownUser", "User", "fetch_user"]',
        '__all__ = ["UnknownUser", "User", "fetch_user", "get_user"]',
    )
    + '''

def get_user(uid: int) -> dict[str, object]:
    """The 1.x API, restored: a plain dict."""
    user = fetch_user(uid)
    return {"user_id": user.user_id, "name": user.name, "email": user.email, "born": user.born}
'''
)

# B: a compatibility layer: records answer dict-style reads and writes, get_user aliases fetch_user.
LAYER = (
    START[LIB].replace(
        "    born: int\n",
        """    born: int

    # compatibility layer for 1.x callers that treat users as dicts
    def __getitem__(self, key: str) -> object:
        return getattr(self, key)

    def __setitem__(self, key: str, value: object) -> None:
        object.__setattr__(self, key, value)
""",
    )
    + """

get_user = fetch_user  # 1.x name, kept for old callers
"""
)

# C: fix the callers to use the 2.0 API.
PROFILE = (
    START["app/profile.py"]
    .replace("import get_user", "import fetch_user")
    .replace("user = get_user(uid)", "user = fetch_user(uid)")
    .replace("{user['name']} <{user['email']}>", "{user.name} <{user.email}>")
)
REPORT = (
    START["app/report.py"]
    .replace("import get_user", "import fetch_user")
    .replace("user = get_user(uid)", "user = fetch_user(uid)")
    .replace('out[user["name"]] = user["born"]', "out[user.name] = user.born")
)

ROUTES = {
    "restore_old_api": ({LIB: RESTORE}, "A restore the old API (get_user back in the library)"),
    "compat_layer": ({LIB: LAYER}, "B add a compatibility layer (dict-style records, get_user alias)"),
    "fix_callers": ({"app/profile.py": PROFILE, "app/report.py": REPORT}, "C fix the callers (fetch_user, attributes)"),
}

if __name__ == "__main__":
    for name, (changed, label) in ROUTES.items():
        after = {**START, **changed}
        assert after != START, name
        (ROOT / "patches" / f"{name}.diff").write_text(make(START, after, label).diff)
        print(name, label)
