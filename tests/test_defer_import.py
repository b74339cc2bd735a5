"""labkit.core.lazy.defer_import: a third-party module imported eagerly elsewhere is paid for on first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_deferred_module_loads_on_first_call_or_attribute(tmp_path, monkeypatch) -> None:
    (tmp_path / "slowmod.py").write_text("LOADS = 1\ndef f(x):\n    return x + LOADS\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from labkit.core.lazy import defer_import

    assert defer_import("slowmod", ["f"])
    shim = sys.modules["slowmod"]
    from slowmod import f  # what an eager importer does: no load yet

    assert sys.modules["slowmod"] is shim and not hasattr(shim, "__path__")
    assert f(1) == 2  # the first call imports the real module and passes the call on
    real = sys.modules["slowmod"]
    assert real is not shim and real.LOADS == 1 and shim.LOADS == 1
    assert not defer_import("slowmod", ["f"])  # already imported: left alone
    assert not defer_import("no_such_module_here", ["f"])  # not installed: nothing installed
    monkeypatch.delitem(sys.modules, "slowmod")


def test_altair_no_longer_pays_for_rfc3987_syntax_at_import_and_iri_checks_still_work() -> None:
    # jsonschema (imported by altair) imports rfc3987_syntax, which builds its parsers at import
    code = textwrap.dedent("""
        import sys
        import labkit.views, altair
        print("syntax_helpers" in str(sorted(sys.modules)))
        import jsonschema
        fc = jsonschema.FormatChecker()
        print(fc.conforms("http://example.com/ü", "iri"), fc.conforms("not an iri", "iri"))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "False"], out.stdout
