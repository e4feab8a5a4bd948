"""Kanban board MCP server.

A small, in-memory kanban service exposed over MCP (stdio). It manages boards,
their columns, the cards in those columns, board membership, card assignees and
card comments. Everything lives in process memory and is lost when the server
stops.

Run it with::

    python server.py

The server starts with one demo board, ``website-relaunch``, so there is
something to look at right away.
"""

from __future__ import annotations

import itertools
import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer(
    "kanban",
    instructions=(
        "Kanban boards for small teams. Boards contain columns, columns contain cards. "
        "Only board members can be assigned to cards or comment on them."
    ),
)

Priority = Literal["low", "medium", "high", "urgent"]
Role = Literal["owner", "editor", "viewer"]

# ---------------------------------------------------------------------------
# In-memory model
# ---------------------------------------------------------------------------


@dataclass
class User:
    username: str
    full_name: str
    email: str


@dataclass
class Column:
    column_id: int
    board_id: str
    name: str
    position: int
    wip_limit: int | None = None


@dataclass
class Comment:
    comment_id: uuid.UUID
    author: str
    text: str
    created_at: datetime


@dataclass
class Card:
    card_id: int
    board_id: str
    column_id: int
    title: str
    description: str = ""
    priority: Priority = "medium"
    due_date: date | None = None
    assignees: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    created_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    updated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


@dataclass
class Board:
    board_id: str
    name: str
    description: str
    created_at: datetime
    members: dict[str, Role] = field(default_factory=dict)
    column_order: list[int] = field(default_factory=list)


USERS: dict[str, User] = {}
BOARDS: dict[str, Board] = {}
COLUMNS: dict[int, Column] = {}
CARDS: dict[int, Card] = {}

_column_ids = itertools.count(1)
_card_ids = itertools.count(1)

DEFAULT_COLUMNS = ("To Do", "In Progress", "Done")
_SLUG_RE = re.compile(r"[^a-z0-9]+")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _slugify(name: str) -> str:
    slug = _SLUG_RE.sub("-", name.lower()).strip("-")
    return slug or "board"


# ---------------------------------------------------------------------------
# Lookups and serialisation helpers
# ---------------------------------------------------------------------------


def _get_board(board_id: str) -> Board:
    try:
        return BOARDS[board_id]
    except KeyError:
        raise ToolError(f"Board '{board_id}' not found. Use list_boards to see existing boards.") from None


def _get_column(column_id: int) -> Column:
    try:
        return COLUMNS[column_id]
    except KeyError:
        raise ToolError(f"Column {column_id} not found.") from None


def _get_card(card_id: int) -> Card:
    try:
        return CARDS[card_id]
    except KeyError:
        raise ToolError(f"Card {card_id} not found.") from None


def _require_member(board: Board, username: str, *, can_edit: bool = False) -> Role:
    if username not in USERS:
        raise ToolError(f"Unknown user '{username}'.")
    role = board.members.get(username)
    if role is None:
        raise ToolError(
            f"'{username}' is not a member of board '{board.board_id}'. Add them with add_member first."
        )
    if can_edit and role == "viewer":
        raise ToolError(f"'{username}' only has viewer access on board '{board.board_id}'.")
    return role


def _cards_in_column(column_id: int) -> list[Card]:
    return [c for c in CARDS.values() if c.column_id == column_id]


def _column_dict(col: Column) -> dict[str, Any]:
    return {
        "column_id": col.column_id,
        "name": col.name,
        "position": col.position,
        "wip_limit": col.wip_limit,
        "card_count": len(_cards_in_column(col.column_id)),
    }


def _card_dict(card: Card, *, with_comments: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "card_id": card.card_id,
        "board_id": card.board_id,
        "column_id": card.column_id,
        "column": COLUMNS[card.column_id].name,
        "title": card.title,
        "description": card.description,
        "priority": card.priority,
        "due_date": card.due_date.isoformat() if card.due_date else None,
        "assignees": list(card.assignees),
        "comment_count": len(card.comments),
        "created_at": card.created_at.isoformat(),
        "updated_at": card.updated_at.isoformat(),
    }
    if with_comments:
        data["comments"] = [_comment_dict(c) for c in card.comments]
    return data


