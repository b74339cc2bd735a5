"""The xdist start order in tests/conftest.py names real modules and puts notebook runs first."""

from __future__ import annotations

from conftest import HEAVY_MODULES, ROOT, _start_order


def test_every_heavy_module_named_for_an_early_start_exists() -> None:
    missing = [m for m in HEAVY_MODULES if not (ROOT / m).is_file()]
    assert not missing, f"renamed or gone (update tests/conftest.py HEAVY_MODULES): {missing}"


def test_notebook_runs_then_heavy_modules_then_the_rest() -> None:
    ids = ["tests/test_zzz.py::t", HEAVY_MODULES[1] + "::t", "tests/e2e/test_x.py::t[a]", HEAVY_MODULES[0] + "::t"]
    assert sorted(ids, key=_start_order) == [ids[2], ids[3], ids[1], ids[0]]
