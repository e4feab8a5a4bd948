"""Bugtracker: a lightweight issue tracker served over MCP (stdio).

Projects have a short upper-case key (``WEB``) and issues are numbered within
their project (``WEB-1``, ``WEB-2``, ...). Anyone can read; every change needs
an API key, obtained from the ``login`` tool and valid for eight hours.

All tools return structured results (pydantic models), so clients get both a
JSON text block and ``structuredContent`` matching the tool's output schema.

Start it with ``python server.py``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer(
    "bugtracker",
    instructions="Issue tracker. Call `login` first to obtain an api_key for any tool that changes data.",
)

API_KEY_TTL = timedelta(hours=8)
PROJECT_KEY_RE = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
ISSUE_KEY_RE = re.compile(r"^([A-Z][A-Z0-9]{1,9})-(\d+)$")
COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")
LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,29}$")


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class AuthenticationError(ToolError):
    """Missing, unknown or expired API key, or bad credentials."""


class NotFoundError(ToolError):
    """A project, issue, label or user does not exist."""


class InvalidTransitionError(ToolError):
    """The issue's current status does not allow the requested change."""


# ---------------------------------------------------------------------------
# Public models
# ---------------------------------------------------------------------------


class Priority(str, Enum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Status(str, Enum):
    OPEN = "open"
    IN_PROGRESS = "in_progress"
    CLOSED = "closed"


class Resolution(str, Enum):
    FIXED = "fixed"
    WONT_FIX = "wont_fix"
    DUPLICATE = "duplicate"
    CANNOT_REPRODUCE = "cannot_reproduce"


class LoginResult(BaseModel):
    """A freshly issued API key."""

    api_key: str = Field(description="Pass this as `api_key` to every tool that modifies data.")
    username: str
    expires_at: datetime


class UserInfo(BaseModel):
    username: str
    display_name: str
    email: str


class UserList(BaseModel):
    users: list[UserInfo]


class Label(BaseModel):
    project_key: str
    name: str
    color: str


class Project(BaseModel):
    key: str = Field(description="Short upper-case project key, e.g. 'WEB'.")
    name: str
    description: str
    lead: str
    created_at: datetime
    labels: list[Label] = Field(default_factory=list)
    open_issues: int = 0


class ProjectList(BaseModel):
    projects: list[Project]


class Issue(BaseModel):
    issue_key: str = Field(description="Project key plus number, e.g. 'WEB-12'.")
    project_key: str
    title: str
    description: str
    priority: Priority
    status: Status
    resolution: Resolution | None = None
    duplicate_of: str | None = None
    labels: list[str] = Field(default_factory=list)
    reporter: str
    assignee: str | None = None
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None = None


class IssueList(BaseModel):
    total: int = Field(description="Number of matching issues (before `limit` is applied).")
    issues: list[Issue]


# ---------------------------------------------------------------------------
# In-memory state
# ---------------------------------------------------------------------------


class _Account(BaseModel):
    username: str
    display_name: str
    email: str
    salt: bytes
    password_hash: bytes


_accounts: dict[str, _Account] = {}
_api_keys: dict[str, tuple[str, datetime]] = {}  # key -> (username, expires_at)
_projects: dict[str, Project] = {}
_issues: dict[str, Issue] = {}
_issue_counters: dict[str, int] = {}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 50_000)


def _add_account(username: str, display_name: str, password: str) -> None:
    salt = secrets.token_bytes(16)
    _accounts[username] = _Account(
        username=username,
        display_name=display_name,
        email=f"{username}@bugtracker.local",
        salt=salt,
        password_hash=_hash(password, salt),
    )


def _authenticate(api_key: str) -> str:
    """Return the username behind ``api_key`` or raise AuthenticationError."""
    entry = _api_keys.get(api_key)
    if entry is None:
        raise AuthenticationError("Invalid API key. Call `login` to obtain one.")
    username, expires_at = entry
    if expires_at <= _now():
        del _api_keys[api_key]
        raise AuthenticationError("API key expired. Call `login` again.")
    return username


