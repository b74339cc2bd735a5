"""The public surface: `labkit.__all__` and each subpackage's, sorted and resolvable, and light."""

import importlib
import subprocess
import sys

import pytest

import labkit

PACKAGES = ["labkit", "labkit.grading", "labkit.models", "labkit.record"]
HEAVY = ("litellm", "polars", "altair", "marimo", "numpy")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_is_sorted_and_resolves(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__ == sorted(package.__all__)
    assert len(set(package.__all__)) == len(package.__all__)
    for public in package.__all__:
        assert getattr(package, public) is not None, f"{name}.{public}"
        assert public in dir(package)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        package.nope  # noqa: B018


def test_the_top_level_surface_is_the_researchers_dozen_with_the_strategy_seam() -> None:
    assert labkit.__all__ == [
        "Budget",
        "EngineRun",
        "LabkitError",
        "Ledger",
        "Proposal",
        "Situation",
        "Strategy",
        "Task",
        "Validator",
        "load_case",
        "run",
        "run_loop",
    ]
    from labkit.loop import engine
    from labkit.loop.engine import strategy, trace

    assert (labkit.run, labkit.run_loop, labkit.Task, labkit.EngineRun) == (
        engine.run,
        engine.run_loop,
        trace.Task,
        trace.EngineRun,
    )
    assert (labkit.Strategy, labkit.Proposal, labkit.Situation) == (
        strategy.Strategy,
        strategy.Proposal,
        strategy.Situation,
    )


def test_names_of_the_earlier_wider_surface_still_resolve_from_their_homes() -> None:
    from labkit.core import errors, types

    assert labkit.Candidate is types.Candidate and labkit.LedgerError is errors.LedgerError
    assert "Candidate" not in labkit.__all__ and "LedgerError" not in labkit.__all__


@pytest.mark.parametrize("name", PACKAGES)
def test_importing_a_package_is_light(name: str) -> None:
    code = f"import sys, {name}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_lazy_name_collides_with_no_submodule() -> None:
    """`labkit.models.request` must stay the function after `labkit.models.call` is imported."""
    import labkit.models.gateway  # noqa: F401  (imports every models module)

    for name in PACKAGES:
        package = importlib.import_module(name)
        for public in package.__all__:
            assert not hasattr(getattr(package, public), "__path__"), f"{name}.{public} is a module"
            assert type(getattr(package, public)).__name__ != "module", f"{name}.{public} is a module"