def _comment_dict(comment: Comment) -> dict[str, Any]:
    return {
        "comment_id": str(comment.comment_id),
        "author": comment.author,
        "text": comment.text,
        "created_at": comment.created_at.isoformat(),
    }


def _board_dict(board: Board) -> dict[str, Any]:
    return {
        "board_id": board.board_id,
        "name": board.name,
        "description": board.description,
        "created_at": board.created_at.isoformat(),
        "columns": [_column_dict(COLUMNS[cid]) for cid in board.column_order],
        "members": [{"username": u, "role": r} for u, r in board.members.items()],
    }


def _new_column(board: Board, name: str, wip_limit: int | None = None) -> Column:
    col = Column(
        column_id=next(_column_ids),
        board_id=board.board_id,
        name=name,
        position=len(board.column_order),
        wip_limit=wip_limit,
    )
    COLUMNS[col.column_id] = col
    board.column_order.append(col.column_id)
    return col


def _check_wip(col: Column) -> None:
    if col.wip_limit is not None and len(_cards_in_column(col.column_id)) >= col.wip_limit:
        raise ToolError(
            f"Column '{col.name}' is at its WIP limit of {col.wip_limit}; finish or move a card out first."
        )


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


@mcp.tool()
def list_users() -> dict[str, Any]:
    """List everyone in the workspace directory.

    Only these people can be added to boards. Returns ``{"users": [...]}`` where
    each entry has ``username``, ``full_name`` and ``email``.
    """
    return {"users": [{"username": u.username, "full_name": u.full_name, "email": u.email} for u in USERS.values()]}


@mcp.tool()
def create_board(
    name: Annotated[str, Field(min_length=1, max_length=80, description="Board title, e.g. 'Q3 Roadmap'")],
    owner: Annotated[str, Field(description="Username of the board owner (from list_users)")],
    description: str = "",
    columns: Annotated[
        list[str] | None,
        Field(description="Column names, left to right. Defaults to To Do / In Progress / Done."),
    ] = None,
) -> dict[str, Any]:
    """Create a new board.

    The board id is derived from the name (``"Q3 Roadmap"`` -> ``"q3-roadmap"``,
    with a numeric suffix if taken). The owner becomes the first member with the
    ``owner`` role.

    Returns the full board: ``board_id``, ``name``, ``columns`` (each with its
    ``column_id``) and ``members``.
    """
    name = name.strip()
    if not name:
        raise ToolError("Board name must not be blank.")
    if owner not in USERS:
        raise ToolError(f"Unknown user '{owner}'.")
    col_names = [c.strip() for c in (columns if columns is not None else DEFAULT_COLUMNS)]
    if not col_names:
        raise ToolError("A board needs at least one column.")
    if any(not c for c in col_names):
        raise ToolError("Column names must not be blank.")
    if len({c.lower() for c in col_names}) != len(col_names):
        raise ToolError("Column names must be unique within a board.")

    base = _slugify(name)
    board_id = base
    n = 2
    while board_id in BOARDS:
        board_id = f"{base}-{n}"
        n += 1
    board = Board(board_id=board_id, name=name, description=description, created_at=_now(), members={owner: "owner"})
    BOARDS[board_id] = board
    for col_name in col_names:
        _new_column(board, col_name)
    return _board_dict(board)


@mcp.tool()
def list_boards() -> dict[str, Any]:
    """List all boards with their id, name, member count and card count."""
    return {
        "boards": [
            {
                "board_id": b.board_id,
                "name": b.name,
                "member_count": len(b.members),
                "card_count": sum(1 for c in CARDS.values() if c.board_id == b.board_id),
            }
            for b in BOARDS.values()
        ]
    }


@mcp.tool()
def get_board(board_id: str) -> dict[str, Any]:
    """Show a board: its columns (with ids, WIP limits and card counts) and its members.

    Use list_cards to see the cards themselves.
    """
    return _board_dict(_get_board(board_id))


