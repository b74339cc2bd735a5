"""The tests' OpenAI-compatible stub server is labkit's own (labkit.models.stub_server)."""

from labkit.models.stub_server import StubOpenAI

__all__ = ["StubOpenAI"]
