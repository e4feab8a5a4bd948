"""``python -m libra.cli``: the ``libra`` command."""

from libra.cli.main import main

main()
