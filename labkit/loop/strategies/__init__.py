"""strategies: what proposes the next candidate. Each is a `labkit.loop.engine.Strategy`.

Model rewrites with or without evidence (`rewrite`), reflectors that answer with a reflection
record (`reflector`), a person's own patch (`handwritten`), dependent steps as a checkpointed
sequence (`sequence`), and the memory wrappers (`memory/`).
"""
