"""Views: altair charts and widgets. The only part of labkit that may import UI libraries."""

from labkit.core.lazy import defer_import

# jsonschema (imported by altair) imports rfc3987_syntax when it is installed (JupyterLab's
# dependencies bring it), which builds ~30 Earley parsers at import: seconds on every notebook
# start. Its one function jsonschema uses (IRI format checks) now loads it on first call.
defer_import("rfc3987_syntax", ["is_valid_syntax"])
