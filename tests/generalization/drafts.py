"""A drafts folder: write, read, move and patch text drafts, and list them by kind.

Shaped like a file server's editing tools, written as plain Python (no schemas beyond the annotations). What it
exercises, each a generic rule of the proposer:

- ``list_drafts`` documents its choices in prose, each quoted in parentheses after what it means ("open drafts
  ('open'), archived drafts ('archived') or all drafts ('all')"), and its refusal of anything else lists nothing
  to learn from: the choices are read from the description (``schema.described_choices``, quoted alternatives),
  so the listing succeeds and the paths it reveals reach ``read_draft``.
- ``move_draft``'s refusal of a missing source quotes both the source and the destination it was given
  ("rename 'a' -> 'b'"): a message quoting several of the call's values does not say which one names nothing, so
  no literal is turned into a reference on its account (``feedback.missing_references``), and the destination
  stays a new name the call chooses. ``write_draft -> move_draft`` is then found.
- ``patch_draft`` takes a list of edits whose ``old_text`` must be an exact piece of the current text; its refusal
  says it "could not find" the invented piece, so that leaf alone becomes a reference and texts other calls
  produced (the text a draft was written with) are offered there.
- Module globals are the state (no class): every refusal is raised, as validation in code does.
"""

from __future__ import annotations

from typing import TypedDict

from . import VALUE

_DRAFTS: dict[str, str] = {"welcome.txt": "Welcome to your drafts."}
_ARCHIVED: set[str] = set()


class Edit(TypedDict):
    """One replacement in a draft."""

    old_text: str
    new_text: str


def write_draft(path: str, text: str) -> dict:
    """Create a draft, or overwrite the one at that path.

    :param path: Where to write the draft, relative to the drafts folder.
    :param text: The draft's full text.
    :returns: The draft's path and length.
    """
    if not path.strip():
        raise ValueError("path must not be empty")
    _DRAFTS[path] = text
    _ARCHIVED.discard(path)
    return {"path": path, "length": len(text)}


def read_draft(path: str) -> str:
    """Read a draft's full text.

    :param path: Path of the draft.
    :returns: The text.
    """
    if path not in _DRAFTS:
        raise FileNotFoundError(f"ENOENT: no such draft, open '{path}'")
    return _DRAFTS[path]


def move_draft(source: str, destination: str) -> str:
    """Move or rename a draft.

    :param source: The draft to move.
    :param destination: The draft's new path.
    :returns: A confirmation.
    """
    if source not in _DRAFTS:
        raise FileNotFoundError(f"ENOENT: no such draft, rename '{source}' -> '{destination}'")
    if destination in _DRAFTS:
        raise FileExistsError(f"Destination already exists: {destination}")
    _DRAFTS[destination] = _DRAFTS.pop(source)
    if source in _ARCHIVED:
        _ARCHIVED.discard(source)
        _ARCHIVED.add(destination)
    return f"Moved {source} to {destination}"


def patch_draft(path: str, edits: list[Edit]) -> str:
    """Replace pieces of a draft's text.

    :param path: Path of the draft.
    :param edits: The replacements, each an exact piece of the current text and what replaces it.
    :returns: The draft's new text.
    """
    if path not in _DRAFTS:
        raise FileNotFoundError(f"ENOENT: no such draft, open '{path}'")
    if not edits:
        raise ValueError("give at least one edit")
    text = _DRAFTS[path]
    for edit in edits:
        if not edit["old_text"] or edit["old_text"] not in text:
            raise ValueError(f"Could not find exact match for edit:\n{edit['old_text']}")
        text = text.replace(edit["old_text"], edit["new_text"], 1)
    _DRAFTS[path] = text
    return text


def archive_draft(path: str) -> str:
    """Archive a draft: it stays readable, and is listed as archived.

    :param path: Path of the draft.
    :returns: A confirmation.
    """
    if path not in _DRAFTS:
        raise FileNotFoundError(f"ENOENT: no such draft, open '{path}'")
    _ARCHIVED.add(path)
    return f"Archived {path}"


def list_drafts(kind: str) -> list[str]:
    """List the drafts' paths.

    :param kind: Whether to list open drafts ('open'), archived drafts ('archived') or all drafts ('all').
    :returns: The paths, sorted.
    """
    if kind not in ("open", "archived", "all"):
        raise ValueError(f"invalid kind: {kind}")
    return sorted(p for p in _DRAFTS if kind == "all" or (p in _ARCHIVED) == (kind == "archived"))


DESIGNED = [
    # A draft written at a path is read, moved, patched and archived by that path.
    ("drafts.write_draft", "drafts.read_draft", VALUE, "path", "path"),
    ("drafts.write_draft", "drafts.move_draft", VALUE, "path", "source"),
    ("drafts.write_draft", "drafts.archive_draft", VALUE, "path", "path"),
    # A patch replaces a piece of the text the draft holds: the text it was written with.
    ("drafts.write_draft", "drafts.patch_draft", VALUE, "text", "edits"),
    # The paths a listing reveals are the drafts that exist.
    ("drafts.list_drafts", "drafts.read_draft", VALUE, None, "path"),
]

EXCLUDED = [
    # A move's destination is a new name: no produced path is its prerequisite.
    (None, "drafts.move_draft", None, None, "destination"),
    # Listing takes a choice, not a value another tool produced.
    (None, "drafts.list_drafts", None, None, "kind"),
]
