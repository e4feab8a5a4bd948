"""Placeholder until bench_blind.py --known writes it."""

KNOWN_MISSES: dict = {}
KNOWN_HITS: dict = {}
KNOWN_SILENT: dict = {}
