"""In-memory document store with folders, versions, share links and a trash.

The store models a small virtual file tree rooted at ``/``. Folders hold
documents and other folders; every document keeps its full version history
and a stable ``document_id`` that survives moves and renames. Documents can be
shared through expiring links, and anything deleted goes to the trash first,
from which it can be restored.

Example:
    >>> store = DocumentStore()
    >>> store.create_folder("/Projects")
    >>> doc = store.upload_document("/Projects", "plan.md", "# Plan\\n")
    >>> store.upload_new_version(doc.document_id, "# Plan v2\\n", comment="typo")
    >>> link = store.create_share_link(doc.document_id, timedelta(days=2))
    >>> store.open_share_link(link.token).text
    '# Plan v2\\n'

Paths may be given as ``str`` or :class:`pathlib.PurePosixPath`; they are
always returned as ``PurePosixPath``. Paths are absolute and case-sensitive.
"""

from __future__ import annotations

import hashlib
import mimetypes
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import PurePosixPath
from typing import Callable, NamedTuple, Optional, TypedDict, Union
from uuid import UUID, uuid4

__all__ = [
    "DocumentStore",
    "DocStoreError",
    "InvalidPathError",
    "PathNotFoundError",
    "PathExistsError",
    "DocumentNotFoundError",
    "ShareLinkError",
    "ShareLinkExpiredError",
    "EntryKind",
    "FolderInfo",
    "DocumentInfo",
    "DocumentContent",
    "VersionInfo",
    "FolderEntry",
    "ShareLink",
    "SharedDocument",
    "TrashItem",
]

PathLike = Union[str, PurePosixPath]
ROOT = PurePosixPath("/")


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class DocStoreError(Exception):
    """Base class for all document store errors."""


class InvalidPathError(DocStoreError, ValueError):
    """The path or name is malformed (relative, contains ``..``, too long...)."""


class PathNotFoundError(DocStoreError, FileNotFoundError):
    """Nothing exists at the given path (or the parent folder is missing)."""


class PathExistsError(DocStoreError, FileExistsError):
    """Something already exists at the target path."""


class DocumentNotFoundError(DocStoreError, KeyError):
    """No live document has the given id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ShareLinkError(DocStoreError):
    """The share link is unknown, revoked, or points to an unavailable document."""


class ShareLinkExpiredError(ShareLinkError):
    """The share link's expiry time has passed."""


# ---------------------------------------------------------------------------
# Public data types
# ---------------------------------------------------------------------------


class EntryKind(str, Enum):
    FOLDER = "folder"
    DOCUMENT = "document"


@dataclass(frozen=True)
class FolderInfo:
    """A folder in the tree."""

    path: PurePosixPath
    created_at: datetime


@dataclass(frozen=True)
class DocumentInfo:
    """Metadata of a document's latest version."""

    document_id: UUID
    path: PurePosixPath
    version: int
    size: int
    content_type: str
    sha256: str
    updated_at: datetime


@dataclass(frozen=True)
class DocumentContent:
    """A document version together with its bytes."""

    document_id: UUID
    path: PurePosixPath
    version: int
    content_type: str
    content: bytes

    @property
    def text(self) -> str:
        """The content decoded as UTF-8."""
        return self.content.decode("utf-8")


class VersionInfo(NamedTuple):
    """One entry in a document's version history."""

    version: int
    size: int
    sha256: str
    uploaded_at: datetime
    comment: Optional[str]


class FolderEntry(TypedDict):
    """One child of a folder as returned by :meth:`DocumentStore.list_folder`.

    ``document_id``, ``size`` and ``version`` are ``None`` for folders.
    """

    name: str
    path: PurePosixPath
    kind: EntryKind
    document_id: Optional[UUID]
    size: Optional[int]
    version: Optional[int]


@dataclass(frozen=True)
class ShareLink:
    """A public link to the latest version of a document."""

    token: str
    url: str
    document_id: UUID
    created_at: datetime
    expires_at: datetime
    revoked: bool = False


@dataclass(frozen=True)
class SharedDocument:
    """What a link recipient sees: the file, but not where it lives."""

    name: str
    content_type: str
    version: int
    content: bytes
    expires_at: datetime

    @property
    def text(self) -> str:
        """The content decoded as UTF-8."""
        return self.content.decode("utf-8")


@dataclass(frozen=True)
class TrashItem:
    """A folder or document that was moved to the trash."""

    trash_id: str
    original_path: PurePosixPath
    kind: EntryKind
    deleted_at: datetime
    document_count: int


