"""models: every model call goes through one gateway (litellm), with offline providers, a cache and batches."""
