"""core: the vocabulary every layer shares: types, errors, patches, statistics, data paths. Imports nothing above it."""
