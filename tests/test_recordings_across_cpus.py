"""The recorded numbers do not depend on which SIMD path numpy takes on this CPU.

numpy picks its kernels at run time (AVX-512 = X86_V4, AVX2 + FMA3 = X86_V3, else the
baseline); `NPY_DISABLE_CPU_FEATURES` turns targets off. Sorting, partitioning and float sums
can differ between those paths in the order of equal keys or in the last bits: the skills table
was red on an AVX-512 machine (issue 28) because bm25s's top-k put tied skills in another order
(now labkit ranks with a stable key, labkit.loop.strategies.memory.skills). Here the recording checks that
compute with numpy run again in a fresh process under each setting that selects another path
than this run's own, and must pass unchanged. Before that fix, the skills check failed here with
X86_V3 disabled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the recording checks whose numbers numpy computes: BM25 ranking, bootstrap intervals
CHECKS = (
    "tests/test_memory_skills_record.py::test_the_recording_is_what_measure_gives_now",
    "tests/test_memory_recording.py::test_every_recorded_interval_is_recomputed_exactly_from_the_recorded_rows",
)
SETTINGS = {  # numpy >= 2.4's names for the x86-64 targets
    "no AVX-512": "X86_V4 AVX512_ICL AVX512_SPR",
    "baseline only (no AVX-512, no AVX2/FMA3)": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
}
_TARGETS = (
    "import json; from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f; "
    "print(json.dumps([t for t in d if f.get(t)]))"
)


def _env(disable: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["NPY_DISABLE_CPU_FEATURES"] = disable
    return env


def _targets(disable: str) -> list[str]:
    """The dispatch targets numpy uses in a fresh process with `disable` turned off."""
    done = subprocess.run(
        [sys.executable, "-c", _TARGETS], env=_env(disable), capture_output=True, text=True, timeout=120, check=True
    )
    return list(json.loads(done.stdout))


@pytest.mark.slow
def test_the_recording_checks_pass_on_every_simd_path_this_cpu_has() -> None:
    native = _targets("")
    ran = {}
    for name, disable in SETTINGS.items():
        targets = _targets(disable)
        assert not set(targets) & set(disable.split()), f"numpy ignored NPY_DISABLE_CPU_FEATURES={disable!r}"
        if targets == native:
            continue  # this run's own path: the suite runs these checks on it already
        ran[name] = targets
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *CHECKS, "-q", "-n", "0", "-p", "no:cacheprovider"],
            cwd=ROOT,
            env=_env(disable),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (
            f"with NPY_DISABLE_CPU_FEATURES={disable!r} ({name}: numpy uses {targets}, natively {native}) "
            f"a recording check failed:\n{done.stdout[-3000:]}"
        )
    assert ran, f"no setting selected another SIMD path than this CPU's own ({native}): nothing was compared"
