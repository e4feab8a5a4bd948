"""The ``build`` command's options and a project file's ``[build]`` table are one set of definitions.

The table is read below the command line (:mod:`libra.sources.build_options`), yet each of its keys must convert
and refuse a value exactly as the option it names: same type, same check, same words.
"""

from __future__ import annotations

import typer

from libra.cli.main import app
from libra.sources.build_options import build_option_params

#: ``build`` parameters a project file cannot set: where the result goes, the library it updates, the sources, the help.
NOT_IN_FILE = ("benchmark", "out", "config", "tools", "help", "update")


def test_the_build_table_declares_every_build_option_as_the_command_does():
    command = typer.main.get_command(app).commands["build"]  # type: ignore[attr-defined]
    from_command = {p.opts[0][2:]: p for p in command.params if p.name not in NOT_IN_FILE}
    from_file = build_option_params()
    assert list(from_file) == list(from_command)  # same keys, in the order an unknown key's message lists them
    for key, param in from_file.items():
        other = from_command[key]
        assert param.name == other.name, key
        assert param.type_descriptor.annotation == other.type_descriptor.annotation, key
        assert param.is_flag == other.is_flag, key
        assert param.default == other.default, key
        check = getattr(param.callback, "check", None)
        assert check is getattr(other.callback, "check", None), key  # the very same check function


def test_sources_never_import_the_command_line():
    from .test_imports import import_graph

    wrong = [
        f"{module} -> {dep}"
        for module, deps in import_graph().items()
        if module.startswith("libra.sources")
        for dep in deps
        if dep.startswith("libra.cli")
    ]
    assert wrong == []
