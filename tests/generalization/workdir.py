"""A working directory as a shell presents it: a search that prints paths as ``./name``, tools that take bare names.

Written as plain Python with module globals as the state. What it exercises, each a generic rule:

- ``find`` prints every match as a path relative to the working directory, spelled ``./name`` as Unix ``find``
  does; ``cat`` and ``compare`` take a file's bare name and refuse a ``/`` in it. ``./notes.txt`` and
  ``notes.txt`` name the same file, so the engine offers a path in its plain spelling
  (:func:`libra.probing.paths.canonical_path`); offered as printed, every offer fails and ``find`` provides
  nothing.
- ``compare`` takes two files and refuses to compare a file with itself, as ``cp`` refuses to copy a file onto
  itself and a rate needs two different currencies. ``touch`` creates a file, whose name is then the best-named
  value for both of ``compare``'s inputs: the sweep after the creation (which prefers the creator's values) and
  the offer of the new name would pass it twice. An input filled beside another takes a value no other input of
  the call holds when one fits (:meth:`libra.induction.explore.engine.Engine._best_value`), so the new file is compared
  with one ``find`` or ``recent`` revealed; without that rule, ``touch -> compare`` is never found.
"""

from __future__ import annotations

from typing import TypedDict

from . import VALUE

_FILES: dict[str, str] = {
    "notes.txt": "Buy milk\nCall Ana\n",
    "todo.md": "Buy milk\nWater the plants\n",
}
_RECENT: list[str] = ["todo.md"]


class Found(TypedDict):
    """Files a search or a history lists."""

    files: list[str]


def _name(file_name: str) -> str:
    if "/" in file_name:
        raise ValueError(f"'{file_name}': invalid character '/': give a file name in the working directory")
    if file_name not in _FILES:
        raise FileNotFoundError(f"'{file_name}': no such file")
    return file_name


def find(name_contains: str = "") -> Found:
    """Search the working directory for text files (``*.txt``).

    :param name_contains: Only files whose name contains this text.
    :returns: The paths of the matching files.
    """
    return Found(files=[f"./{n}" for n in sorted(_FILES) if n.endswith(".txt") and name_contains in n])


def recent() -> Found:
    """List the files opened lately, newest first.

    :returns: Their names.
    """
    return Found(files=[n for n in _RECENT if n in _FILES])


def cat(file_name: str) -> str:
    """Print a file's text.

    :param file_name: Name of the file in the working directory.
    :returns: The file's text.
    """
    return _FILES[_name(file_name)]


def touch(file_name: str) -> dict:
    """Create an empty file in the working directory.

    :param file_name: Name of the new file.
    :returns: The new file's name.
    """
    if "/" in file_name or not file_name.strip():
        raise ValueError(f"'{file_name}': give a plain file name")
    if file_name in _FILES:
        raise FileExistsError(f"'{file_name}': file exists")
    _FILES[file_name] = ""
    return {"file_name": file_name}


def compare(file_name1: str, file_name2: str) -> list[str]:
    """Compare two files line by line.

    :param file_name1: Name of the first file.
    :param file_name2: Name of the second file.
    :returns: The lines only one of them has, prefixed with ``-`` (first file) or ``+`` (second file).
    """
    a, b = _name(file_name1), _name(file_name2)
    if a == b:
        raise ValueError(f"'{a}' and '{b}' are the same file")
    _RECENT[:0] = [n for n in (a, b) if n not in _RECENT]
    left, right = _FILES[a].splitlines(), _FILES[b].splitlines()
    return [f"- {line}" for line in left if line not in right] + [f"+ {line}" for line in right if line not in left]


DESIGNED = [
    # The search and the history reveal the files that the reader and the comparison take by name. The search
    # finds one file (the only text file), the history another: a comparison needs one of each.
    ("workdir.find", "workdir.cat", VALUE, "files", "file_name"),
    ("workdir.find", "workdir.compare", VALUE, "files", "file_name1"),
    ("workdir.find", "workdir.compare", VALUE, "files", "file_name2"),
    ("workdir.recent", "workdir.cat", VALUE, "files", "file_name"),
    ("workdir.recent", "workdir.compare", VALUE, "files", "file_name1"),
    ("workdir.recent", "workdir.compare", VALUE, "files", "file_name2"),
    # A created file is there to be read, and compared with another one.
    ("workdir.touch", "workdir.cat", VALUE, "file_name", "file_name"),
    ("workdir.touch", "workdir.cat", "state", None, None),
    ("workdir.touch", "workdir.compare", VALUE, "file_name", "file_name1"),
    ("workdir.touch", "workdir.compare", VALUE, "file_name", "file_name2"),
    ("workdir.touch", "workdir.compare", "state", None, None),
]

EXCLUDED = [
    # A file's text and a list of differing lines name no file.
    ("workdir.cat", None, None, None, None),
    ("workdir.compare", None, None, None, None),
    # The search's criterion is the caller's choice, and the history takes nothing.
    (None, "workdir.find", None, None, None),
    (None, "workdir.recent", None, None, None),
    # A new file's name is the caller's to choose.
    (None, "workdir.touch", None, None, "file_name"),
]
