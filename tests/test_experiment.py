"""Probes run contained like validations: isolated, bounded, and without the researcher's keys."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit.core.types import Candidate
from labkit.grading import isolation
from labkit.loop.engine.probe import Experiment, observe

CANARY = "sk-canary-probe-31c9e0"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["isolated", "process"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "process":
        monkeypatch.setenv("LABKIT_SANDBOX", "process")
    else:
        monkeypatch.delenv("LABKIT_SANDBOX", raising=False)
        assert isolation.status() is None, isolation.status()  # no bubblewrap: FAIL, not skip
    return str(request.param)


def test_a_probe_prints_what_it_observes(mode: str) -> None:
    obs = observe(Candidate({"m.py": "KEY = 'p1'\n"}), Experiment("which key?", "import m\nprint(m.KEY)\n"))
    assert obs.output == "p1" and obs.exit_code == 0 and not obs.timed_out
    assert obs.isolation.startswith("isolated" if mode == "isolated" else "NOT ISOLATED")


def _marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and marker.encode() in (entry / "cmdline").read_bytes()
                and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_hung_probe_is_killed_with_everything_it_spawned(mode: str) -> None:
    marker = f"labkit-probe-child-{time.monotonic_ns()}"
    probe = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}],\n"
        "                 start_new_session=(sys.platform == 'linux'))\n"
        "print('spawned', flush=True)\n"
        "time.sleep(600)\n"
    )
    obs = observe(Candidate({}), Experiment("hang", probe), timeout=3)
    assert obs.timed_out and obs.exit_code is None and "spawned" in obs.output
    if mode == "process":  # the process sandbox kills the probe's group; a setsid child escapes
        for pid in _marked(marker):
            os.kill(pid, 9)
        return
    deadline = time.monotonic() + 5
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(marker) == []  # setsid or not, it died with the probe's PID namespace


LOOT = """\
import glob, os
print("env:", os.environ.get("OPENAI_API_KEY"))
for path in [f"/proc/{os.getppid()}/environ", *glob.glob("/proc/*/environ")]:
    try:
        print(path, [e for e in open(path, "rb").read().decode().split("\\0") if "KEY" in e])
    except OSError as e:
        print(path, type(e).__name__)
"""


def test_a_probe_never_sees_the_researchers_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The researcher's key is in its environment from the start (so /proc/<pid>/environ has it)."""
    monkeypatch.delenv("LABKIT_SANDBOX", raising=False)
    script = (
        "import sys\nfrom labkit.core.types import Candidate\n"
        "from labkit.loop.engine.probe import Experiment, observe\n"
        "print(observe(Candidate({}), Experiment('keys?', sys.argv[1])).output)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": CANARY}
    out = subprocess.run(
        [sys.executable, "-c", script, LOOT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=REPO,
    ).stdout
    assert "env: None" in out and "/proc/" in out  # the probe ran and looked
    assert CANARY not in out


def test_without_isolation_the_probe_environment_is_still_an_allow_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LABKIT_SANDBOX", "process")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    obs = observe(Candidate({}), Experiment("keys?", "import os\nprint(dict(os.environ))\n"))
    assert "PATH" in obs.output and CANARY not in obs.output