@mcp.tool()
def add_column(
    board_id: str,
    name: Annotated[str, Field(min_length=1, max_length=40)],
    wip_limit: Annotated[int | None, Field(ge=1, description="Max cards allowed in the column; omit for no limit")] = None,
    position: Annotated[int | None, Field(ge=0, description="0-based position; appended at the end if omitted")] = None,
) -> dict[str, Any]:
    """Add a column to a board.

    Returns the new column including its ``column_id``.
    """
    board = _get_board(board_id)
    name = name.strip()
    if any(COLUMNS[cid].name.lower() == name.lower() for cid in board.column_order):
        raise ToolError(f"Board '{board_id}' already has a column named '{name}'.")
    col = _new_column(board, name, wip_limit)
    if position is not None and position < len(board.column_order) - 1:
        board.column_order.remove(col.column_id)
        board.column_order.insert(position, col.column_id)
        for i, cid in enumerate(board.column_order):
            COLUMNS[cid].position = i
    return _column_dict(col)


@mcp.tool()
def add_member(
    board_id: str,
    username: Annotated[str, Field(description="A username from list_users")],
    role: Role = "editor",
) -> dict[str, Any]:
    """Add a workspace user to a board (or change their role if already a member).

    Only members can be assigned to cards on the board or comment on its cards;
    viewers can comment but cannot be assigned. A board always keeps exactly one
    owner, so ``role="owner"`` is rejected.
    """
    board = _get_board(board_id)
    if username not in USERS:
        raise ToolError(f"Unknown user '{username}'. Use list_users to see who is in the workspace.")
    if role == "owner":
        raise ToolError("A board has exactly one owner; add the user as 'editor' or 'viewer'.")
    if board.members.get(username) == "owner":
        raise ToolError(f"'{username}' owns this board; the owner's role cannot be changed.")
    board.members[username] = role
    return {"board_id": board.board_id, "username": username, "role": role}


@mcp.tool()
def create_card(
    column_id: Annotated[int, Field(description="Column to put the card in (see get_board)")],
    title: Annotated[str, Field(min_length=1, max_length=200)],
    description: str = "",
    priority: Priority = "medium",
    due_date: Annotated[date | None, Field(description="ISO date, e.g. 2025-07-01")] = None,
) -> dict[str, Any]:
    """Create a card at the bottom of a column.

    Fails if the column is at its WIP limit. Returns the card, including its
    numeric ``card_id``.
    """
    col = _get_column(column_id)
    if not title.strip():
        raise ToolError("Card title must not be blank.")
    _check_wip(col)
    card = Card(
        card_id=next(_card_ids),
        board_id=col.board_id,
        column_id=col.column_id,
        title=title.strip(),
        description=description,
        priority=priority,
        due_date=due_date,
    )
    CARDS[card.card_id] = card
    return _card_dict(card)


@mcp.tool()
def list_cards(
    board_id: str,
    column_id: int | None = None,
    assignee: str | None = None,
    priority: Priority | None = None,
    query: Annotated[str | None, Field(description="Case-insensitive text matched against title and description")] = None,
) -> dict[str, Any]:
    """List or search the cards on a board.

    All filters are optional and combined with AND. Cards are ordered by column
    position, then by creation.
    """
    board = _get_board(board_id)
    if column_id is not None and column_id not in board.column_order:
        raise ToolError(f"Column {column_id} does not belong to board '{board_id}'.")
    q = query.lower() if query else None
    cards = [c for c in CARDS.values() if c.board_id == board_id]
    if column_id is not None:
        cards = [c for c in cards if c.column_id == column_id]
    if assignee is not None:
        cards = [c for c in cards if assignee in c.assignees]
    if priority is not None:
        cards = [c for c in cards if c.priority == priority]
    if q:
        cards = [c for c in cards if q in c.title.lower() or q in c.description.lower()]
    cards.sort(key=lambda c: (COLUMNS[c.column_id].position, c.card_id))
    return {"board_id": board_id, "total": len(cards), "cards": [_card_dict(c) for c in cards]}


@mcp.tool()
def update_card(
    card_id: int,
    title: str | None = None,
    description: str | None = None,
    priority: Priority | None = None,
    due_date: date | None = None,
    clear_due_date: bool = False,
) -> dict[str, Any]:
    """Edit a card's title, description, priority or due date.

    Only the fields you pass are changed. Pass ``clear_due_date=True`` to remove
    the due date.
    """
    card = _get_card(card_id)
    if due_date is not None and clear_due_date:
        raise ToolError("Pass either due_date or clear_due_date, not both.")
    if title is not None:
        if not title.strip():
            raise ToolError("Card title must not be blank.")
        card.title = title.strip()
    if description is not None:
        card.description = description
    if priority is not None:
        card.priority = priority
    if due_date is not None:
        card.due_date = due_date
    if clear_due_date:
        card.due_date = None
    card.updated_at = _now()
    return _card_dict(card)


