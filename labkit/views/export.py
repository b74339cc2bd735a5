"""A marimo notebook as one HTML file that opens offline: no server, no CDN, no network.

`marimo export html` writes a snapshot of a run whose frontend loads from a CDN. Browsers
refuse ES-module <script src> over file:// (origin "null"), so pointing those URLs at a
folder does not help. Instead every frontend file of the *installed* marimo package is
embedded in the page; a small classic script turns each into a blob: URL and registers an
import map, so chunks import each other through fixed https://marimo-frontend.invalid/...
names. `.invalid` never resolves: a reference we failed to rewrite fails in the browser
instead of quietly reaching the network.

    python -m labkit.views.export notebooks/cache_isolation.py -o build/cache_isolation.html
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import mimetypes
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

from labkit.core.errors import OfflineExportError

KEY_BASE = "https://marimo-frontend.invalid/assets/"
# Set while a notebook runs for a static export: controls that need a kernel are disabled
# there and say so (the stepper keeps working: its pages are in the page itself).
STATIC_ENV = "LABKIT_STATIC_EXPORT"
STATIC_NOTE = "static copy: this control needs the live notebook (`./run lab`)"


def is_static_export() -> bool:
    """True while the notebook runs to be exported as static HTML (export_offline sets it)."""
    return os.environ.get(STATIC_ENV) == "1"


_TAG = re.compile(r"""<(script|link)\b(?:[^>"']|"[^"]*"|'[^']*')*>(?:</script>)?""", re.I)
_ATTR = re.compile(r"""\s(src|href|rel|as)\s*=\s*(["'])(.*?)\2""", re.I | re.S)
_RELATIVE = re.compile(r"""(["'`])\./([\w.\-]+)\1""")  # "./name.js" inside a chunk
_CSS_URL = re.compile(r"""url\(\s*(["']?)(?:\./)?([\w.\-]+)\1\s*\)""")


def marimo_assets() -> Path:
    """The frontend files shipped inside the installed marimo package (found without importing it)."""
    spec = find_spec("marimo")
    if spec is None or spec.origin is None:
        raise OfflineExportError("marimo is not installed in this environment")
    assets = Path(spec.origin).parent / "_static" / "assets"
    if not assets.is_dir():
        raise OfflineExportError(f"marimo's bundled frontend is missing: {assets} does not exist")
    return assets


def offline_html(html: str, assets: Path | None = None) -> str:
    """Rewrite a `marimo export html` page so it loads every asset from itself, not a CDN."""
    sources = _sources(str(assets or marimo_assets()))
    base = _asset_base(html)
    out: list[str] = []
    pos = 0
    for m in _TAG.finditer(html):
        tag = m.group(0)
        attrs = {k.lower(): v for k, _, v in _ATTR.findall(tag)}
        url = attrs.get("src") or attrs.get("href") or ""
        if not url.startswith(base):
            continue
        out.append(html[pos : m.start()])
        pos = m.end()
        name = url[len(base) :].removeprefix("assets/")
        rel = attrs.get("rel", "").lower()
        if m.group(1).lower() == "script":
            _require(name, sources, url)
            out.append(f'<script type="module">import "{KEY_BASE}{name}";</script>')
        elif rel == "stylesheet":
            _require(name, sources, url)
            out.append(f"<script>__labkitStylesheet({json.dumps(name)})</script>")
        # modulepreload, preload, icons and the manifest only speed up a CDN load: dropped.
    out.append(html[pos:])
    page = "".join(out)
    if base in page:
        where = page.index(base)
        raise OfflineExportError(
            f"the export still refers to the CDN after rewriting: …{page[where - 80 : where + 120]}…"
        )
    head = re.search(r"<head[^>]*>", page, re.I)
    if head is None:
        raise OfflineExportError("the export has no <head>; is this a marimo HTML export?")
    blob = json.dumps(sources, separators=(",", ":")).replace("<", "\\u003c")
    loader = (
        f'<script type="application/json" id="labkit-marimo-assets">{blob}</script>'
        f"<script>{_LOADER.replace('KEY_BASE', json.dumps(KEY_BASE))}</script>"
    )
    page = page[: head.end()] + loader + page[head.end() :]
    body = re.search(r"<body[^>]*>", page, re.I)
    if body is not None:  # say once, on top, what a static copy can and cannot do
        page = page[: body.end()] + STATIC_BANNER + page[body.end() :]
    return page


STATIC_BANNER = (
    '<div id="labkit-static-banner" style="position:sticky;top:0;z-index:1000;background:#fff8e1;'
    'border-bottom:1px solid #e0c060;padding:0.4em 1em;font:14px sans-serif">'
    "Static copy of a labkit notebook: its outputs, without the code (that is the notebook's .py file). "
    "The round steppers work offline; sliders, buttons and other "
    "controls need the live notebook (<code>./run lab</code>) and change nothing here.</div>"
)


# Runs before any module: blob: URLs for every asset, then the import map that names them.
# The fragment is for marimo's own checks: its preloader picks stylesheet vs module by
# `url.endsWith(".css")`, and it copies a stylesheet into widgets' shadow roots only if
# the URL contains "/@marimo-team/". Fragments never reach a fetch.
_LOADER = """(() => {
  const sources = JSON.parse(document.getElementById("labkit-marimo-assets").textContent);
  const urls = {};
  for (const [name, text] of Object.entries(sources)) {
    const type = name.endsWith(".css") ? "text/css" : "text/javascript";
    urls[KEY_BASE + name] = URL.createObjectURL(new Blob([text], { type })) + "#/@marimo-team/" + name;
  }
  const map = document.createElement("script");
  map.type = "importmap";
  map.textContent = JSON.stringify({ imports: urls });
  document.currentScript.after(map);
  window.__labkitStylesheet = (name) => {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = urls[KEY_BASE + name];
    document.currentScript.after(link);
  };
})();"""


def export_offline(
    notebook: Path, out: Path, *, timeout: float = 1800, marimo: Sequence[str] = ("-m", "marimo")
) -> Path:
    """Run the notebook with `marimo export html` and write the offline page to `out`.

    `marimo`: the interpreter's arguments that start marimo's command line. The tests start it
    through a wrapper (tests/marimo_probes.py) that also reads what the run computed, so one
    run of a notebook serves both its checks and its static copy.
    """
    notebook = Path(notebook)
    if not notebook.is_file():
        raise OfflineExportError(f"no notebook at {notebook}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # marimo keeps a session file in <notebook dir>/__marimo__/ unless a pycache prefix is set
    # (then under it, for an absolute path). The prefix is kept in build/ across exports, with
    # bytecode written there, and starts with the install's (_seed_bytecode). The session file
    # is removed each time.
    prefix = _pycache_prefix()
    _seed_bytecode(prefix)
    session = prefix / Path(*notebook.resolve().parent.parts[1:]) / "__marimo__"
    with tempfile.TemporaryDirectory() as tmp:
        shutil.rmtree(session, ignore_errors=True)
        raw = Path(tmp) / (notebook.stem + ".html")
        env = {
            "MARIMO_SKIP_UPDATE_CHECK": "1",
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            STATIC_ENV: "1",
            "PYTHONPYCACHEPREFIX": str(prefix),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [
            sys.executable,
            *marimo,
            "export",
            "html",
            str(notebook.resolve()),
            "-o",
            str(raw),
            "-f",
            # outputs only, as `marimo run` shows the app: a code editor per cell cost the page
            # 2-3 s of CPU on every open; the code is the notebook's .py file
            "--no-include-code",
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not raw.is_file():
            raise OfflineExportError(
                f"`marimo export html {notebook}` failed (exit {proc.returncode}):\n"
                + (proc.stderr or proc.stdout)[-3000:]
            )
        out.write_text(offline_html(raw.read_text(encoding="utf-8")), encoding="utf-8")
        shutil.rmtree(session, ignore_errors=True)
    return out


def _seed_bytecode(prefix: Path) -> None:
    """Link the install's compiled bytecode into `prefix`, once (a marker file says so).

    With PYTHONPYCACHEPREFIX set, Python reads and writes bytecode only under the prefix (the
    source folders' tree mirrored there), never in the __pycache__ folders the install filled.
    From an empty prefix the first export compiled everything it imports from source (lessons:
    15 s of CPU, 7 s seeded). A link shares the file: a module whose source changes gets a new
    file written in its place, never into the install's.

    Only a speed-up: if the prefix cannot be written (a full disk, say), seeding stops, leaves no
    marker, and the export goes on (and reports the disk itself if it cannot write either).
    """
    done = prefix / ".seeded"
    if done.is_file():
        return
    suffix = f".{sys.implementation.cache_tag}.pyc"  # not the optimized (.opt-1) variants
    roots = {sysconfig.get_path(p) for p in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # labkit, as imported
    try:
        for root in sorted(roots):
            for folder, _, files in os.walk(root):
                if os.path.basename(folder) != "__pycache__":
                    continue
                mirror = prefix / os.path.dirname(folder).lstrip(os.sep)
                mirror.mkdir(parents=True, exist_ok=True)
                for name in files:
                    if name.endswith(suffix) and name.count(".") == 2:
                        _link(os.path.join(folder, name), mirror / name)
        done.touch()
    except OSError:
        return


def _link(source: str, target: Path) -> None:
    try:
        os.link(source, target)
    except FileExistsError:
        pass  # compiled there already (by an earlier export, or one running beside this one)
    except OSError:  # another file system: a copy
        shutil.copyfile(source, target)


def _pycache_prefix() -> Path:
    """build/export-pycache (or $LABKIT_BUILD's): the exports' bytecode and marimo's session files."""
    from labkit.core.paths import CHECKOUT

    return Path(os.environ.get("LABKIT_BUILD") or CHECKOUT.parent / "build") / "export-pycache"


def _asset_base(html: str) -> str:
    m = re.search(r"""<script\b[^>]*\bsrc=(["'])([^"']*?)assets/index-[\w\-]+\.js\1""", html)
    if m is None:
        raise OfflineExportError("no marimo frontend entry script found; is this a marimo HTML export?")
    return m.group(2)


def _require(name: str, sources: dict[str, str], url: str) -> None:
    if name not in sources:
        raise OfflineExportError(f"{url} is not in the installed marimo's bundle (exported by another marimo version?)")


@functools.cache
def _sources(assets: str) -> dict[str, str]:
    """name -> text of every script and stylesheet of the bundled frontend, rewritten to load inline."""
    folder = Path(assets)
    names = {p.name for p in folder.iterdir()}
    out: dict[str, str] = {}
    for p in sorted(folder.iterdir()):
        if p.suffix == ".js":
            out[p.name] = _chunk(p, names)
        elif p.suffix == ".css":
            out[p.name] = _css(p, names)
    return out


def _chunk(path: Path, names: set[str]) -> str:
    """A chunk whose sibling references are absolute names the import map resolves."""
    text = path.read_text(encoding="utf-8")

    def absolute(m: re.Match[str]) -> str:
        q, name = m.group(1), m.group(2)
        return f"{q}{KEY_BASE}{name}{q}" if name in names else m.group(0)

    text = _RELATIVE.sub(absolute, text)
    # A data: URL is no base for relative URLs; give each chunk its name as its base instead.
    return text.replace("import.meta.url", json.dumps(KEY_BASE + path.name))


def _css(path: Path, names: set[str]) -> str:
    """A stylesheet with its fonts and images inlined."""

    def inline(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in names:
            return m.group(0)
        kind = mimetypes.guess_type(name)[0] or _FONT_TYPES.get(Path(name).suffix, "application/octet-stream")
        return f"url({_data_url(kind, (path.parent / name).read_bytes())})"

    return _CSS_URL.sub(inline, path.read_text(encoding="utf-8"))


_FONT_TYPES = {".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf"}


def _data_url(kind: str, data: bytes) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.views.export", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a marimo notebook (.py) or a marimo HTML export (.html)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="where to write the offline page")
    args = parser.parse_args(argv)
    try:
        if args.source.suffix == ".html":
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(offline_html(args.source.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            export_offline(args.source, args.output)
    except OfflineExportError as e:
        print(f"labkit.views.export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB), opens offline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
