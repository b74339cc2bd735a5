"""`labkit.loop.engine`'s entry points are imported on first use, and each is what it names."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys


def test_every_entry_point_is_the_engines_own_after_every_engine_module_is_imported() -> None:
    import labkit.loop.engine as package

    for module in pkgutil.iter_modules(package.__path__):  # a submodule named like an entry point
        importlib.import_module(f"labkit.loop.engine.{module.name}")  # (decide) must not shadow it
    from labkit.loop.engine import engine as impl

    for name in package.__all__:
        assert getattr(package, name) is getattr(impl, name), name


def test_reading_a_recorded_runs_figures_does_not_import_the_runner() -> None:
    code = "import sys, labkit.loop.engine.accounting; print('labkit.loop.engine.runner' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
