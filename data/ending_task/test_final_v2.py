"""Replacement sealed final check set (final test data v2), written after v1 was authorised as
development material: other users, other assertions. Only pass/fail leaves this file."""

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

RELEASE = Path(__file__).with_name("userlib_release.py")


def _app(monkeypatch, released):  # type: ignore[no-untyped-def]
    """app.profile and app.report imported afresh, on the local or the released userlib."""
    if released:
        spec = importlib.util.spec_from_file_location("userlib", RELEASE)
        lib = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(lib)
        monkeypatch.setitem(sys.modules, "userlib", lib)
    modules = []
    for name in ("app.profile", "app.report"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        modules.append(importlib.import_module(name))
    return modules


def test_profiles_and_reports_on_new_data(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for released in (False, True):
        profile, report = _app(monkeypatch, released)
        assert profile.profile_line(2) == "Alan Turing <alan@example.org>"
        assert report.birth_years([2]) == {"Alan Turing": 1912} and report.birth_years([]) == {}
        with pytest.raises(KeyError):
            profile.profile_line(0)
