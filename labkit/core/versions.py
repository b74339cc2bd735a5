"""The versions of the packages a recording's numbers depend on.

Every recording under data/ stores them (`package_versions`, called by its recorder); a test
that finds a recording no longer reproduced asks `version_drift` which of them are installed at
another version now, so a failure says in one line whether the packages moved or labkit did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import metadata

__all__ = ["NOT_INSTALLED", "describe_drift", "package_versions", "version_drift"]

NOT_INSTALLED = "not installed"


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """{distribution name: installed version} for each of `names`, sorted by name; a package
    that is not installed reads NOT_INSTALLED (a recording says so rather than failing)."""
    out = {}
    for name in sorted(set(names)):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = NOT_INSTALLED
    return out


def version_drift(recorded: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The packages whose installed version differs from `recorded`'s: {name: (recorded, installed)}."""
    now = package_versions(recorded)
    return {name: (recorded[name], now[name]) for name in now if now[name] != recorded[name]}


def describe_drift(recorded: Mapping[str, str]) -> str:
    """One line: which packages moved since the recording, or that none did."""
    drift = version_drift(recorded)
    if drift:
        moved = ", ".join(f"{name} {was} -> {now}" for name, (was, now) in drift.items())
        return f"installed versions differ from the recording's: {moved}"
    if not recorded:
        return "the recording stores no package versions"
    same = ", ".join(f"{name} {v}" for name, v in sorted(recorded.items()))
    return f"installed versions are the recording's ({same}): the difference is labkit's or this machine's"