@mcp.tool()
def move_card(
    card_id: int,
    to_column_id: Annotated[int, Field(description="Target column; must be on the same board")],
) -> dict[str, Any]:
    """Move a card to another column of the same board.

    Respects the target column's WIP limit. Moving a card to the column it is
    already in is a no-op.
    """
    card = _get_card(card_id)
    target = _get_column(to_column_id)
    if target.board_id != card.board_id:
        raise ToolError(
            f"Column {to_column_id} belongs to board '{target.board_id}', but card {card_id} is on '{card.board_id}'."
        )
    if target.column_id != card.column_id:
        _check_wip(target)
        card.column_id = target.column_id
        card.updated_at = _now()
    return _card_dict(card)


@mcp.tool()
def assign_card(
    card_id: int,
    username: str,
    unassign: bool = False,
) -> dict[str, Any]:
    """Assign a board member to a card (or remove them with ``unassign=True``).

    The user must be an owner or editor of the card's board; viewers cannot be
    assigned.
    """
    card = _get_card(card_id)
    board = BOARDS[card.board_id]
    if unassign:
        if username not in card.assignees:
            raise ToolError(f"'{username}' is not assigned to card {card_id}.")
        card.assignees.remove(username)
    else:
        _require_member(board, username, can_edit=True)
        if username in card.assignees:
            raise ToolError(f"'{username}' is already assigned to card {card_id}.")
        card.assignees.append(username)
    card.updated_at = _now()
    return _card_dict(card)


@mcp.tool()
def add_comment(
    card_id: int,
    author: Annotated[str, Field(description="Username of a board member")],
    text: Annotated[str, Field(min_length=1, max_length=2000)],
) -> dict[str, Any]:
    """Comment on a card.

    The author must be a member of the card's board (any role). Returns the new
    comment with its ``comment_id`` (a UUID).
    """
    card = _get_card(card_id)
    _require_member(BOARDS[card.board_id], author)
    if not text.strip():
        raise ToolError("Comment text must not be blank.")
    comment = Comment(comment_id=uuid.uuid4(), author=author, text=text.strip(), created_at=_now())
    card.comments.append(comment)
    card.updated_at = _now()
    return {"card_id": card.card_id, **_comment_dict(comment)}


@mcp.tool()
def delete_card(card_id: int) -> dict[str, Any]:
    """Permanently delete a card and its comments."""
    card = _get_card(card_id)
    del CARDS[card_id]
    return {"deleted": True, "card_id": card_id, "title": card.title}


# ---------------------------------------------------------------------------
# Demo data
# ---------------------------------------------------------------------------


def _seed() -> None:
    for username, full_name in [
        ("alice", "Alice Moreau"),
        ("bob", "Bob Lindqvist"),
        ("carol", "Carol Okafor"),
        ("dave", "Dave Nguyen"),
    ]:
        USERS[username] = User(username, full_name, f"{username}@example.com")

    board = Board(
        board_id="website-relaunch",
        name="Website Relaunch",
        description="Redesign and relaunch of the marketing site.",
        created_at=_now(),
        members={"alice": "owner", "bob": "editor"},
    )
    BOARDS[board.board_id] = board
    todo = _new_column(board, "To Do")
    doing = _new_column(board, "In Progress", wip_limit=3)
    _new_column(board, "Done")

    for column, title, prio, assignees in [
        (todo, "Draft new homepage copy", "high", ["alice"]),
        (todo, "Pick a font pairing", "low", []),
        (doing, "Migrate blog posts", "medium", ["bob"]),
    ]:
        card = Card(
            card_id=next(_card_ids),
            board_id=board.board_id,
            column_id=column.column_id,
            title=title,
            priority=prio,  # type: ignore[arg-type]
            assignees=list(assignees),
        )
        CARDS[card.card_id] = card


_seed()


if __name__ == "__main__":
    mcp.run()
