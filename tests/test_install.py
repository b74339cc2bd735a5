"""A non-editable `pip install .` in a fresh venv carries the data and runs outside the checkout.

The venv is fresh (no `--system-site-packages`, so the editable labkit of the dev venv is not
visible); labkit itself is built and installed from a copy of the sources. Only the third-party
dependencies come from this interpreter's site-packages, through a plain .pth path entry (a
path entry adds the directory; the dev venv's own .pth files, the editable finder among them,
are not run).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys
from pathlib import Path
import labkit
from labkit.core import paths
from labkit.experiments import repair
from labkit.experiments.judging import pairs, selfcorrect
from labkit.loop.engine import accounting

case = labkit.load_case("cache_isolation")
table = accounting.per_round(accounting.read_rounds(accounting.CHAPTER_EXAMPLE), resamples=0)
print(json.dumps({
    "labkit": labkit.__file__,
    "data": str(paths.DATA),
    "case": case.name,
    "case_files": sorted(case.start.files),
    "net": table["net"].to_list()[1:],
    "huang_rows": len(selfcorrect.load_huang()),
    "repair_cases": len(repair.load_cases()),
    "judge_files": sorted(p.name for p in pairs.DATA_DIR.glob("*.jsonl")),
    "labkit_modules_outside": sorted(
        name for name, m in sys.modules.items()
        if name.startswith("labkit") and getattr(m, "__file__", None)
        and not m.__file__.startswith(sys.prefix)
    ),
}))
"""


# `labkit <subcommand> --help` for each subcommand named in argv; exits non-zero naming the ones that failed
HELPS = r"""
import sys
from labkit.cli import main
failed = [cmd for cmd in sys.argv[1:] if main([*cmd.split(), "--help"]) != 0]
sys.exit(f"--help failed for {failed}" if failed else 0)
"""


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow
def test_a_non_editable_install_runs_from_its_own_data(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("labkit", "data"):
        shutil.copytree(REPO / name, src / name, ignore=skip)

    venv = tmp_path / "venv"
    # No pip inside the venv (ensurepip alone took ~10 s): this interpreter's pip installs into
    # it through --python, which runs pip under the venv's interpreter, so it lands in the venv.
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    (Path(purelib.stdout.strip()) / "shared_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "LABKIT_DATA"}}
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(src),
        ],
        env=env,
        cwd=tmp_path,
    )
    shutil.rmtree(src)  # nothing may still point at the sources

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    got = json.loads(_run([str(python), "-c", PROBE], env=env, cwd=elsewhere).stdout)

    installed = Path(got["labkit"]).parent
    assert installed.is_relative_to(venv) and installed.name == "labkit"
    assert Path(got["data"]) == installed / "data"
    assert got["labkit_modules_outside"] == []
    assert got["case"] == "cache-isolation" and "pricing.py" in got["case_files"]
    assert not [f for f in got["case_files"] if "__pycache__" in f]  # pip compiled the data's .py
    assert got["net"] == [31, 4, -4]  # the chapter's worked example B, from the shipped CSV
    assert got["huang_rows"] > 0
    assert got["repair_cases"] == 33
    assert "questions.jsonl" in got["judge_files"]

    # The console script: every subcommand, and a case from `new-case` to a finished run.
    env["COLUMNS"] = "200"

    def labkit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "labkit"), *args], env=env, cwd=elsewhere, capture_output=True, text=True, timeout=300
        )

    assert "new-case" in labkit("--help").stdout
    # every subcommand's help, through the console script's own entry point (labkit.cli:main)
    # in one interpreter of the installed venv: a start of the CLI is ~0.5 s, eight of them 4 s
    subcommands = ("new-case", "check", "run", "ledger", "lab", "export", "import humaneval", "import swebench")
    helps = subprocess.run(
        [str(python), "-c", HELPS, *subcommands], env=env, cwd=elsewhere, capture_output=True, text=True, timeout=300
    )
    assert helps.returncode == 0 and helps.stdout.count("Usage:") == len(subcommands), helps.stderr[-2000:]
    assert labkit("new-case", "mycase").returncode == 0
    assert labkit("check", "mycase").returncode == 0
    run = labkit("run", "mycase", "--ledger", "runs.sqlite")
    assert run.returncode == 0 and "stop: resolved" in run.stdout, run.stderr
    assert "keep" in labkit("ledger", "runs.sqlite").stdout
    assert labkit("import", "humaneval", "HumanEval/2", "he").returncode == 0  # the package's data
    assert "acceptance (F2P) 0/1" in labkit("check", "he").stdout
    assert labkit("check", got["data"] + "/cache_isolation").returncode == 0  # shipped case
