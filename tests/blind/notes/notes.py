"""A small personal notes service kept entirely in memory.

Users register, sign in to obtain a session token, and then create notes
with tags, search them, and share individual notes with other users.

Quick start::

    import notes

    session = notes.login("demo", "demo-password")
    note = notes.create_note(session["token"], "Groceries", "milk, eggs", tags=["home"])
    notes.search_notes(session["token"], "eggs")

A demo account (``demo`` / ``demo-password``) with two notes exists when the
module is imported.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Optional, TypedDict

__all__ = [
    "AuthenticationError",
    "NoteNotFoundError",
    "register",
    "login",
    "logout",
    "create_note",
    "get_note",
    "update_note",
    "delete_note",
    "list_notes",
    "search_notes",
    "share_note",
    "list_shared_notes",
]

SESSION_TTL = timedelta(hours=12)
MAX_TITLE_LENGTH = 200
MAX_BODY_LENGTH = 100_000
MAX_TAGS = 20

_USERNAME_RE = re.compile(r"^[a-z0-9_]{3,32}$")
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TAG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,29}$")


class AuthenticationError(Exception):
    """Raised for wrong credentials and for missing, unknown or expired tokens."""


class NoteNotFoundError(KeyError):
    """Raised when a note id does not exist."""


# --------------------------------------------------------------------------- #
# Internal records
# --------------------------------------------------------------------------- #


@dataclass
class _User:
    user_id: str
    username: str
    email: Optional[str]
    salt: bytes
    password_hash: bytes
    created_at: datetime


@dataclass
class _Session:
    token: str
    username: str
    expires_at: datetime


@dataclass
class _Note:
    id: str
    owner: str
    title: str
    body: str
    tags: list[str]
    created_at: datetime
    updated_at: datetime
    # username -> can_edit
    shares: dict[str, bool] = field(default_factory=dict)


class NoteView(TypedDict):
    id: str
    owner: str
    title: str
    body: str
    tags: list[str]
    created_at: datetime
    updated_at: datetime
    shared_with: list[str]


class SearchHit(TypedDict):
    id: str
    owner: str
    title: str
    snippet: str
    tags: list[str]


# --------------------------------------------------------------------------- #
# Module state
# --------------------------------------------------------------------------- #

_users: dict[str, _User] = {}
_sessions: dict[str, _Session] = {}
_notes: dict[str, _Note] = {}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 50_000)


def _require_session(token: str) -> str:
    """Return the username behind ``token`` or raise AuthenticationError."""
    if not isinstance(token, str) or not token:
        raise AuthenticationError("a session token is required; call login() first")
    session = _sessions.get(token)
    if session is None:
        raise AuthenticationError("invalid session token")
    if session.expires_at <= _now():
        del _sessions[token]
        raise AuthenticationError("session expired; please log in again")
    return session.username


def _get_note_record(note_id: str) -> _Note:
    note = _notes.get(note_id)
    if note is None:
        raise NoteNotFoundError(f"note {note_id!r} does not exist")
    return note


def _normalize_tags(tags: Optional[list[str]]) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        raise TypeError("tags must be a list of strings, not a single string")
    result: list[str] = []
    for raw in tags:
        if not isinstance(raw, str):
            raise TypeError(f"tag {raw!r} is not a string")
        tag = raw.strip().lower().lstrip("#")
        if not _TAG_RE.match(tag):
            raise ValueError(
                f"invalid tag {raw!r}: use 1-30 lowercase letters, digits or dashes"
            )
        if tag not in result:
            result.append(tag)
    if len(result) > MAX_TAGS:
        raise ValueError(f"a note can have at most {MAX_TAGS} tags")
    return result


def _validate_title(title: str) -> str:
    if not isinstance(title, str):
        raise TypeError("title must be a string")
    title = title.strip()
    if not title:
        raise ValueError("title must not be empty")
    if len(title) > MAX_TITLE_LENGTH:
        raise ValueError(f"title is longer than {MAX_TITLE_LENGTH} characters")
    return title


def _validate_body(body: str) -> str:
    if not isinstance(body, str):
        raise TypeError("body must be a string")
    if len(body) > MAX_BODY_LENGTH:
        raise ValueError(f"body is longer than {MAX_BODY_LENGTH} characters")
    return body


def _view(note: _Note) -> NoteView:
    return NoteView(
        id=note.id,
        owner=note.owner,
        title=note.title,
        body=note.body,
        tags=list(note.tags),
        created_at=note.created_at,
        updated_at=note.updated_at,
        shared_with=sorted(note.shares),
    )


def _can_read(note: _Note, username: str) -> bool:
    return note.owner == username or username in note.shares


def _can_edit(note: _Note, username: str) -> bool:
    return note.owner == username or note.shares.get(username, False)


# --------------------------------------------------------------------------- #
# Accounts
# --------------------------------------------------------------------------- #


def register(username: str, password: str, email: Optional[str] = None) -> dict:
    """Create a new user account.

    Registering does not sign the user in; call :func:`login` afterwards.

    Args:
        username: 3-32 characters, lowercase letters, digits and underscores
            (e.g. ``"alice_w"``). Must be unused.
        password: At least 8 characters.
        email: Optional contact address.

    Returns:
        ``{"user_id": str, "username": str, "created_at": datetime}``

    Raises:
        ValueError: If the username is malformed or taken, the password is too
            short, or the email address is malformed.
    """
    if not isinstance(username, str) or not _USERNAME_RE.match(username):
        raise ValueError(
            "username must be 3-32 characters of lowercase letters, digits or '_'"
        )
    if username in _users:
        raise ValueError(f"username {username!r} is already taken")
    if not isinstance(password, str) or len(password) < 8:
        raise ValueError("password must be at least 8 characters long")
    if email is not None and not _EMAIL_RE.match(email):
        raise ValueError(f"invalid email address: {email!r}")

    salt = secrets.token_bytes(16)
    user = _User(
        user_id=str(uuid.uuid4()),
        username=username,
        email=email,
        salt=salt,
        password_hash=_hash_password(password, salt),
        created_at=_now(),
    )
    _users[username] = user
    return {"user_id": user.user_id, "username": user.username, "created_at": user.created_at}


def login(username: str, password: str) -> dict:
    """Sign in and start a session.

    Sessions last 12 hours. Every other operation except :func:`register`
    takes the returned token.

    Returns:
        ``{"token": str, "username": str, "expires_at": datetime}``

    Raises:
        AuthenticationError: If the username or password is wrong.
    """
    user = _users.get(username)
    if user is None or not secrets.compare_digest(
        _hash_password(password, user.salt), user.password_hash
    ):
        raise AuthenticationError("incorrect username or password")
    token = secrets.token_urlsafe(32)
    session = _Session(token=token, username=username, expires_at=_now() + SESSION_TTL)
    _sessions[token] = session
    return {"token": token, "username": username, "expires_at": session.expires_at}


def logout(token: str) -> None:
    """End a session. The token cannot be used afterwards.

    Raises:
        AuthenticationError: If the token is not an active session.
    """
    _require_session(token)
    del _sessions[token]


# --------------------------------------------------------------------------- #
# Notes
# --------------------------------------------------------------------------- #


def create_note(
    token: str, title: str, body: str = "", tags: Optional[list[str]] = None
) -> NoteView:
    """Create a note owned by the signed-in user.

    Tags are normalised to lowercase and a leading ``#`` is dropped, so
    ``["#Work", "urgent"]`` is stored as ``["work", "urgent"]``.

    Returns:
        The new note, including its generated ``id``.

    Raises:
        AuthenticationError: If the token is not valid.
        ValueError: If the title is empty/too long or a tag is malformed.
    """
    username = _require_session(token)
    now = _now()
    note = _Note(
        id=str(uuid.uuid4()),
        owner=username,
        title=_validate_title(title),
        body=_validate_body(body),
        tags=_normalize_tags(tags),
        created_at=now,
        updated_at=now,
    )
    _notes[note.id] = note
    return _view(note)


def get_note(token: str, note_id: str) -> NoteView:
    """Return one note. Owners and users it was shared with may read it.

    Raises:
        AuthenticationError: If the token is not valid.
        NoteNotFoundError: If there is no note with this id.
        PermissionError: If the note belongs to someone else and was not
            shared with the caller.
    """
    username = _require_session(token)
    note = _get_note_record(note_id)
    if not _can_read(note, username):
        raise PermissionError("you do not have access to this note")
    return _view(note)


def update_note(
    token: str,
    note_id: str,
    title: Optional[str] = None,
    body: Optional[str] = None,
    tags: Optional[list[str]] = None,
) -> NoteView:
    """Change a note's title, body and/or tags.

    Only the given fields change; ``tags`` replaces the whole tag list (pass
    ``[]`` to clear it). The owner can always edit; users the note was shared
    with can edit only if it was shared with ``can_edit=True``.

    Raises:
        AuthenticationError: If the token is not valid.
        NoteNotFoundError: If there is no note with this id.
        PermissionError: If the caller may not edit the note.
        ValueError: If nothing to change was given or a value is invalid.
    """
    username = _require_session(token)
    note = _get_note_record(note_id)
    if not _can_read(note, username):
        raise PermissionError("you do not have access to this note")
    if not _can_edit(note, username):
        raise PermissionError("this note was shared with you read-only")
    if title is None and body is None and tags is None:
        raise ValueError("nothing to update: give a title, body or tags")

    new_title = _validate_title(title) if title is not None else note.title
    new_body = _validate_body(body) if body is not None else note.body
    new_tags = _normalize_tags(tags) if tags is not None else note.tags
    note.title, note.body, note.tags = new_title, new_body, new_tags
    note.updated_at = _now()
    return _view(note)


def delete_note(token: str, note_id: str) -> None:
    """Delete a note permanently. Only the owner can delete a note.

    Raises:
        AuthenticationError: If the token is not valid.
        NoteNotFoundError: If there is no note with this id.
        PermissionError: If the caller is not the owner.
    """
    username = _require_session(token)
    note = _get_note_record(note_id)
    if note.owner != username:
        raise PermissionError("only the owner can delete a note")
    del _notes[note_id]


def list_notes(token: str, tag: Optional[str] = None) -> list[NoteView]:
    """List the caller's own notes, most recently updated first.

    Args:
        token: Session token.
        tag: If given, only notes carrying this tag (case-insensitive, a
            leading ``#`` is ignored).
    """
    username = _require_session(token)
    wanted = _normalize_tags([tag])[0] if tag is not None else None
    mine = [
        n for n in _notes.values()
        if n.owner == username and (wanted is None or wanted in n.tags)
    ]
    mine.sort(key=lambda n: n.updated_at, reverse=True)
    return [_view(n) for n in mine]


def search_notes(token: str, query: str, limit: int = 20) -> list[SearchHit]:
    """Full-text search over notes the caller can read (own and shared).

    Every whitespace-separated word of ``query`` must appear in the title,
    body or tags (case-insensitive). A word starting with ``#`` only matches
    tags, e.g. ``"budget #work"``.

    Returns:
        Up to ``limit`` hits, each with ``id``, ``owner``, ``title``,
        a short ``snippet`` of the body and ``tags``.

    Raises:
        AuthenticationError: If the token is not valid.
        ValueError: If the query is blank or ``limit`` is not 1-100.
    """
    username = _require_session(token)
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must not be empty")
    if not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ValueError("limit must be between 1 and 100")

    words = query.lower().split()
    hits: list[SearchHit] = []
    for note in sorted(_notes.values(), key=lambda n: n.updated_at, reverse=True):
        if not _can_read(note, username):
            continue
        text = f"{note.title}\n{note.body}".lower()
        ok = True
        for word in words:
            if word.startswith("#"):
                if word[1:] not in note.tags:
                    ok = False
                    break
            elif word not in text and word not in note.tags:
                ok = False
                break
        if ok:
            snippet = note.body[:80] + ("..." if len(note.body) > 80 else "")
            hits.append(
                SearchHit(id=note.id, owner=note.owner, title=note.title,
                          snippet=snippet, tags=list(note.tags))
            )
            if len(hits) >= limit:
                break
    return hits


# --------------------------------------------------------------------------- #
# Sharing
# --------------------------------------------------------------------------- #


def share_note(token: str, note_id: str, username: str, can_edit: bool = False) -> NoteView:
    """Share one of your notes with another registered user.

    Sharing again with the same user updates the ``can_edit`` flag.

    Args:
        token: Session token of the note's owner.
        note_id: The note to share.
        username: Username of the recipient (not their user id).
        can_edit: Whether the recipient may also edit the note.

    Raises:
        AuthenticationError: If the token is not valid.
        NoteNotFoundError: If there is no note with this id.
        PermissionError: If the caller does not own the note.
        KeyError: If no user has that username.
        ValueError: If you try to share a note with yourself.
    """
    owner = _require_session(token)
    note = _get_note_record(note_id)
    if note.owner != owner:
        raise PermissionError("only the owner can share a note")
    if username == owner:
        raise ValueError("you cannot share a note with yourself")
    if username not in _users:
        raise KeyError(f"no user named {username!r}")
    note.shares[username] = bool(can_edit)
    return _view(note)


def list_shared_notes(token: str) -> list[NoteView]:
    """List notes other users have shared with the caller."""
    username = _require_session(token)
    shared = [n for n in _notes.values() if username in n.shares]
    shared.sort(key=lambda n: n.updated_at, reverse=True)
    return [_view(n) for n in shared]


# --------------------------------------------------------------------------- #
# Demo data
# --------------------------------------------------------------------------- #


def _seed() -> None:
    register("demo", "demo-password", "demo@example.com")
    token = login("demo", "demo-password")["token"]
    create_note(token, "Welcome", "This is your first note. Try searching for 'welcome'.",
                tags=["getting-started"])
    create_note(token, "Shopping", "oat milk, coffee beans, lemons", tags=["home", "errands"])
    logout(token)


_seed()
