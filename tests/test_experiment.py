import os
import time

from labkit.core.types import Candidate
from labkit.loop.probe import Experiment, observe


def test_a_probe_prints_what_it_observes():
    obs = observe(
        Candidate({"m.py": "KEY = 'p1'\n"}), Experiment("which key?", "import m\nprint(m.KEY)\n")
    )
    assert obs.output == "p1" and obs.exit_code == 0 and not obs.timed_out


def test_a_hung_probe_is_killed_with_everything_it_spawned(tmp_path):
    pidfile = tmp_path / "child.pid"
    probe = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('spawned', flush=True)\n"
        "time.sleep(600)\n"
    )
    obs = observe(Candidate({}), Experiment("hang", probe), timeout=3)
    assert obs.timed_out and obs.exit_code is None and "spawned" in obs.output
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
            with open(f"/proc/{child}/stat") as f:  # a zombie counts as dead (PID 1 may not reap)
                if f.read().split()[2] == "Z":
                    break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the probe's child {child} survived the kill")
