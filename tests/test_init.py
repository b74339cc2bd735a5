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


def test_the_top_level_names_of_the_tour_stay() -> None:
    for name in ("Validator", "AcceptanceSuite", "Candidate", "Ledger", "Budget", "run_loop", "load_case"):
        assert name in labkit.__all__


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
