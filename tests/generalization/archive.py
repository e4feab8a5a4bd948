"""A document archive browsed as a tree: a recursive listing that prints folders before the files inside them.

Written as plain Python with module globals as the state, shaped like a cloud drive's "list everything" call.
What it exercises, each a generic rule:

- ``list_tree`` returns every path of the archive, the seven folders (ending in ``/``) first and the one document
  last, as a file browser lists them; ``read_document`` refuses a folder. A call contributes only a few elements
  of a long list to the pool (``EngineConfig.values_per_export``, 3). Taken from the front they would all be
  folders, a second listing call would offer the next three folders, the document would never be offered, and
  ``list_tree -> read_document`` would never be found. They are taken spread over the list, first to last
  (:func:`libra.induction.explore.values.spread`), so the document is among them.
- ``archive_document`` moves a document under ``old/`` and answers with its new path, which ``read_document``
  then takes; ``make_folder`` creates a folder, which it does not take.
"""

from __future__ import annotations

from typing import TypedDict

from . import VALUE

_FOLDERS: set[str] = {
    "2023/",
    "2023/receipts/",
    "2024/",
    "2024/invoices/",
    "2024/letters/",
    "2024/letters/drafts/",
    "2024/taxes/",
}
_DOCUMENTS: dict[str, str] = {"2024/letters/lease.txt": "The lease runs until March."}


class Moved(TypedDict):
    """Where a document went."""

    path: str


def list_tree() -> list[str]:
    """List every folder and document in the archive, recursively: the folders first, then the documents.

    :returns: The paths; a folder's path ends with a slash.
    """
    return sorted(_FOLDERS) + sorted(_DOCUMENTS)


def read_document(path: str) -> str:
    """Read a document.

    :param path: Path of the document.
    :returns: The document's text.
    """
    if path in _FOLDERS or path.endswith("/"):
        raise IsADirectoryError(f"'{path}' is a folder, not a document")
    if path not in _DOCUMENTS:
        raise FileNotFoundError(f"no document at '{path}'")
    return _DOCUMENTS[path]


def archive_document(path: str) -> Moved:
    """Move a document into the ``old/`` folder.

    :param path: Path of the document.
    :returns: The document's new path.
    """
    text = read_document(path)
    new = "old/" + path.rsplit("/", 1)[-1]
    del _DOCUMENTS[path]
    _FOLDERS.add("old/")
    _DOCUMENTS[new] = text
    return Moved(path=new)


def make_folder(path: str) -> dict:
    """Create a folder.

    :param path: Path of the new folder.
    :returns: The folder's path, ending with a slash.
    """
    if not path.strip():
        raise ValueError("path must not be empty")
    path = path.rstrip("/") + "/"
    if path in _FOLDERS or path.rstrip("/") in _DOCUMENTS:
        raise FileExistsError(f"'{path}' already exists")
    _FOLDERS.add(path)
    return {"path": path}


DESIGNED = [
    # The listing reveals the document (last, after seven folders): it is read and archived by its path.
    ("archive.list_tree", "archive.read_document", VALUE, None, "path"),
    ("archive.list_tree", "archive.archive_document", VALUE, None, "path"),
    # An archived document is read at its new path.
    ("archive.archive_document", "archive.read_document", VALUE, "path", "path"),
]

EXCLUDED = [
    # A folder is never opened or archived.
    ("archive.make_folder", "archive.read_document", None, None, None),
    ("archive.make_folder", "archive.archive_document", None, None, None),
    # A new folder's path is the caller's to choose.
    (None, "archive.make_folder", None, None, "path"),
]