# ---------------------------------------------------------------------------
# Internal records
# ---------------------------------------------------------------------------


@dataclass
class _Version:
    number: int
    content: bytes
    sha256: str
    uploaded_at: datetime
    comment: Optional[str]


@dataclass
class _Document:
    document_id: UUID
    path: PurePosixPath
    content_type: str
    versions: list[_Version] = field(default_factory=list)
    trash_id: Optional[str] = None

    @property
    def latest(self) -> _Version:
        return self.versions[-1]


@dataclass
class _Link:
    token: str
    document_id: UUID
    created_at: datetime
    expires_at: datetime
    revoked: bool = False


@dataclass
class _TrashEntry:
    trash_id: str
    original_path: PurePosixPath
    kind: EntryKind
    deleted_at: datetime
    folders: dict[PurePosixPath, datetime]
    document_ids: list[UUID]


# ---------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------


class DocumentStore:
    """A document store on a virtual in-memory file tree.

    Args:
        seed_demo: Populate the store with a few demo folders and documents
            (see the README). Defaults to ``True``.
        max_document_bytes: Largest accepted upload, in bytes.
        share_base_url: Prefix used to build share link URLs.
        clock: Callable returning the current time as an aware UTC datetime;
            handy for tests. Defaults to :func:`datetime.now` in UTC.
    """

    MAX_NAME_LENGTH = 255
    MAX_DEPTH = 32
    MIN_LINK_LIFETIME = timedelta(minutes=5)
    MAX_LINK_LIFETIME = timedelta(days=30)

    def __init__(
        self,
        seed_demo: bool = True,
        max_document_bytes: int = 10 * 1024 * 1024,
        share_base_url: str = "https://docs.example.com/s/",
        clock: Optional[Callable[[], datetime]] = None,
    ) -> None:
        if max_document_bytes <= 0:
            raise ValueError("max_document_bytes must be positive")
        self._max_bytes = max_document_bytes
        self._share_base_url = share_base_url.rstrip("/") + "/"
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._folders: dict[PurePosixPath, datetime] = {ROOT: self._clock()}
        self._documents: dict[UUID, _Document] = {}
        self._by_path: dict[PurePosixPath, UUID] = {}
        self._links: dict[str, _Link] = {}
        self._trash: dict[str, _TrashEntry] = {}
        if seed_demo:
            self._seed()

    # -- helpers ------------------------------------------------------------

    def _seed(self) -> None:
        self.create_folder("/Documents/Reports", parents=True)
        self.create_folder("/Photos")
        welcome = self.upload_document(
            "/Documents", "welcome.txt", "Welcome to your document store!\n"
        )
        self.upload_new_version(
            welcome.document_id,
            "Welcome to your document store!\nDrag files here to upload them.\n",
            comment="added upload hint",
        )
        self.upload_document(
            "/Documents/Reports",
            "q1-summary.md",
            "# Q1 summary\n\nRevenue up 4% quarter over quarter.\n",
        )
        self.upload_document("/Documents", "old-notes.txt", "scratch notes, safe to delete\n")
        self.move_to_trash("/Documents/old-notes.txt")

    @staticmethod
    def _check_name(name: str) -> str:
        if not isinstance(name, str):
            raise InvalidPathError(f"name must be a string, got {type(name).__name__}")
        if not name or name != name.strip():
            raise InvalidPathError(f"name {name!r} must be non-empty without leading/trailing spaces")
        if name in {".", ".."}:
            raise InvalidPathError(f"name {name!r} is reserved")
        if "/" in name or "\x00" in name:
            raise InvalidPathError(f"name {name!r} must not contain '/' or NUL characters")
        if len(name) > DocumentStore.MAX_NAME_LENGTH:
            raise InvalidPathError(f"name is longer than {DocumentStore.MAX_NAME_LENGTH} characters")
        return name

    def _norm(self, path: PathLike, what: str = "path") -> PurePosixPath:
        if not isinstance(path, (str, PurePosixPath)):
            raise InvalidPathError(f"{what} must be a str or PurePosixPath, got {type(path).__name__}")
        raw = str(path)
        if not raw.startswith("/"):
            raise InvalidPathError(f"{what} {raw!r} must be absolute (start with '/')")
        p = PurePosixPath(raw)
        if str(p).startswith("//"):
            p = PurePosixPath("/" + str(p).lstrip("/"))
        for part in p.parts[1:]:
            self._check_name(part)
        if len(p.parts) - 1 > self.MAX_DEPTH:
            raise InvalidPathError(f"{what} is nested deeper than {self.MAX_DEPTH} levels")
        return p

    def _exists(self, p: PurePosixPath) -> bool:
        return p in self._folders or p in self._by_path

    def _require_folder(self, p: PurePosixPath, what: str = "folder") -> None:
        if p in self._folders:
            return
        if p in self._by_path:
            raise PathNotFoundError(f"{what} {p} is a document, not a folder")
        raise PathNotFoundError(f"{what} {p} does not exist")

    def _doc_by_id(self, document_id: UUID | str) -> _Document:
        if isinstance(document_id, str):
            try:
                document_id = UUID(document_id)
            except ValueError:
                raise ValueError(f"document_id {document_id!r} is not a valid UUID") from None
        if not isinstance(document_id, UUID):
            raise TypeError("document_id must be a UUID or its string form")
        doc = self._documents.get(document_id)
        if doc is None:
            raise DocumentNotFoundError(f"no document with id {document_id}")
        if doc.trash_id is not None:
            raise DocumentNotFoundError(
                f"document {document_id} is in the trash (trash id {doc.trash_id}); restore it first"
            )
        return doc

    def _doc_by_path(self, p: PurePosixPath) -> _Document:
        doc_id = self._by_path.get(p)
        if doc_id is None:
            if p in self._folders:
                raise PathNotFoundError(f"{p} is a folder, not a document")
            raise PathNotFoundError(f"no document at {p}")
        return self._documents[doc_id]

    def _to_bytes(self, content: bytes | str) -> bytes:
        if isinstance(content, str):
            data = content.encode("utf-8")
        elif isinstance(content, (bytes, bytearray, memoryview)):
            data = bytes(content)
        else:
            raise TypeError("content must be bytes or str")
        if len(data) > self._max_bytes:
            raise ValueError(f"content is {len(data)} bytes; the limit is {self._max_bytes} bytes")
        return data

    @staticmethod
    def _info(doc: _Document) -> DocumentInfo:
        v = doc.latest
        return DocumentInfo(
            document_id=doc.document_id,
            path=doc.path,
            version=v.number,
            size=len(v.content),
            content_type=doc.content_type,
            sha256=v.sha256,
            updated_at=v.uploaded_at,
        )

    @staticmethod
    def _subtree(p: PurePosixPath, paths) -> list[PurePosixPath]:
        return [q for q in paths if q == p or p in q.parents]

    # -- folders ------------------------------------------------------------

    def create_folder(self, path: PathLike, parents: bool = False) -> FolderInfo:
        """Create a folder.

        Args:
            path: Absolute path of the new folder, e.g. ``"/Projects/2024"``.
            parents: Also create missing parent folders (like ``mkdir -p``).
                With ``parents=True`` an already existing folder is not an
                error.

        Returns:
            The created (or, with ``parents=True``, existing) folder.

        Raises:
            InvalidPathError: If the path is malformed.
            PathExistsError: If something already exists at ``path``.
            PathNotFoundError: If the parent folder is missing and
                ``parents`` is false, or a parent is a document.
        """
        p = self._norm(path)
        if p in self._folders:
            if parents:
                return FolderInfo(p, self._folders[p])
            raise PathExistsError(f"folder {p} already exists")
        if p in self._by_path:
            raise PathExistsError(f"a document already exists at {p}")
        missing = []
        for ancestor in p.parents:
            if ancestor in self._folders:
                break
            if ancestor in self._by_path:
                raise PathNotFoundError(f"{ancestor} is a document, not a folder")
            missing.append(ancestor)
        if missing and not parents:
            raise PathNotFoundError(
                f"parent folder {p.parent} does not exist (pass parents=True to create it)"
            )
        now = self._clock()
        for ancestor in reversed(missing):
            self._folders[ancestor] = now
        self._folders[p] = now
        return FolderInfo(p, now)

    def list_folder(self, path: PathLike = "/", recursive: bool = False) -> list[FolderEntry]:
        """List the contents of a folder.

        Folders come first, then documents, each sorted by name. Trashed
        items are not listed.

        Args:
            path: The folder to list; defaults to the root.
            recursive: Include the contents of all sub-folders.

        Returns:
            One :class:`FolderEntry` per child, e.g.
            ``{"name": "welcome.txt", "path": PurePosixPath("/Documents/welcome.txt"),
            "kind": EntryKind.DOCUMENT, "document_id": UUID(...), "size": 64, "version": 2}``.

        Raises:
            PathNotFoundError: If ``path`` is not an existing folder.
        """
        p = self._norm(path)
        self._require_folder(p)

        def included(q: PurePosixPath) -> bool:
            return q != p and (q.parent == p or (recursive and p in q.parents))

        folders = sorted(q for q in self._folders if included(q))
        docs = sorted(q for q in self._by_path if included(q))
        entries: list[FolderEntry] = [
            FolderEntry(name=q.name, path=q, kind=EntryKind.FOLDER,
                        document_id=None, size=None, version=None)
            for q in folders
        ]
        for q in docs:
            doc = self._documents[self._by_path[q]]
            entries.append(FolderEntry(
                name=q.name, path=q, kind=EntryKind.DOCUMENT, document_id=doc.document_id,
                size=len(doc.latest.content), version=doc.latest.number,
            ))
        return entries

    # -- documents ----------------------------------------------------------

    def upload_document(
        self,
        folder: PathLike,
        name: str,
        content: bytes | str,
        content_type: Optional[str] = None,
    ) -> DocumentInfo:
        """Upload a new document into an existing folder.

        To replace the content of an existing document use
        :meth:`upload_new_version` instead.

        Args:
            folder: Absolute path of the target folder, e.g. ``"/Documents"``.
            name: File name, e.g. ``"budget.xlsx"``; no slashes.
            content: The file's bytes; ``str`` is stored as UTF-8.
            content_type: MIME type. Guessed from the name when omitted,
                falling back to ``application/octet-stream``.

        Returns:
            Metadata of the new document (version 1), including its
            ``document_id`` and full ``path``.

        Raises:
            InvalidPathError: If the folder path or name is malformed.
            PathNotFoundError: If the folder does not exist.
            PathExistsError: If a document or folder with that name exists.
            ValueError: If the content exceeds the size limit.
        """
        parent = self._norm(folder, "folder")
        self._require_folder(parent)
        p = parent / self._check_name(name)
        if self._exists(p):
            raise PathExistsError(f"{p} already exists; use upload_new_version to update a document")
        data = self._to_bytes(content)
        if content_type is None:
            content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        elif "/" not in content_type or " " in content_type.strip():
            raise ValueError(f"content_type {content_type!r} is not a MIME type like 'text/plain'")
        doc = _Document(document_id=uuid4(), path=p, content_type=content_type.strip())
        doc.versions.append(_Version(1, data, hashlib.sha256(data).hexdigest(), self._clock(), None))
        self._documents[doc.document_id] = doc
        self._by_path[p] = doc.document_id
        return self._info(doc)

    def upload_new_version(
        self,
        document_id: UUID | str,
        content: bytes | str,
        comment: Optional[str] = None,
    ) -> DocumentInfo:
        """Add a new version to an existing document.

        Args:
            document_id: The document's id (from :meth:`upload_document`,
                :meth:`list_folder` or :meth:`get_document`).
            content: The new bytes; ``str`` is stored as UTF-8.
            comment: Optional change description (max 500 characters).

        Returns:
            Metadata for the new latest version.

        Raises:
            DocumentNotFoundError: If the id is unknown or the document is
                in the trash.
            ValueError: If the content is identical to the latest version or
                too large, or the comment is too long.
        """
        doc = self._doc_by_id(document_id)
        data = self._to_bytes(content)
        digest = hashlib.sha256(data).hexdigest()
        if digest == doc.latest.sha256:
            raise ValueError(f"content is identical to version {doc.latest.number}; nothing to upload")
        if comment is not None and len(comment) > 500:
            raise ValueError("comment must be at most 500 characters")
        doc.versions.append(_Version(doc.latest.number + 1, data, digest, self._clock(), comment))
        return self._info(doc)

    def get_document(self, path: PathLike, version: Optional[int] = None) -> DocumentContent:
        """Download a document by path.

        Args:
            path: Absolute path of the document.
            version: Version number to fetch; the latest when omitted.

        Returns:
            The document's id, path, version number, MIME type and bytes.

        Raises:
            PathNotFoundError: If there is no document at ``path``.
            ValueError: If the requested version does not exist.
        """
        doc = self._doc_by_path(self._norm(path))
        if version is None:
            v = doc.latest
        else:
            if isinstance(version, bool) or not isinstance(version, int):
                raise TypeError("version must be an int")
            if not 1 <= version <= doc.latest.number:
                raise ValueError(
                    f"{doc.path} has versions 1..{doc.latest.number}; version {version} does not exist"
                )
            v = doc.versions[version - 1]
        return DocumentContent(doc.document_id, doc.path, v.number, doc.content_type, v.content)

    def list_versions(self, document_id: UUID | str) -> list[VersionInfo]:
        """Return a document's version history, oldest first.

        Args:
            document_id: The document's id.

        Raises:
            DocumentNotFoundError: If the id is unknown or the document is
                in the trash.
        """
        doc = self._doc_by_id(document_id)
        return [VersionInfo(v.number, len(v.content), v.sha256, v.uploaded_at, v.comment)
                for v in doc.versions]

    def move(
        self,
        source: PathLike,
        destination_folder: Optional[PathLike] = None,
        new_name: Optional[str] = None,
    ) -> PurePosixPath:
        """Move and/or rename a document or folder.

        Give ``destination_folder`` to move, ``new_name`` to rename, or both.
        Folders are moved with their whole contents. Document ids and share
        links are unaffected.

        Args:
            source: Current absolute path of the document or folder.
            destination_folder: Existing folder to move into; defaults to the
                current parent folder.
            new_name: New name; defaults to the current name.

        Returns:
            The new absolute path.

        Raises:
            PathNotFoundError: If ``source`` or ``destination_folder`` does
                not exist.
            PathExistsError: If the target path is taken.
            InvalidPathError: If the root is moved, a folder is moved into
                itself, or a name is malformed.
            ValueError: If neither ``destination_folder`` nor ``new_name``
                is given, or the target equals the source.
        """
        src = self._norm(source, "source")
        if src == ROOT:
            raise InvalidPathError("the root folder cannot be moved")
        if destination_folder is None and new_name is None:
            raise ValueError("give destination_folder, new_name, or both")
        if not self._exists(src):
            raise PathNotFoundError(f"nothing exists at {src}")
        dest_parent = src.parent if destination_folder is None else self._norm(destination_folder, "destination_folder")
        self._require_folder(dest_parent, "destination folder")
        target = dest_parent / (src.name if new_name is None else self._check_name(new_name))
        if target == src:
            raise ValueError(f"{src} is already at that location")
        is_folder = src in self._folders
        if is_folder and src in target.parents:
            raise InvalidPathError(f"cannot move folder {src} into itself")
        if self._exists(target):
            raise PathExistsError(f"{target} already exists")

        def rebase(q: PurePosixPath) -> PurePosixPath:
            return target / q.relative_to(src)

        if is_folder:
            for q in self._subtree(src, list(self._folders)):
                self._folders[rebase(q)] = self._folders.pop(q)
            for q in self._subtree(src, list(self._by_path)):
                doc_id = self._by_path.pop(q)
                self._documents[doc_id].path = rebase(q)
                self._by_path[rebase(q)] = doc_id
        else:
            doc_id = self._by_path.pop(src)
            self._documents[doc_id].path = target
            self._by_path[target] = doc_id
        return target

    # -- sharing ------------------------------------------------------------

    def create_share_link(
        self,
        document_id: UUID | str,
        expires_in: timedelta = timedelta(days=7),
    ) -> ShareLink:
        """Create a public link to the latest version of a document.

        Anyone with the link can download the document until it expires or
        is revoked. Links keep working when the document is moved or gets a
        new version, but stop working while it is in the trash.

        Args:
            document_id: The document to share.
            expires_in: Lifetime of the link, between 5 minutes and 30 days.

        Returns:
            The link, with its ``token``, full ``url`` and ``expires_at``.

        Raises:
            DocumentNotFoundError: If the id is unknown or the document is
                in the trash.
            ValueError: If ``expires_in`` is out of range.
        """
        doc = self._doc_by_id(document_id)
        if not isinstance(expires_in, timedelta):
            raise TypeError("expires_in must be a datetime.timedelta")
        if not self.MIN_LINK_LIFETIME <= expires_in <= self.MAX_LINK_LIFETIME:
            raise ValueError("expires_in must be between 5 minutes and 30 days")
        now = self._clock()
        token = secrets.token_urlsafe(16)
        link = _Link(token, doc.document_id, now, now + expires_in)
        self._links[token] = link
        return self._public_link(link)

    def _public_link(self, link: _Link) -> ShareLink:
        return ShareLink(link.token, self._share_base_url + link.token, link.document_id,
                         link.created_at, link.expires_at, link.revoked)

    def _link(self, token: str) -> _Link:
        if not isinstance(token, str):
            raise TypeError("token must be a string")
        # Accept a full URL as well as the bare token.
        if token.startswith(self._share_base_url):
            token = token[len(self._share_base_url):]
        link = self._links.get(token)
        if link is None:
            raise ShareLinkError("unknown share link")
        return link

    def open_share_link(self, token: str) -> SharedDocument:
        """Open a share link as a recipient would.

        Args:
            token: The link's token, or its full URL.

        Returns:
            The shared document's name, type, current version and bytes.
            The owner's folder path and document id are not disclosed.

        Raises:
            ShareLinkError: If the link is unknown or revoked, or the
                document is in the trash.
            ShareLinkExpiredError: If the link has expired.
        """
        link = self._link(token)
        if link.revoked:
            raise ShareLinkError("this share link has been revoked")
        if self._clock() >= link.expires_at:
            raise ShareLinkExpiredError(f"this share link expired at {link.expires_at.isoformat()}")
        doc = self._documents[link.document_id]
        if doc.trash_id is not None:
            raise ShareLinkError("the shared document is no longer available")
        v = doc.latest
        return SharedDocument(doc.path.name, doc.content_type, v.number, v.content, link.expires_at)

    def revoke_share_link(self, token: str) -> ShareLink:
        """Revoke a share link so it can no longer be opened.

        Args:
            token: The link's token, or its full URL.

        Returns:
            The link, now with ``revoked=True``.

        Raises:
            ShareLinkError: If the link is unknown or already revoked.
        """
        link = self._link(token)
        if link.revoked:
            raise ShareLinkError("this share link is already revoked")
        link.revoked = True
        return self._public_link(link)

    # -- trash --------------------------------------------------------------

    def move_to_trash(self, path: PathLike) -> TrashItem:
        """Move a document or folder (with its contents) to the trash.

        Share links to trashed documents stop working until they are
        restored.

        Args:
            path: Absolute path of the document or folder.

        Returns:
            The trash entry; keep its ``trash_id`` to restore it.

        Raises:
            PathNotFoundError: If nothing exists at ``path``.
            InvalidPathError: If ``path`` is the root folder.
        """
        p = self._norm(path)
        if p == ROOT:
            raise InvalidPathError("the root folder cannot be trashed")
        if not self._exists(p):
            raise PathNotFoundError(f"nothing exists at {p}")
        trash_id = "trash-" + secrets.token_hex(4)
        kind = EntryKind.FOLDER if p in self._folders else EntryKind.DOCUMENT
        folders = {q: self._folders.pop(q) for q in self._subtree(p, list(self._folders))}
        doc_ids = []
        for q in self._subtree(p, list(self._by_path)):
            doc_id = self._by_path.pop(q)
            self._documents[doc_id].trash_id = trash_id
            doc_ids.append(doc_id)
        entry = _TrashEntry(trash_id, p, kind, self._clock(), folders, doc_ids)
        self._trash[trash_id] = entry
        return self._trash_item(entry)

    @staticmethod
    def _trash_item(entry: _TrashEntry) -> TrashItem:
        return TrashItem(entry.trash_id, entry.original_path, entry.kind,
                         entry.deleted_at, len(entry.document_ids))

    def list_trash(self) -> list[TrashItem]:
        """List trashed items, most recently deleted first."""
        return sorted((self._trash_item(e) for e in self._trash.values()),
                      key=lambda t: t.deleted_at, reverse=True)

    def restore_from_trash(self, trash_id: str) -> PurePosixPath:
        """Put a trashed item back at its original path.

        Args:
            trash_id: The id from :meth:`move_to_trash` or :meth:`list_trash`,
                e.g. ``"trash-9f3a61c2"``.

        Returns:
            The restored path.

        Raises:
            KeyError: If no trash entry has that id.
            PathNotFoundError: If the original parent folder no longer exists.
            PathExistsError: If something now occupies the original path.
        """
        entry = self._trash.get(trash_id)
        if entry is None:
            raise KeyError(f"no trash entry with id {trash_id!r}")
        p = entry.original_path
        if p.parent not in self._folders:
            raise PathNotFoundError(
                f"cannot restore {p}: folder {p.parent} no longer exists; create it first"
            )
        if self._exists(p):
            raise PathExistsError(f"cannot restore {p}: the path is taken")
        self._folders.update(entry.folders)
        for doc_id in entry.document_ids:
            doc = self._documents[doc_id]
            doc.trash_id = None
            self._by_path[doc.path] = doc_id
        del self._trash[trash_id]
        return p
