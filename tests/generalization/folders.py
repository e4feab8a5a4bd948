"""A shared folder: folders and files listed together under one field, and tools that work only on files.

Shaped like a file server's browsing and editing tools, written as plain Python with module globals as the state.
What it exercises, each a generic rule:

- ``list_entries`` returns folders and files alike, each as a ``path`` (with its ``kind`` beside it), folders
  first as a file browser sorts them. A folder's path fits ``read_file``'s and ``edit_file``'s ``path`` exactly as
  well as a file's does, and both refuse a folder. Both walks of the sandbox fill an input with the best-named
  value they have seen, the folder; a failed call with one value of a name says little about the other values of
  that name, so each retries the next equally named one, the file (``libra.probing.rebind``: contract checking's
  ``Retries._rebinds``, the exploration's ``Engine._rebinds``).
- Only a run with a file shows what else is wrong with an edit: its invented ``old_text`` is not in the file, and
  the refusal says it "could not find" it, so that leaf becomes a reference (``feedback.missing_references``) and
  the text a file was written with, or the text the reader returned, is offered there. With the folder alone
  neither the reader nor the editor is seen succeeding in checking, the editor never succeeds at all, and
  ``write_file -> edit_file`` is never found. In the exploration, the text offered to the edit's leaf comes with
  a ``path`` filled by the name rule, the folder first: only the retry with the listed file makes the edit
  succeed, and so tests the listing's path (``list_entries -> edit_file``) and the reader's text
  (``read_file -> edit_file``).
- The path of an edit whose text was offered as a leaf is tested like any other input: its control replaces the
  path, not the leaf (``write_file -> edit_file``, ``path -> path``).
- ``make_folder`` creates a folder, which neither reader nor editor takes: no relation from it to them.
"""

from __future__ import annotations

from typing import TypedDict

from . import VALUE

_FOLDERS: set[str] = {"notes"}
_FILES: dict[str, str] = {"notes/todo.txt": "Water the plants."}


class Edit(TypedDict):
    """One replacement in a file."""

    old_text: str
    new_text: str


class Entry(TypedDict):
    """One listed folder or file."""

    path: str
    kind: str


def _file(path: str) -> str:
    if path in _FOLDERS:
        raise IsADirectoryError(f"EISDIR: illegal operation on a directory, read '{path}'")
    if path not in _FILES:
        raise FileNotFoundError(f"ENOENT: no such file or directory, open '{path}'")
    return path


def list_entries() -> list[Entry]:
    """List every folder and file in the share, folders first.

    :returns: Each entry's path and whether it is a folder or a file.
    """
    folders = [Entry(path=p, kind="folder") for p in sorted(_FOLDERS)]
    return folders + [Entry(path=p, kind="file") for p in sorted(_FILES)]


def make_folder(path: str) -> dict:
    """Create a folder.

    :param path: Where to create the folder.
    :returns: The new folder's path.
    """
    if not path.strip():
        raise ValueError("path must not be empty")
    if path in _FOLDERS or path in _FILES:
        raise FileExistsError(f"EEXIST: file already exists, mkdir '{path}'")
    _FOLDERS.add(path)
    return {"path": path}


def read_file(path: str) -> str:
    """Read a file's full text.

    :param path: Path of the file to read.
    :returns: The text.
    """
    return _FILES[_file(path)]


def edit_file(path: str, edits: list[Edit]) -> str:
    """Make line-based edits to a text file.

    :param path: Path of the file to edit.
    :param edits: The replacements, each an exact piece of the current text and what replaces it.
    :returns: The file's new text.
    """
    text = _FILES[_file(path)]
    for edit in edits:
        if not edit["old_text"] or edit["old_text"] not in text:
            raise ValueError(f"Could not find exact match for edit:\n{edit['old_text']}")
        text = text.replace(edit["old_text"], edit["new_text"], 1)
    _FILES[path] = text
    return text


def write_file(path: str, text: str) -> dict:
    """Create a file, or overwrite the one at that path.

    :param path: Where to write the file.
    :param text: The file's full text.
    :returns: The file's path and size.
    """
    if not path.strip():
        raise ValueError("path must not be empty")
    if path in _FOLDERS:
        raise IsADirectoryError(f"EISDIR: illegal operation on a directory, open '{path}'")
    _FILES[path] = text
    return {"path": path, "size": len(text)}


DESIGNED = [
    # The listing reveals the file beside the folder; a written file is there too: both are read, and edited, by
    # their path.
    ("folders.list_entries", "folders.read_file", VALUE, "path", "path"),
    ("folders.write_file", "folders.read_file", VALUE, "path", "path"),
    ("folders.list_entries", "folders.edit_file", VALUE, "path", "path"),
    ("folders.write_file", "folders.edit_file", VALUE, "path", "path"),
    # An edit replaces a piece of the file's current text: the text the file was written with, or the text the
    # reader returned. It needs the file written.
    ("folders.write_file", "folders.edit_file", VALUE, "text", "edits"),
    ("folders.read_file", "folders.edit_file", VALUE, None, "edits"),
    ("folders.write_file", "folders.edit_file", "state", None, None),
]

EXCLUDED = [
    # A folder is neither read nor edited: no relation from the tool that creates one.
    ("folders.make_folder", "folders.read_file", None, None, None),
    ("folders.make_folder", "folders.edit_file", None, None, None),
    # An edit's path names the file, never a piece of text; whether an entry is a folder or a file feeds nothing.
    (None, "folders.edit_file", None, "text", "path"),
    ("folders.list_entries", None, None, "kind", None),
    # A new folder's or file's path is the caller's to choose.
    (None, "folders.make_folder", None, None, "path"),
    (None, "folders.write_file", None, None, "path"),
]
