import subprocess
import sys

import labkit


def test_every_public_name_resolves():
    assert labkit.__all__ == sorted(labkit.__all__)
    for name in labkit.__all__:
        assert getattr(labkit, name) is not None


def test_import_labkit_is_light():
    code = "import sys, labkit; print(sorted(m for m in ('litellm', 'polars', 'altair', 'marimo') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