def _project(project_key: str) -> Project:
    key = project_key.strip().upper()
    try:
        return _projects[key]
    except KeyError:
        raise NotFoundError(f"No project with key '{project_key}'.") from None


def _issue(issue_key: str) -> Issue:
    key = issue_key.strip().upper()
    if not ISSUE_KEY_RE.match(key):
        raise ToolError(f"'{issue_key}' is not an issue key; expected something like 'WEB-12'.")
    try:
        return _issues[key]
    except KeyError:
        raise NotFoundError(f"Issue '{key}' does not exist.") from None


def _touch(issue: Issue) -> Issue:
    issue.updated_at = _now()
    return issue


def _project_view(project: Project) -> Project:
    open_count = sum(1 for i in _issues.values() if i.project_key == project.key and i.status != Status.CLOSED)
    return project.model_copy(update={"open_issues": open_count})


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


@mcp.tool()
def login(username: str, password: str) -> LoginResult:
    """Sign in and receive an API key.

    The key is valid for 8 hours and must be passed as ``api_key`` to every tool
    that creates or changes something. Read-only tools need no key.

    Example::

        login(username="demo", password="demo1234")
        -> {"api_key": "bt_3f9c...", "username": "demo", "expires_at": "..."}
    """
    account = _accounts.get(username)
    if account is None or not hmac.compare_digest(account.password_hash, _hash(password, account.salt)):
        raise AuthenticationError("Invalid username or password.")
    api_key = "bt_" + secrets.token_hex(20)
    expires_at = _now() + API_KEY_TTL
    _api_keys[api_key] = (username, expires_at)
    return LoginResult(api_key=api_key, username=username, expires_at=expires_at)


@mcp.tool()
def list_users() -> UserList:
    """List all user accounts (usernames can be used as issue assignees)."""
    return UserList(
        users=[UserInfo(username=a.username, display_name=a.display_name, email=a.email) for a in _accounts.values()]
    )


@mcp.tool()
def create_project(
    api_key: str,
    key: Annotated[str, Field(description="2-10 characters, letters/digits, starting with a letter; stored upper-case")],
    name: Annotated[str, Field(min_length=1, max_length=100)],
    description: str = "",
) -> Project:
    """Create a project. The caller becomes the project lead.

    The project starts with the default labels ``bug`` and ``enhancement``.
    """
    user = _authenticate(api_key)
    key = key.strip().upper()
    if not PROJECT_KEY_RE.match(key):
        raise ToolError(f"Invalid project key '{key}': use 2-10 letters/digits starting with a letter, e.g. 'API'.")
    if key in _projects:
        raise ToolError(f"Project key '{key}' is already taken.")
    project = Project(
        key=key,
        name=name.strip(),
        description=description,
        lead=user,
        created_at=_now(),
        labels=[
            Label(project_key=key, name="bug", color="#d73a4a"),
            Label(project_key=key, name="enhancement", color="#a2eeef"),
        ],
    )
    _projects[key] = project
    _issue_counters[key] = 0
    return _project_view(project)


@mcp.tool()
def list_projects() -> ProjectList:
    """List all projects with their labels and number of open issues."""
    return ProjectList(projects=[_project_view(p) for p in _projects.values()])


@mcp.tool()
def create_issue(
    api_key: str,
    project_key: str,
    title: Annotated[str, Field(min_length=3, max_length=200)],
    description: str = "",
    priority: Priority = Priority.MEDIUM,
) -> Issue:
    """File a new issue in a project.

    The caller is recorded as the reporter. New issues are ``open`` and
    unassigned. Returns the issue with its key (e.g. ``WEB-4``).
    """
    user = _authenticate(api_key)
    project = _project(project_key)
    if not title.strip():
        raise ToolError("Title must not be blank.")
    _issue_counters[project.key] += 1
    now = _now()
    issue = Issue(
        issue_key=f"{project.key}-{_issue_counters[project.key]}",
        project_key=project.key,
        title=title.strip(),
        description=description,
        priority=priority,
        status=Status.OPEN,
        reporter=user,
        created_at=now,
        updated_at=now,
    )
    _issues[issue.issue_key] = issue
    return issue


