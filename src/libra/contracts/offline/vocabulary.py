"""The words the offline proposer reads a tool's metadata with: what marks an identity, a credential, a named
record, a free value; which verbs create, sign in or only read.

Each set is tied to the paper's shared contract rules (Figure 5) or the stateful-tool rules (Figure 7, "F7"), and
is judged against a tool's own name, a parameter's name or its description only, never a runtime value.
"""

from __future__ import annotations

from collections.abc import Iterable

from libra._util.text import compounds, words
from libra.catalog import Tool


def has_phrase(text: str, phrases: Iterable[str]) -> bool:
    low = f" {' '.join(words(text))} "
    return any(f" {p} " in low for p in phrases)


# Identity issued by the system: a caller can never choose one, so a success template needs the exact runtime
# value (rules 4, 6, 11).
ISSUED_IDENTITY = {"id", "ids", "uuid", "guid", "token", "handle", "session", "sid", "ref", "reference", "code", "otp"}


# Credentials of an account (rule 12).
CREDENTIALS = {
    "username",
    "user",
    "userid",
    "login",
    "email",
    "password",
    "passwd",
    "passcode",
    "pin",
    "secret",
    "account",
    "clientid",
    "clientsecret",
    "refreshtoken",
}


# Names that identify a record the caller may have chosen when it was created (file names, keys, recipients);
# at reference time they must match that record (rule 11).
NAMED_REFERENCE = {
    "key",
    "name",
    "filename",
    "file",
    "path",
    "dir",
    "dirname",
    "directory",
    "folder",
    "source",
    "src",
    "username",
    "user",
    "recipient",
    "receiver",
    "contact",
    "symbol",
    "account",
    "handle",
    "email",
}


# People a call sends to, relates or follows: creating a relation never invents the person (rule 11).
PERSON_REFERENCE = {"user", "username", "recipient", "receiver", "contact", "member", "follower", "friend"}


# Leading words of option flags passed as strings ("include_removed", "is_public").
FLAG_PREFIXES = {"include", "is", "has", "show", "enable", "disable", "use", "allow"}


# Tool-name verbs that bring a new record into being; the record's own name is then chosen freely (rule 10).
CREATION_VERBS = {
    "create",
    "add",
    "new",
    "register",
    "make",
    "insert",
    "put",
    "store",
    "save",
    "post",
    "append",
    "write",
    "upload",
    "signup",
    "mk",
    "touch",
    "open",
}


# Tool-name verbs of sign-in (rule 12).
AUTH_WORDS = {"login", "logon", "signin", "authenticate", "auth", "authorize"}


# Tool-name words of account creation / credential recovery: new identifiers and secrets are constructed (rule 12).
# "signup"/"register" say it alone; the other verbs only when the tool's name is about an account or a secret
# (create_account, reset_password), not when it creates something else for a signed-in user (create_transaction).
ACCOUNT_CREATION = {"register", "signup", "create", "reset", "recover", "change"}


ACCOUNT_ONLY_VERBS = {"register", "signup"}


ACCOUNT_OBJECTS = {
    "account",
    "user",
    "profile",
    "password",
    "passcode",
    "pin",
    "credential",
    "credentials",
    "secret",
    "login",
}


# Secrets a recovery or change call sets anew; the account's identifier (an e-mail, a user name) still has to exist.
SECRETS = {"password", "passwd", "passcode", "pin", "secret", "clientsecret", "code", "otp"}


# Parameter words that mark a freely chosen value (rule 10): content, criteria, quantities, dates and flags.
FREE_VALUE = {
    "content",
    "text",
    "message",
    "body",
    "title",
    "description",
    "comment",
    "note",
    "subject",
    "query",
    "keyword",
    "keywords",
    "pattern",
    "search",
    "filter",
    "amount",
    "quantity",
    "price",
    "cost",
    "value",
    "number",
    "count",
    "limit",
    "threshold",
    "date",
    "time",
    "mode",
    "option",
    "type",
    "status",
    "priority",
    "resolution",
    "unit",
    "temperature",
    "speed",
    "distance",
    "min",
    "max",
    "top",
    "k",
    "lines",
    "format",
    "level",
    "tags",
    "label",
}


# Description phrases saying the value must already exist (rules 5, 11).
EXISTING_CUES = (
    "existing",
    "already",
    "previously",
    "obtained from",
    "returned by",
    "issued",
    "registered",
    "must match",
    "must exist",
    "uniquely identifies",
    "id of",
    "identifier of",
    "stored in",
)


# Description phrases saying the value is new or a free search criterion (rule 10).
NEW_CUES = ("new", "to create", "to be created")


SEARCH_CUES = ("search for", "filter by", "filter", "to look for")


# Read-only tool verbs: a returned boolean is result data, never a failure flag (F7).
READ_VERBS = {
    "get",
    "list",
    "check",
    "search",
    "view",
    "display",
    "find",
    "retrieve",
    "read",
    "show",
    "is",
    "has",
    "estimate",
    "fetch",
    "query",
    "count",
    "compute",
    "calculate",
    "lookup",
}


# Words of generic acknowledgement / control values that should not propagate (rule 24).
NON_PROPAGATING = {
    "status",
    "success",
    "ok",
    "error",
    "errors",
    "ack",
    "result",
    "count",
    "total",
    "rating",
    "rank",
    "score",
    "page",
    "offset",
    "limit",
    "cursor",
    "next",
    "prev",
    "k",
    "top",
    "human",
    "readable",
}


STATUS_TEXT_CUES = (
    "status of",
    "result of",
    "error message",
    "describing the result",
    "whether",
    "true if",
    "false if",
    "status message",
    "number of",
    "count of",
)


def tool_words(tool: Tool) -> set[str]:
    return compounds(words(tool.short_name))


def is_auth_tool(tool: Tool) -> bool:
    """Sign-in tools, recognised from the tool's own name (rule 12)."""
    return bool(tool_words(tool) & AUTH_WORDS)


def is_creation_tool(tool: Tool) -> bool:
    return bool(tool_words(tool) & CREATION_VERBS)


def account_creation_kind(tool: Tool) -> str | None:
    """ "create" for sign-up/account creation, "recover" for a password reset or change, else None (rule 12)."""
    tw = tool_words(tool)
    if tw & ACCOUNT_ONLY_VERBS or (tw & {"create"} and tw & ACCOUNT_OBJECTS):
        return "create"
    if tw & {"reset", "recover", "change"} and tw & ACCOUNT_OBJECTS:
        return "recover"
    return None


def is_read_tool(tool: Tool) -> bool:
    toks = words(tool.short_name)
    return bool(toks) and (toks[0] in READ_VERBS or bool(set(toks) & {"status"} and set(toks) & {"get", "check"}))
