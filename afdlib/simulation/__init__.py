"""The batch-overlap pipeline simulated under jitter, and the studies built on it."""
