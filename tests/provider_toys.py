"""A notes app whose tools each stop at a different step of Algorithm 1, for ``tests/test_provider_causes.py``.

Module-global state, as a small app keeps it. ``create_note`` provides the ``note_id`` that ``read_note`` needs
(the one relation); every other tool provides nothing, each for its own reason.
"""

from __future__ import annotations

_notes: dict[str, str] = {}


def create_note(text: str) -> dict:
    """Create a note.

    Args:
        text: What the note says.

    Returns:
        The new note's id.
    """
    note_id = f"n{len(_notes) + 1}"
    _notes[note_id] = text
    return {"note_id": note_id}


def read_note(note_id: str) -> dict:
    """Read a note.

    Args:
        note_id: The id of an existing note.

    Returns:
        The note's id and text.
    """
    if note_id not in _notes:
        raise KeyError(f"no note {note_id!r}")
    return {"note_id": note_id, "text": _notes[note_id]}


def has_notes() -> bool:
    """Whether any note exists."""
    return bool(_notes)


def search_archive(query: str) -> list[str]:
    """Search the archive of old notes (it is empty).

    Args:
        query: Words to look for.

    Returns:
        The ids of the archived notes that match.
    """
    return []


def sync_cloud() -> dict:
    """Sync the notes to the cloud (the cloud is never reachable here)."""
    raise ConnectionError("cloud unreachable")
