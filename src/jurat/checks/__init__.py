"""Deterministic code checks and the sandbox."""