@mcp.tool()
def get_issue(issue_key: str) -> Issue:
    """Fetch a single issue by key, e.g. ``WEB-1``."""
    return _issue(issue_key)


@mcp.tool()
def search_issues(
    project_key: str | None = None,
    status: Status | None = None,
    priority: Priority | None = None,
    label: str | None = None,
    assignee: str | None = None,
    text: Annotated[str | None, Field(description="Case-insensitive substring of title or description")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
) -> IssueList:
    """Search issues. All filters are optional and combined with AND.

    Results are sorted by priority (critical first), then by most recently
    updated.
    """
    issues = list(_issues.values())
    if project_key is not None:
        key = _project(project_key).key
        issues = [i for i in issues if i.project_key == key]
    if status is not None:
        issues = [i for i in issues if i.status == status]
    if priority is not None:
        issues = [i for i in issues if i.priority == priority]
    if label is not None:
        issues = [i for i in issues if label in i.labels]
    if assignee is not None:
        issues = [i for i in issues if i.assignee == assignee]
    if text:
        needle = text.lower()
        issues = [i for i in issues if needle in i.title.lower() or needle in i.description.lower()]
    order = [Priority.CRITICAL, Priority.HIGH, Priority.MEDIUM, Priority.LOW]
    issues.sort(key=lambda i: i.updated_at, reverse=True)
    issues.sort(key=lambda i: order.index(i.priority))
    return IssueList(total=len(issues), issues=issues[:limit])


@mcp.tool()
def update_issue(
    api_key: str,
    issue_key: str,
    title: str | None = None,
    description: str | None = None,
    priority: Priority | None = None,
    status: Literal["open", "in_progress"] | None = None,
) -> Issue:
    """Change an open issue's title, description, priority or status.

    Use ``close_issue`` / ``reopen_issue`` to close or reopen; closed issues
    cannot be edited.
    """
    _authenticate(api_key)
    issue = _issue(issue_key)
    if issue.status == Status.CLOSED:
        raise InvalidTransitionError(f"{issue.issue_key} is closed; reopen it before editing.")
    if title is not None:
        if len(title.strip()) < 3:
            raise ToolError("Title must be at least 3 characters.")
        issue.title = title.strip()
    if description is not None:
        issue.description = description
    if priority is not None:
        issue.priority = priority
    if status is not None:
        issue.status = Status(status)
    return _touch(issue)


@mcp.tool()
def assign_issue(api_key: str, issue_key: str, assignee: str | None) -> Issue:
    """Assign an issue to a user, or pass ``assignee=null`` to unassign it."""
    _authenticate(api_key)
    issue = _issue(issue_key)
    if assignee is not None and assignee not in _accounts:
        raise NotFoundError(f"No user named '{assignee}'.")
    issue.assignee = assignee
    return _touch(issue)


@mcp.tool()
def close_issue(
    api_key: str,
    issue_key: str,
    resolution: Resolution = Resolution.FIXED,
    duplicate_of: Annotated[
        str | None, Field(description="Key of the original issue; required when resolution is 'duplicate'")
    ] = None,
) -> Issue:
    """Close an issue with a resolution.

    Closing an already closed issue is an error. With
    ``resolution="duplicate"`` you must name the original issue, which must be
    in the same project.
    """
    _authenticate(api_key)
    issue = _issue(issue_key)
    if issue.status == Status.CLOSED:
        raise InvalidTransitionError(f"{issue.issue_key} is already closed.")
    if resolution == Resolution.DUPLICATE:
        if not duplicate_of:
            raise ToolError("duplicate_of is required when resolution is 'duplicate'.")
        original = _issue(duplicate_of)
        if original.issue_key == issue.issue_key:
            raise ToolError("An issue cannot be a duplicate of itself.")
        if original.project_key != issue.project_key:
            raise ToolError("duplicate_of must be an issue in the same project.")
        issue.duplicate_of = original.issue_key
    elif duplicate_of is not None:
        raise ToolError("duplicate_of is only allowed with resolution 'duplicate'.")
    issue.status = Status.CLOSED
    issue.resolution = resolution
    issue.closed_at = _now()
    return _touch(issue)


@mcp.tool()
def reopen_issue(api_key: str, issue_key: str) -> Issue:
    """Reopen a closed issue. Its resolution is cleared and status set to ``open``."""
    _authenticate(api_key)
    issue = _issue(issue_key)
    if issue.status != Status.CLOSED:
        raise InvalidTransitionError(f"{issue.issue_key} is not closed (status: {issue.status.value}).")
    issue.status = Status.OPEN
    issue.resolution = None
    issue.duplicate_of = None
    issue.closed_at = None
    return _touch(issue)


@mcp.tool()
def create_label(
    api_key: str,
    project_key: str,
    name: Annotated[str, Field(description="Lower-case, e.g. 'needs-triage'")],
    color: Annotated[str, Field(description="Hex colour like '#fbca04'")] = "#ededed",
) -> Label:
    """Define a new label in a project so issues can be tagged with it."""
    _authenticate(api_key)
    project = _project(project_key)
    name = name.strip()
    if not LABEL_RE.match(name):
        raise ToolError("Label names are 1-30 lower-case letters, digits, '-' or '_'.")
    if not COLOR_RE.match(color):
        raise ToolError(f"Invalid colour '{color}'; expected '#rrggbb'.")
    if any(lbl.name == name for lbl in project.labels):
        raise ToolError(f"Project {project.key} already has a label '{name}'.")
    label = Label(project_key=project.key, name=name, color=color.lower())
    project.labels.append(label)
    return label


@mcp.tool()
def add_label(api_key: str, issue_key: str, label: str) -> Issue:
    """Tag an issue with one of its project's labels.

    The label must already exist in the issue's project (see ``create_label``
    and ``list_projects``). Adding a label the issue already has is a no-op.
    """
    _authenticate(api_key)
    issue = _issue(issue_key)
    project = _projects[issue.project_key]
    if not any(lbl.name == label for lbl in project.labels):
        raise NotFoundError(
            f"Project {project.key} has no label '{label}'. Available: {', '.join(l.name for l in project.labels)}."
        )
    if label not in issue.labels:
        issue.labels.append(label)
        _touch(issue)
    return issue


# ---------------------------------------------------------------------------
# Demo data
# ---------------------------------------------------------------------------


def _seed() -> None:
    _add_account("demo", "Demo User", "demo1234")
    _add_account("maria", "Maria Santos", secrets.token_urlsafe(16))
    _add_account("tom", "Tom Becker", secrets.token_urlsafe(16))

    created = _now() - timedelta(days=14)
    web = Project(
        key="WEB",
        name="Website",
        description="Public website and customer portal.",
        lead="maria",
        created_at=created,
        labels=[
            Label(project_key="WEB", name="bug", color="#d73a4a"),
            Label(project_key="WEB", name="enhancement", color="#a2eeef"),
            Label(project_key="WEB", name="docs", color="#0075ca"),
        ],
    )
    _projects["WEB"] = web
    samples = [
        ("Login button misaligned on mobile", Priority.HIGH, Status.OPEN, "tom", ["bug"]),
        ("Add dark mode", Priority.LOW, Status.IN_PROGRESS, "maria", ["enhancement"]),
        ("Broken link in footer", Priority.MEDIUM, Status.CLOSED, None, ["bug"]),
    ]
    for n, (title, prio, status, assignee, labels) in enumerate(samples, start=1):
        ts = created + timedelta(days=n)
        _issues[f"WEB-{n}"] = Issue(
            issue_key=f"WEB-{n}",
            project_key="WEB",
            title=title,
            description="",
            priority=prio,
            status=status,
            resolution=Resolution.FIXED if status == Status.CLOSED else None,
            labels=labels,
            reporter="maria",
            assignee=assignee,
            created_at=ts,
            updated_at=ts,
            closed_at=ts + timedelta(hours=3) if status == Status.CLOSED else None,
        )
    _issue_counters["WEB"] = len(samples)


_seed()


if __name__ == "__main__":
    mcp.run()
