"""Importers: problems in formats researchers already have, written out as labkit case folders.

Each importer writes an ordinary case folder (case.json, code, protected tests, the
reference patch, and a scripted transcript whose one round proposes that patch), so the
result is loaded, checked and run like any other case.
"""
