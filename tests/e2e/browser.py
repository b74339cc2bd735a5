"""The real-browser helpers live with the benchmarks (benchmarks/_browser.py), shared with
benchmarks/step_latency.py; the e2e tests load that file as this module (no sys.path edits)."""

import importlib.util
import sys
from pathlib import Path

_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "_browser.py"
_spec = importlib.util.spec_from_file_location(__name__, _FILE)
assert _spec is not None and _spec.loader is not None, f"cannot load {_FILE}"
_module = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _module  # `from e2e import browser` gets benchmarks/_browser.py itself
_spec.loader.exec_module(_module)
