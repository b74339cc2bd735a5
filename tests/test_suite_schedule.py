"""The xdist schedule in tests/conftest.py: it names real modules and tests, starts notebook
runs first, and puts a test that takes over a walk's page right after that walk."""

from __future__ import annotations

import re
from dataclasses import dataclass

from conftest import AFTER_ITS_WALK, HEAVY_MODULES, ROOT, _start_order, after_their_walks


def test_every_heavy_module_named_for_an_early_start_exists() -> None:
    missing = [m for m in HEAVY_MODULES if not (ROOT / m).is_file()]
    assert not missing, f"renamed or gone (update tests/conftest.py HEAVY_MODULES): {missing}"


def test_every_test_after_a_walk_and_its_walk_exist() -> None:
    for nodeid in {*AFTER_ITS_WALK, *AFTER_ITS_WALK.values()}:
        m = re.fullmatch(r"(?P<file>[^:]+)::(?P<name>\w+)(\[(?P<notebook>[^\]]+)\])?", nodeid)
        assert m is not None, nodeid
        assert f"def {m['name']}(" in (ROOT / m["file"]).read_text(), f"no such test: {nodeid}"
        if m["notebook"]:
            assert (ROOT / "notebooks" / m["notebook"]).is_file(), f"no such notebook: {nodeid}"


def test_notebook_runs_then_heavy_modules_then_the_rest() -> None:
    ids = ["tests/test_zzz.py::t", HEAVY_MODULES[1] + "::t", "tests/e2e/test_x.py::t[a]", HEAVY_MODULES[0] + "::t"]
    assert sorted(ids, key=_start_order) == [ids[2], ids[3], ids[1], ids[0]]


@dataclass
class _Item:
    nodeid: str


def test_a_test_that_takes_over_a_walks_page_runs_right_after_that_walk() -> None:
    borrower, walk = next(iter(AFTER_ITS_WALK.items()))
    items = [_Item(borrower), _Item("tests/e2e/test_a.py::t"), _Item(walk), _Item("tests/e2e/test_z.py::t")]
    assert [i.nodeid for i in after_their_walks(items)] == [items[1].nodeid, walk, borrower, items[3].nodeid]
    alone = [_Item(borrower), _Item("tests/e2e/test_a.py::t")]  # its walk not selected: left in place
    assert after_their_walks(alone) == alone
