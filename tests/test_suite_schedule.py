"""The xdist schedule in tests/conftest.py: it names real modules and tests, starts notebook
runs first, and puts a test that reuses another's page or run right after that test."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from conftest import HEAVY_MODULES, RIGHT_AFTER, ROOT, _opens_jupyterlab, _start_order, right_after


def test_every_heavy_module_named_for_an_early_start_exists() -> None:
    missing = [m for m in HEAVY_MODULES if not (ROOT / m).is_file()]
    assert not missing, f"renamed or gone (update tests/conftest.py HEAVY_MODULES): {missing}"


def test_every_test_run_right_after_another_and_that_other_exist() -> None:
    for nodeid in {*RIGHT_AFTER, *RIGHT_AFTER.values()}:
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


def test_a_test_that_reuses_a_page_or_run_goes_right_after_the_test_that_made_it() -> None:
    borrower, walk = next(iter(RIGHT_AFTER.items()))
    items = [_Item(borrower), _Item("tests/e2e/test_a.py::t"), _Item(walk), _Item("tests/e2e/test_z.py::t")]
    assert [i.nodeid for i in right_after(items)] == [items[1].nodeid, walk, borrower, items[3].nodeid]
    alone = [_Item(borrower), _Item("tests/e2e/test_a.py::t")]  # its walk not selected: left in place
    assert right_after(alone) == alone


def test_the_tests_that_open_jupyterlab_are_exactly_those_scheduled_on_one_worker() -> None:
    """conftest's rule (JUPYTERLAB_SCOPE) goes by names; here, by what each browser test calls."""
    opening, named = [], []
    for path in sorted((ROOT / "tests" / "e2e").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_"):
                calls = {
                    n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                }
                nodeid = f"tests/e2e/{path.name}::{fn.name}"
                if calls & {"jupyter_lab", "jupyter_page"}:
                    opening.append(nodeid)
                if _opens_jupyterlab(nodeid) and path.name != "test_jupyter_browser.py":
                    named.append(nodeid)
    assert len(opening) >= 5, opening  # the twin walk and the pages that take over its page
    assert [n for n in opening if not _opens_jupyterlab(n)] == [], "opens JupyterLab; rename it or the rule"
    assert sorted(set(named) - set(opening)) == [], "named as opening JupyterLab, but does not"
    assert not _opens_jupyterlab("tests/e2e/test_marimo_browser.py::test_marimo_app_steps_through_rounds[x.py]")
    assert not _opens_jupyterlab("tests/test_notebooks.py::test_jupyterlab_twin")  # not a browser test
