"""Sealed final check set: run once, on a sealed candidate; only pass/fail leaves this file."""

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

_RELEASE = Path(__file__).parent / "userlib_release.py"


def _released_userlib():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("userlib", _RELEASE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("local", [True, False])
def test_every_profile_and_report_end_to_end(monkeypatch, local) -> None:  # type: ignore[no-untyped-def]
    if not local:
        monkeypatch.setitem(sys.modules, "userlib", _released_userlib())
    for name in ("app.profile", "app.report"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    profile = importlib.import_module("app.profile")
    report = importlib.import_module("app.report")
    assert [profile.profile_line(u) for u in (1, 2, 3)] == [
        "Ada Lovelace <ada@example.org>",
        "Alan Turing <alan@example.org>",
        "Grace Hopper <grace@example.org>",
    ]
    assert report.birth_years([3, 1]) == {"Grace Hopper": 1906, "Ada Lovelace": 1815}
    with pytest.raises(KeyError):
        profile.profile_line(404)
