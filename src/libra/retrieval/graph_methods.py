"""Retrieval methods that use an executable library (registered into :mod:`libra.eval.methods`)."""
