"""The ``libra`` command: one module per group of commands, each thin (parse the options, call the library, print)."""

from libra.cli.main import app, main

__all__ = ["app", "main"]
