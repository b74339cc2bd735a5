"""Compatibility: the app must run on userlib 2.0 as released, not on a local fork of it."""

import importlib
import importlib.util
import sys
from pathlib import Path


def _released_userlib():  # type: ignore[no-untyped-def]
    path = Path(__file__).parent / "vendor" / "userlib_release.py"
    spec = importlib.util.spec_from_file_location("userlib", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_app_runs_on_released_userlib(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "userlib", _released_userlib())
    for name in ("app.profile", "app.report"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    profile = importlib.import_module("app.profile")
    report = importlib.import_module("app.report")
    assert profile.profile_line(3) == "Grace Hopper <grace@example.org>"
    assert report.birth_years([1]) == {"Ada Lovelace": 1815}
