"""Values spelled from a parameter's name where no documentation and no realistic kind applies: our own conventions,
each kept for a reason a build depends on.

- Free text is spelled from its field's name ("sample zip", "sample address 1"): one word for every free string
  makes values coincide across fields, and the engine would then credit relations by coincidence; the shared
  stem "sample" lets a search by containment find what the exploration wrote.
- File and folder names carry their field's qualifier (``source_file`` -> ``source_file.txt``), so two paths of
  one call differ.
- Keys are spelled from their name (``sample_api_key``), distinct per field.
"""

from __future__ import annotations

from libra._util.text import compounds, name_parts, words

#: Addresses that reach a person; they name the person's record like a user name does, though "number" alone is
#: a free quantity.
CONTACT_ADDRESS = {"phonenumber", "mobilenumber", "cellnumber", "phone", "emailaddress"}


def qualifier(name: str, kind: set[str]) -> list[str]:
    """The parts of a parameter's name beyond its kind: ``sender`` in ``sender_email``, ``2`` in ``file2``."""
    parts = name_parts(name)
    glued = {a + b for a, b in zip(parts, parts[1:])}

    def is_kind(p: str) -> bool:
        singular = {p, p[:-1] if p.endswith("s") else p, p[:-2] if p.endswith("es") else p}
        return bool(singular & kind) or any(p in g and g in kind for g in glued)

    return [p for p in parts if not is_kind(p)]


def email_for(name: str) -> str:
    """An e-mail address whose local part is the name's qualifier (``sender`` for ``sender_email``)."""
    q = qualifier(name, {"email", "address", "emailaddress", "mail"})
    return ".".join(q) + "@example.com" if q else "user@example.com"


def field_text(name: str) -> str:
    """A free-text literal derived from the field's own name ("sample zip", "sample address 1").

    Why: one word for every free string ("hello") makes values coincide across fields, and the engine then
    credits relations by coincidence (an ``address1`` value "provides" a ``zip``). A literal spelled from the
    field's name is deterministic, distinct between differently named fields, and still shared by fields of the
    same name, which is where a shared value is meaningful.
    """
    return f"{TEXT_STEM} " + (" ".join(name_parts(name)) or "value")


#: The word every invented free text starts with (:func:`field_text`).
TEXT_STEM = "sample"


#: Words naming a term a search matches against text (not a name or an identifier it looks up).
SEARCH_TERMS = {"keyword", "keywords", "query", "search", "term", "terms"}


def search_term_literal(name: str) -> str | None:
    """The literal of a free-text search term: :data:`TEXT_STEM` alone, else None when ``name`` is no search term.

    Why: a search term spelled from its own name ("sample keyword") is contained in no record, so the search returns
    nothing and never reveals the records that exist. The texts the exploration itself writes are all spelled
    :func:`field_text` ("sample content", "sample message"); the bare stem is contained in every one of them, so a
    search that matches by containment finds what the exploration created, without copying any observed value into the
    call (a search fed an observed value only repeats what its supplier showed, and earns no credit for it).
    """
    return TEXT_STEM if compounds(words(name)) & SEARCH_TERMS else None


def conventional(name: str) -> str:
    """The value of a string parameter that no documentation and no realistic kind names, spelled from its name.

    File and folder names keep their conventional form; the words of the name beyond its kind (``source`` in
    ``source_file``) make the value distinct per field, for the same reason as :func:`field_text`.
    """
    toks = compounds(words(name))
    if toks & {"file", "filename"}:
        q = qualifier(name, {"file", "filename", "name", "new", "path", "to", "of"})
        return "_".join(q + ["file"]) + ".txt" if q else "new_file.txt"
    if toks & {"dir", "dirname", "directory", "folder"}:
        q = qualifier(name, {"dir", "dirname", "directory", "folder", "name", "new", "path", "to", "of"})
        return "_".join(q + ["folder"]) if q else "new_folder"
    if toks & {"user"}:
        q = qualifier(name, {"username", "user", "login", "name", "new", "id", "ids"})
        return "_".join(q + ["user"]) if q else "new_user"
    term = search_term_literal(name)
    if term is not None:
        return term
    if toks & {"key"}:
        return "sample_" + "_".join(name_parts(name))
    return field_text(name)
