"""A free-text search term is the stem every invented text contains, so a search reveals what the exploration wrote."""

from __future__ import annotations

from typing import TypedDict

from libra.induction.build import BuildOptions, build_library
from libra.values.conventions import field_text, search_term_literal
from libra.values.generator import literal_for

from .induction_toys import ClassesBenchmark


class Match(TypedDict):
    note_id: int
    content: str


class Matches(TypedDict):
    matches: list[Match]


class Board:
    """Notes anyone may post; a search by keyword finds notes whose text contains it."""

    def __init__(self) -> None:
        self.notes: dict[int, str] = {}

    def post_note(self, content: str) -> dict:
        """Post a note.

        Args:
            content: Content of the note.
        """
        self.notes[len(self.notes) + 7] = content
        return {"posted": True}

    def search_notes(self, keyword: str) -> Matches:
        """Search for notes containing a keyword.

        Args:
            keyword: Keyword to search for in the content of the notes.
        """
        return {
            "matches": [{"note_id": i, "content": c} for i, c in self.notes.items() if keyword.lower() in c.lower()]
        }

    def read_note(self, note_id: int) -> dict:
        """Read a note.

        Args:
            note_id: The id of an existing note.
        """
        if note_id not in self.notes:
            raise KeyError(f"no note {note_id}")
        return {"content": self.notes[note_id]}


def test_a_search_term_is_contained_in_every_invented_text() -> None:
    term = literal_for("keyword", {"type": "string"})
    assert term == search_term_literal("keyword")
    for field in ("content", "message", "title"):
        assert term in field_text(field)
    assert search_term_literal("content") is None


def test_a_search_reveals_the_record_the_exploration_posted() -> None:
    # post_note reveals no id; only the search does. With a term spelled from its own name ("sample keyword") the
    # search matched nothing and search_notes -> read_note was never tested.
    lib = build_library(ClassesBenchmark(Board), None, BuildOptions(workers=0, progress=False))
    edges = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    assert ("Board.search_notes", "Board.read_note", "provenance") in edges, sorted(edges)
