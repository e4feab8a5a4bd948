"""A working directory as a shell presents it: a search that prints paths as ``./name``, tools that take bare names.

Written as plain Python with module globals as the state. What it exercises, each a generic rule:

- ``find`` prints every match as a path relative to the working directory, spelled ``./name`` as Unix ``find``
  does; ``cat`` and ``compare`` take a file's bare name and refuse a ``/`` in it. ``./notes.txt`` and
  ``notes.txt`` name the same file, so the engine offers a path in its plain spelling
  (:func:`libra.induction.paths.canonical_path`); offered as printed, every offer fails and ``find`` provides
  nothing.
- ``compare`` takes two files and refuses to compare a file with itself, as ``cp`` refuses to copy a file onto
  itself. The search finds one file (the only text file) and the history another, so each comparison takes one
  value of each, and both of its inputs are tested.
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


def compare(file_a: str, file_b: str) -> list[str]:
    """Compare two files line by line.

    :param file_a: Name of the first file.
    :param file_b: Name of the second file.
    :returns: The lines only one of them has, prefixed with ``-`` (first file) or ``+`` (second file).
    """
    a, b = _name(file_a), _name(file_b)
    _RECENT[:0] = [n for n in (a, b) if n not in _RECENT]
    if a == b:
        raise ValueError(f"'{a}' and '{b}' are the same file")
    left, right = _FILES[a].splitlines(), _FILES[b].splitlines()
    return [f"- {line}" for line in left if line not in right] + [f"+ {line}" for line in right if line not in left]


DESIGNED = [
    # The search and the history reveal the files that the reader and the comparison take by name. The search
    # finds one file (the only text file), the history another: a comparison needs one of each.
    ("workdir.find", "workdir.cat", VALUE, "files", "file_name"),
    ("workdir.find", "workdir.compare", VALUE, "files", "file_a"),
    ("workdir.find", "workdir.compare", VALUE, "files", "file_b"),
    ("workdir.recent", "workdir.cat", VALUE, "files", "file_name"),
    ("workdir.recent", "workdir.compare", VALUE, "files", "file_a"),
    ("workdir.recent", "workdir.compare", VALUE, "files", "file_b"),
]

EXCLUDED = [
    # A file's text and a list of differing lines name no file.
    ("workdir.cat", None, None, None, None),
    ("workdir.compare", None, None, None, None),
    # The search's criterion is the caller's choice, and the history takes nothing.
    (None, "workdir.find", None, None, None),
    (None, "workdir.recent", None, None, None),
]
