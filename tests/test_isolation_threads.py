"""The warm runner survives the thread that started it.

bwrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
runner ends. A marimo cell or a thread pool used to start it and finish, and the next caller
found a runner SIGKILLed under its feet ("the isolated runner ended (exit code -9)").
"""

from __future__ import annotations

import sys
import threading
import time

import pytest

from labkit.core.types import Candidate
from labkit.grading import isolation
from tests.test_hostile import API, HIT, ISO, LEAKY, SUITE
from tests.test_hostile_runner import ROOMY

pytestmark = pytest.mark.slow


def test_a_runner_first_started_in_a_finished_thread_still_serves() -> None:
    isolation.shutdown()
    first = []
    worker = threading.Thread(target=lambda: first.append(ROOMY.run(Candidate({"cache.py": LEAKY}), SUITE)))
    worker.start()
    worker.join()
    assert first and first[0].evidence.isolated, "the first run was not isolated"
    runner = isolation._runners[sys.executable]
    time.sleep(1.0)  # the starting thread is gone; a runner tied to it would be dead by now
    assert runner.proc.poll() is None, f"the runner died with its thread ({runner.proc.poll()})"
    again = ROOMY.run(Candidate({"cache.py": LEAKY + "\n# another candidate\n"}), SUITE)
    assert again.evidence.isolated, again.evidence
    assert (again.fail_to_fail, again.pass_to_pass) == ((ISO,), (HIT, API))
