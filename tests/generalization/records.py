"""A lending library's catalogue with typed records.

Tools return dataclasses and TypedDicts and take pydantic models (validated with :func:`pydantic.validate_call`,
as a typed API does), so the parameter schemas carry ``$defs``. ``find_books`` uses a sentinel default to tell
"not given" from ``None``; ``book_summary`` is annotated ``-> dict`` but returns a string, an annotation that lies
as annotations in real code sometimes do.

Designed relations (values):

- ``find_books`` and ``add_book`` provide the ``book_id`` that ``lend_book`` and ``book_summary`` need;
- ``lend_book`` provides the ``loan_id`` that ``return_book`` needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from pydantic import BaseModel, Field, validate_call


class Author(BaseModel):
    """An author of a book."""

    name: str = Field(description="The author's full name.")
    born: int | None = Field(default=None, description="Year of birth, if known.")


class NewBook(BaseModel):
    """A book to add to the catalogue."""

    title: str
    authors: list[Author]
    year: int


@dataclass
class Book:
    """A book in the catalogue."""

    book_id: str
    title: str
    authors: list[str]
    year: int
    on_loan: bool = False


class Loan(TypedDict):
    """A book lent to a member."""

    loan_id: int
    book_id: str
    member: str


_books: dict[str, Book] = {
    "bk-1001": Book("bk-1001", "The Left Hand of Darkness", ["Ursula K. Le Guin"], 1969),
    "bk-1002": Book("bk-1002", "Kindred", ["Octavia E. Butler"], 1979),
    "bk-1003": Book("bk-1003", "Solaris", ["Stanislaw Lem"], 1961),
}
_loans: dict[int, Loan] = {}


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


def find_books(title: str | None = None, author: str | None = _MISSING) -> list[Book]:
    """Search the catalogue. With no criteria every book is listed.

    Args:
        title: Part of the title, case-insensitive.
        author: Part of an author's name. Pass None to find books with no author on record.

    Returns:
        The matching books.
    """
    found = []
    for book in _books.values():
        if title is not None and title.lower() not in book.title.lower():
            continue
        if author is None and book.authors:
            continue
        if author is not None and author is not _MISSING and not any(author.lower() in a.lower() for a in book.authors):
            continue
        found.append(Book(**asdict(book)))
    return found


@validate_call
def add_book(book: NewBook) -> Book:
    """Add a book to the catalogue.

    Args:
        book: The book's title, authors and publication year.

    Returns:
        The catalogued book with its new id.
    """
    if not book.title.strip():
        raise ValueError("title must not be empty")
    if not book.authors:
        raise ValueError("a book needs at least one author")
    book_id = f"bk-{1001 + len(_books)}"
    record = Book(book_id, book.title, [a.name for a in book.authors], book.year)
    _books[book_id] = record
    return Book(**asdict(record))


def lend_book(book_id: str, member: str) -> Loan:
    """Lend a book to a member.

    Args:
        book_id: The id of the book.
        member: The member's name.

    Returns:
        The loan.
    """
    book = _books.get(book_id)
    if book is None:
        raise KeyError(f"no book {book_id!r}")
    if book.on_loan:
        raise ValueError(f"{book.title!r} is already on loan")
    if not member.strip():
        raise ValueError("member must not be empty")
    book.on_loan = True
    loan: Loan = {"loan_id": len(_loans) + 1, "book_id": book_id, "member": member}
    _loans[loan["loan_id"]] = loan
    return dict(loan)  # type: ignore[return-value]


def return_book(loan_id: int) -> dict:
    """Return a lent book.

    Args:
        loan_id: The id of the loan.

    Returns:
        The id of the returned book.
    """
    loan = _loans.pop(loan_id, None)
    if loan is None:
        raise KeyError(f"no open loan {loan_id}")
    _books[loan["book_id"]].on_loan = False
    return {"book_id": loan["book_id"], "returned": True}


def book_summary(book_id: str) -> dict:
    """A one-line summary of a book, for display.

    Args:
        book_id: The id of the book.

    Returns:
        The summary.
    """
    book = _books.get(book_id)
    if book is None:
        raise KeyError(f"no book {book_id!r}")
    return f"{book.title} by {', '.join(book.authors)} ({book.year})"  # type: ignore[return-value]


# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("records.find_books", "records.lend_book", VALUE, "book_id", "book_id"),
    ("records.find_books", "records.book_summary", VALUE, "book_id", "book_id"),
    ("records.add_book", "records.lend_book", VALUE, "book_id", "book_id"),
    ("records.add_book", "records.book_summary", VALUE, "book_id", "book_id"),
    ("records.lend_book", "records.return_book", VALUE, "loan_id", "loan_id"),
]

EXCLUDED = [
    # Lending and returning hand back the book id they were given (or that the loan holds): echoes.
    ("records.lend_book", None, None, "book_id", None),
    ("records.return_book", None, None, "book_id", None),
    # A title, a member or an author is not a book id.
    (None, None, None, "title", "book_id"),
    (None, None, None, "member", "book_id"),
    (None, None, None, "authors", "book_id"),
]
