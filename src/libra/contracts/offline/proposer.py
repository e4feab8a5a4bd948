"""The offline (LLM-free) contract proposer.

It reads one tool's public metadata -- name, description, parameter schemas and the optional response schema --
and nothing else (rules 39-40): no other tool, task, gold call or runtime value shapes a proposal. Every decision
below is a small documented heuristic tied to the paper's shared contract rules (Figure 5) or the stateful-tool
rules (Figure 7); rule numbers in comments refer to Figure 5 unless marked "F7".
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jsonpath

from libra.catalog import Tool
from libra.contracts.exclusive import Exclusive, exclusive_choices, exclusive_inputs
from libra.contracts.model import (
    CHECKED_LITERAL,
    MAX_REVISIONS,
    NESTED_REFERENCE,
    Argument,
    Contract,
    Export,
    FromText,
    Template,
)
from libra.contracts.outcome import (
    canonical_path,
    classify,
    extract,
    is_scalar,
    record_dict,
    refusal_of,
    refusal_schema,
    rejection_message,
    schema_accepts,
    with_refusals,
)
from libra.contracts.text_values import STRUCTURED_KINDS, is_text, text_findings
from libra.runtime.base import json_type  # noqa: F401 - re-exported for contract code
from libra.schema import (  # noqa: F401 - re-exported: these lived here before schema.py
    CONTACT_ADDRESS,
    ENCODED_KINDS,
    ENTITY_EXAMPLES,
    SENTINEL_INT,
    SENTINEL_STRING,
    _compounds,
    _described_bound,
    _described_options,
    _fits,
    _format_example,
    _number_in_range,
    _string_example,
    described_choices,
    encoded_format,
    field_text,
    literal_for,
    message_parameter,
    repair_literal,
    schema_type,
    sentinel_for,
    words,
)


def closed_choices(description: str) -> list[str]:
    """The complete set of values a description allows, or [] when it lists none or only examples."""
    values, closed = described_choices(description)
    return values if closed else []


# ---------------------------------------------------------------------------------------------------------------
# Words and cues
# ---------------------------------------------------------------------------------------------------------------


def _has_phrase(text: str, phrases: Iterable[str]) -> bool:
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


# ---------------------------------------------------------------------------------------------------------------
# Parameter decisions
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamDecision:
    """Whether a parameter is an observation or a literal, and the heuristic (with its rule) that decided."""

    kind: str  # "observation" | "literal"
    reason: str


def tool_words(tool: Tool) -> set[str]:
    return _compounds(words(tool.short_name))


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


def decide_parameter(tool: Tool, name: str, schema: dict[str, Any]) -> ParamDecision:
    """Observation or literal for one parameter, from its name, schema and description and the tool's name.

    The heuristics run in order and the first that fires decides; each names the rule it implements.
    """
    desc = schema.get("description", "") or ""
    toks = words(name)
    comp = _compounds(toks)
    head_toks = toks[: toks.index("to")] if "to" in toks[1:] else toks  # "username_to_follow" -> "username"
    head = _compounds(head_toks[-2:]) if head_toks else set()
    last = head_toks[-1] if head_toks else ""
    t = schema_type(schema)
    item_t = schema_type(schema.get("items")) if t == "array" and isinstance(schema.get("items"), dict) else None

    # H1 (rules 3, 10): a value from a closed set the metadata lists, or a number/boolean, is constructible
    # from public information; quantities and flags are caller choices.
    if toks and toks[0] in FLAG_PREFIXES and len(toks) > 1:
        return ParamDecision("literal", "H1 flag-like option chosen by the caller (rule 10)")
    if "enum" in schema or "const" in schema or described_choices(desc)[1]:
        return ParamDecision("literal", "H1 closed set of allowed values (rules 3, 10)")
    if t in ("number", "boolean", "object") or item_t in ("number", "boolean"):
        return ParamDecision("literal", "H1 number/boolean/structured value chosen by the caller (rule 10)")
    # H2 (rules 10, 12): a parameter named or described as new is chosen freely -- including a replacement
    # secret during credential recovery.
    if "new" in toks or _has_phrase(desc, NEW_CUES):
        return ParamDecision("literal", "H2 new value chosen by this call (rules 10, 12)")
    # H3 (rules 5, 11): "old"/"existing"/"current" in the name means it must match a present record.
    if comp & {"old", "existing", "current", "previous"}:
        return ParamDecision("observation", "H3 name refers to an existing value (rules 5, 11)")
    # H4 (rule 12): in a sign-in call, the account identifier and its secret are both observations; the other
    # inputs (grant types, display names) stay literals.
    if is_auth_tool(tool) and (head & CREDENTIALS or last in {"id", "token", "secret", "key", "password"}):
        return ParamDecision("observation", "H4 sign-in identifier/secret of an existing account (rule 12)")
    # H5 (rule 12): account creation constructs the new identifier and secret; credential recovery constructs
    # only the new secret (the account it recovers must exist).
    kind = account_creation_kind(tool)
    if (
        comp & CREDENTIALS
        and last not in ISSUED_IDENTITY
        and (kind == "create" or kind == "recover" and comp & SECRETS)
    ):
        return ParamDecision("literal", "H5 new account identifier/secret at creation (rule 12)")
    # H6 (rules 4, 6, 11): identifiers, tokens, handles and codes are issued by the system; a guessed value of the
    # right type would fail, so success needs the exact runtime value.
    if last in ISSUED_IDENTITY or (t == "integer" and "id" in comp):
        return ParamDecision("observation", "H6 system-issued identifier/token/handle/code (rules 4, 6, 11)")
    # H6b (rules 4, 11): the description's head noun is an identifier or code ("The zipcode of the first city",
    # "The ID of the order"), even when the parameter's own name does not say so.
    m = re.match(r"\s*(?:the|a|an)\s+([a-z0-9 _-]{1,30}?)\s+(?:of|for|to|from)\b", desc.lower())
    if (
        t in (None, "string", "integer")
        and m
        and (
            set(m.group(1).replace("-", " ").split()) & ISSUED_IDENTITY or m.group(1).replace(" ", "").endswith("code")
        )
    ):
        return ParamDecision("observation", "H6b described as an identifier or code (rules 4, 11)")
    # H7 (rules 5, 11): the description says the value must already exist or identify a particular record.
    if _has_phrase(desc, EXISTING_CUES):
        return ParamDecision("observation", "H7 description says the value must already exist (rules 5, 11)")
    address = bool(comp & CONTACT_ADDRESS)
    named = bool(head & NAMED_REFERENCE) or last in NAMED_REFERENCE or last.rstrip("s") in NAMED_REFERENCE or address
    free_words = FREE_VALUE - {"number"} if address else FREE_VALUE  # "phone number" is no quantity
    person = bool(head & PERSON_REFERENCE) or last.rstrip("s") in PERSON_REFERENCE
    # H8 (rule 10): search and filter criteria are free even when they look like names.
    if named and _has_phrase(desc, SEARCH_CUES):
        return ParamDecision("literal", "H8 search/filter criterion (rule 10)")
    # H9 (rule 10): a creating tool chooses the name of the record it creates (file names, keys, ...).
    if named and not person and is_creation_tool(tool) and not (comp & free_words):
        return ParamDecision("literal", "H9 name of the record this call creates (rule 10)")
    # H10 (rules 11, 13): a name/key/path/recipient in a call that reads, changes, deletes or sends to a record
    # must match that record.
    if named and not (set(toks) & free_words):
        return ParamDecision("observation", "H10 name/key/path/recipient of a pre-existing record (rule 11)")
    # H10b (registry rules): an encoded structure or sequence (a SMILES or SELFIES string, an InChI, a biological
    # sequence, a serialized document) is a payload another tool produces; a literal would be long or invented.
    if t in (None, "string") and encoded_format(name, desc) is not None:
        return ParamDecision("observation", "H10b encoded value or sequence produced upstream (registry rules)")
    # H11 (rules 3, 10, 13): everything else -- content, criteria, amounts, dates -- is a caller choice; a value
    # is not an observation merely because some tool could output a compatible one.
    return ParamDecision("literal", "H11 freely chosen value (rules 3, 10, 13)")


# ---------------------------------------------------------------------------------------------------------------
# Exports
# ---------------------------------------------------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def child_path(parent: str, key: str) -> str:
    return f"{parent}.{key}" if _IDENT.match(key) else f"{parent}[{key!r}]".replace('"', "'")


def should_propagate(name: str, schema: dict[str, Any]) -> bool:
    """Rules 22-25: reusable identities, content, attributes and money propagate; acks, flags, counters don't.

    Judged from the field's name, type and description only, never from a runtime value (rule 25).
    """
    t = schema_type(schema)
    if t == "boolean":
        return False
    toks = set(words(name))
    desc = schema.get("description", "") or ""
    if toks & {
        "id",
        "ids",
        "token",
        "uuid",
        "key",
        "code",
        "handle",
        "name",
        "path",
        "url",
        "address",
        "email",
        "date",
        "time",
    }:
        return True
    if toks & NON_PROPAGATING:
        return False
    if _has_phrase(desc, STATUS_TEXT_CUES):
        return False
    return True


def _leaf_schema(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t = schema_type(schema)
    if t:
        out["type"] = t
    for k in ("enum", "format", "description"):
        if k in schema:
            out[k] = copy.deepcopy(schema[k])
    return out


def _leaves(
    schema: dict[str, Any], path: str, label: list[str], depth: int = 0
) -> list[tuple[str, list[str], dict[str, Any]]]:
    """Scalar leaves declared by a schema: (JSONPath, field-label chain, leaf schema); arrays use ``[*]`` (rule 21)."""
    if depth > 6 or not isinstance(schema, dict):
        return []
    t = schema_type(schema)
    if t == "object":
        out = []
        for key, sub in (schema.get("properties") or {}).items():
            out.extend(_leaves(sub, child_path(path, key), label + [key], depth + 1))
        if not schema.get("properties"):
            out.extend(_map_keys(schema, path, label))
        return out
    if t == "array":
        items = schema.get("prefixItems") or schema.get("items")
        if isinstance(items, list):
            out = []
            for i, sub in enumerate(items):
                out.extend(_leaves(sub, f"{path}[{i}]", label + [str(i)], depth + 1))
            return out
        if isinstance(items, dict):
            return _leaves(items, f"{path}[*]", label, depth + 1)
        return [(f"{path}[*]", label, {})]
    if t in ("string", "integer", "number", "boolean") or t is None and not schema.get("properties"):
        return [(path, label, _leaf_schema(schema))]
    return []


_MAP_BY = re.compile(r"\b(?:grouped|keyed|indexed|organi[sz]ed) by (?:the )?([a-z]+)", re.I)
_MAP_WORDS = re.compile(r"\b(?:mapping|map of|dictionary of|dict of)\b", re.I)


def _map_keys(schema: dict[str, Any], path: str, label: list[str]) -> list[tuple[str, list[str], dict[str, Any]]]:
    """The keys of an object the metadata describes as a map ("messages grouped by receiver"): there the keys are
    the identifiers (``[~]`` selects them), named after what they are keyed by when the description says."""
    desc = schema.get("description") or ""
    by = _MAP_BY.search(desc)
    if by:
        name = by.group(1).lower()
    elif _MAP_WORDS.search(desc):
        name = "_".join([*label, "key"]) if label else "key"
    else:
        return []
    return [(f"{path}[~]", [name], {"type": "string", "description": f"a key of {'.'.join(label) or 'the response'}"})]


def _export_name(label: list[str], taken: set[str], fallback: str, prefix: str = "") -> str:
    """The field's own label, lengthened with its parents, then the source prefix, only when needed to stay
    unique (rule 21 labels); a response field echoing an argument name becomes ``response_<name>``."""
    parts = [p for p in label if not p.isdigit()] or [fallback]
    for n in range(1, len(parts) + 1):
        cand = "_".join(parts[-n:])
        if cand not in taken:
            return cand
    if prefix and f"{prefix}_{'_'.join(parts)}" not in taken:
        return f"{prefix}_{'_'.join(parts)}"
    base, i = "_".join(parts), 2
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def scalar_response_name(tool: Tool) -> str:
    """Name of a response export that has no field name of its own -- a scalar response, or the elements of a bare
    list of scalars: the tool name minus a read verb (``get_zipcode`` -> ``zipcode``, ``show_genres`` ->
    ``genres``), else ``response_value``.

    Why: the name is what the exploration ranks offers by and what propagation picks providers by (field
    similarity to the consumer's input); ``response_value`` resembles no input, so a listing's values would go
    last everywhere, while the tool's own name says what it returns."""
    toks = words(tool.short_name)
    if len(toks) > 1 and toks[0] in READ_VERBS:
        return "_".join(toks[1:])
    return "response_value"


def argument_exports(tool: Tool) -> list[Export]:
    """Caller arguments stay observable after the call: mechanical ``$.param`` exports (rule 20)."""
    out = []
    for p in tool.param_names:
        s = tool.param_schema(p)
        t = schema_type(s)
        path = child_path("$", p)
        if t == "array":
            items = s.get("items") if isinstance(s.get("items"), dict) else {}
            out.append(
                Export(
                    p,
                    "arguments",
                    f"{path}[*]",
                    _leaf_schema(items),
                    should_propagate(p, {**items, "description": s.get("description", "")}),
                )
            )
        elif t == "object":
            continue  # a structured argument is an input bundle, not a reusable scalar
        else:
            out.append(Export(p, "arguments", path, _leaf_schema(s), should_propagate(p, s)))
    return out


#: The identifier forms read from a reply declared as free text before any call is seen (see
#: :func:`identifier_exports`).
DECLARED_TEXT_KINDS = ("hex_id", "uuid", "path", "url")


def identifier_exports(tool: Tool, taken: set[str]) -> list[Export]:
    """For a reply declared as free text -- a plain string without a closed set or a format -- exports of the
    identifiers printed in it (hashes, uuids, paths, URLs). An undeclared reply gets none: it may be anything
    (a number, a single token), and revision adds what an observed text holds (:func:`text_exports`).

    Why: a tool that only succeeds after others ran (a commit after staging) is never seen succeeding while its
    contract is checked, so revision cannot learn what its text holds; yet the id it prints ("committed with hash
    ...") is what the next call needs. These forms are recognisable in any text, and extraction reads them only
    from text (a reply with inner whitespace): a reply that is a single token is already the ``$`` export's value.
    """
    r = tool.response_schema
    if r is None or schema_type(r) != "string" or "enum" in r or "format" in r or "const" in r:
        return []
    out = []
    for kind in DECLARED_TEXT_KINDS:
        name = _export_name([kind], taken, kind, prefix="text")
        taken.add(name)
        out.append(
            Export(
                name,
                "response",
                "$",
                {"type": "string", "description": f"a {kind.replace('_', ' ')} printed in the reply"},
                True,
                FromText(kind),
            )
        )
    return out


def response_exports(tool: Tool, taken: set[str]) -> list[Export]:
    """Every scalar leaf of the public response schema (rule 21), or one ``$`` export for a scalar response."""
    r = tool.response_schema
    out: list[Export] = []
    if r is None or schema_type(r) not in ("object", "array"):
        name = _export_name([scalar_response_name(tool)], taken, "response_value")
        taken.add(name)
        schema = _leaf_schema(r) if r else {}
        return [Export(name, "response", "$", schema, should_propagate(name, schema)), *identifier_exports(tool, taken)]
    for path, label, leaf in _leaves(r, "$", []):
        name = _export_name(label or [scalar_response_name(tool)], taken, "response_value", prefix="response")
        taken.add(name)
        out.append(Export(name, "response", path, leaf, should_propagate(label[-1] if label else name, leaf)))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Outcome schemas
# ---------------------------------------------------------------------------------------------------------------

BASE_SUCCESS: dict[str, Any] = {
    "type": "object",
    "properties": {"status": {"const": "success"}},
    "required": ["status"],
}
BASE_FAILURE: dict[str, Any] = {
    "type": "object",
    "properties": {"status": {"enum": ["rejected", "error"]}},
    "required": ["status"],
}


def success_flags(tool: Tool) -> list[str]:
    """Top-level boolean response fields the metadata defines as the action's success flag (F7 rules).

    Only for actions, sign-ins and mutations: for a read/status tool a boolean is result data and both values
    belong to success. The field must be a boolean named like a status/success flag and described as true when
    the operation worked.
    """
    r = tool.response_schema
    if not r or schema_type(r) != "object" or is_read_tool(tool):
        return []
    flags = []
    for key, sub in (r.get("properties") or {}).items():
        if schema_type(sub) != "boolean":
            continue
        toks = set(words(key))
        desc = (sub.get("description") or "").lower()
        named_flag = bool(toks & {"status", "success", "successful", "ok", "succeeded"})
        described = "true if" in desc or "whether" in desc or "true when" in desc
        if named_flag and described:
            flags.append(key)
    return flags


def outcome_schemas(tool: Tool) -> tuple[dict[str, Any], dict[str, Any]]:
    """S+ and S- over the normalized record (rules 34-38, F7).

    S+ requires status success and, when the response is declared as an object or array, an output of that
    shape. Declared success flags must not be false in S+, and a success record with a false flag is a
    business-level failure in S-; the two stay disjoint. A refusal reported as data (error text, an error
    object, a list of nothing but those, or -- for a tool that acts or verifies -- a false verdict flag on a
    call that changed nothing) is a failure wherever the tool puts it: see :func:`~.outcome.refusal_schema`.
    """
    success = copy.deepcopy(BASE_SUCCESS)
    failure = copy.deepcopy(BASE_FAILURE)
    rt = schema_type(tool.response) if tool.response else None
    output: dict[str, Any] = {}
    if rt in ("object", "array"):
        output["type"] = rt
    flags = success_flags(tool)
    if flags:
        failed = {"type": "object", "properties": {f: {"const": False} for f in flags[:1]}, "required": flags[:1]}
        for f in flags[1:]:
            failed = {"anyOf": [failed, {"type": "object", "properties": {f: {"const": False}}, "required": [f]}]}
        output["not"] = failed
        failure = {
            "anyOf": [
                copy.deepcopy(BASE_FAILURE),
                {
                    "type": "object",
                    "properties": {"status": {"const": "success"}, "output": failed},
                    "required": ["status", "output"],
                },
            ]
        }
    if output:
        success["properties"]["output"] = output
        success["required"] = ["status", "output"]
    return with_refusals(success, failure, refusal_schema(flags=not is_read_tool(tool)))


# ---------------------------------------------------------------------------------------------------------------
# The proposer
# ---------------------------------------------------------------------------------------------------------------


_NEGATING_PREFIXES = ("un", "dis", "de", "de-", "non")


def effect_complete_literal(tool: Tool, name: str, schema: dict[str, Any]) -> Any | None:
    """The value that completes the action a state-changing tool names, when the metadata says which it is (F7).

    Two cases are decidable from public metadata alone:

    - a collection that selects named components and lists the complete allowed set (an enum of items, or
      options listed in prose) gets the full set, not a partial selection;
    - a boolean documented as "True if <X> ..." where <X> is the negation of a word in the tool's own name
      (``unlock`` against a tool named for locking) gets False, so the template performs the named action rather
      than its opposite.
    """
    t = schema_type(schema)
    description = schema.get("description", "") or ""
    if t == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        options = items.get("enum") if isinstance(items.get("enum"), list) else closed_choices(description)
        if options and 1 < len(options) <= 12 and schema.get("maxItems", len(options)) >= len(options):
            if _fits(schema, list(options)):
                return list(options)
        return None
    if t == "boolean":
        m = re.search(r"\btrue\b(?: if| to| when)?([^.;,]*)", description, re.IGNORECASE)
        if not m:
            return None
        clause = [w.lower() for w in re.findall(r"[A-Za-z]+", m.group(1))]
        name_words = {w for w in tool_words(tool) if len(w) >= 3}
        for w in clause:
            for pre in _NEGATING_PREFIXES:
                if w.startswith(pre) and any(w[len(pre) :].startswith(n) for n in name_words):
                    return False
        return None
    return None


#: At most this many extra success templates per tool give a boolean its other value or a closed set its other
#: values (defect: "turn it off" never ran). The engine runs every success template in every explored state, so
#: each extra template costs one call per state it is tried in; two cover a flag both ways plus one more choice.
MAX_VALUE_VARIANTS = 2
#: At most this many one-criterion templates for a read tool with several optional criteria; they replace the
#: conjunctive ``complete`` template, so such a tool costs at most one template more than before.
MAX_CRITERION_TEMPLATES = 2
#: Words of parameters that page or order a result rather than filter it.
PRESENTATION_WORDS = {"page", "pages", "offset", "limit", "cursor", "sort", "order", "pagination", "per"}


def _closed_values(schema: dict[str, Any]) -> list[Any]:
    """Every value a parameter may take when its schema or description closes the set: both booleans, an enum,
    or the values a description lists as the complete set. Only a closed set can be covered value by value;
    anything else has no "other value" to try that is not an invention."""
    t = schema_type(schema)
    if t == "boolean":
        return [True, False]
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if t in (None, "string"):
        return closed_choices(schema.get("description", "") or "")
    return []


def value_variants(tool: Tool, full: dict[str, Argument], decisions: dict[str, ParamDecision]) -> list[tuple[str, Any]]:
    """(parameter, value) pairs for templates that give a flag or a choice its other values (F7, rule 3).

    Why: a template that only ever passes ``True`` (or an enum's first value) never performs the opposite action,
    so a setting that starts on is never switched off and a gate behind it is never seen closed and reopened
    (off-then-on is a chain of depth 2 the engine explores once both calls exist). Required parameters come
    first, booleans before other closed sets, and closed sets take turns value by value, within
    :data:`MAX_VALUE_VARIANTS`; every value is checked against the parameter's schema.
    """
    required = set(tool.required)
    order = sorted(tool.param_names, key=lambda p: (p not in required, schema_type(tool.param_schema(p)) != "boolean"))
    others: list[tuple[str, list[Any]]] = []
    for p in order:
        arg = full.get(p)
        if arg is None or arg.kind != "literal" or decisions[p].kind != "literal":
            continue
        schema = tool.param_schema(p)
        if is_read_tool(tool) and p not in required and schema_type(schema) != "boolean":
            # An optional choice of a read tool narrows what it shows among the same records; its other values
            # reveal nothing new. A flag's other value can (archived vs not), so flags keep both ways.
            continue
        current = json.dumps(arg.value, sort_keys=True, default=str)
        values = [
            v
            for v in _closed_values(schema)
            if json.dumps(v, sort_keys=True, default=str) != current and _fits(schema, v)
        ]
        if values:
            others.append((p, values))
    out: list[tuple[str, Any]] = []
    for i in range(max((len(v) for _, v in others), default=0)):
        out.extend((p, values[i]) for p, values in others if i < len(values))
    return out[:MAX_VALUE_VARIANTS]


def criterion_order(tool: Tool, optional: list[str], decisions: dict[str, ParamDecision]) -> list[str]:
    """A read tool's optional parameters in the order one-criterion templates use them.

    Why: conjoining every optional criterion with invented literals makes a search return nothing, so it never
    reveals the records that exist. A revealing template uses no optional criterion (``required_only``) or one at
    a time: first references, which are bound to values observed earlier (so the criterion matches something),
    then closed choices (any listed value is legitimate), then free literals. Paging and ordering parameters
    (:data:`PRESENTATION_WORDS`) choose which part of the result is shown, not which records match, so they are
    no criteria.
    """

    def rank(p: str) -> int:
        if decisions[p].kind == "observation":
            return 0
        return 1 if _closed_values(tool.param_schema(p)) else 2

    criteria = [p for p in optional if not set(words(p)) & PRESENTATION_WORDS]
    return sorted(criteria, key=lambda p: (rank(p), criteria.index(p)))


def _variant_name(param: str, value: Any, taken: set[str]) -> str:
    """A template name for a value variant, unique within the contract ("enabled_false", "unit_celsius")."""
    text = value if isinstance(value, str) else json.dumps(value)
    base = f"{param}_{re.sub(r'[^A-Za-z0-9]+', '_', text).strip('_').lower()[:30] or 'value'}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def propose(tool: Tool) -> Contract:
    """The initial contract for one tool from its public metadata only.

    Success templates: ``complete`` (every parameter filled, F7) -- except for a read tool with several optional
    criteria, where conjoined invented criteria would match nothing; ``required_only`` when there are optional
    parameters; for such a read tool, ``by_<p>`` with one criterion each (:func:`criterion_order`, at most
    :data:`MAX_CRITERION_TEMPLATES`); and up to :data:`MAX_VALUE_VARIANTS` templates giving a flag or a closed
    choice its other values (:func:`value_variants`). A tool thus has at most
    ``MAX_VALUE_VARIANTS + MAX_CRITERION_TEMPLATES - 1`` success templates more than before these rules. One
    expected-failure
    template swaps a required reference for a value that cannot exist.
    """
    decisions = {p: decide_parameter(tool, p, tool.param_schema(p)) for p in tool.param_names}
    required = set(tool.required)

    # Parameters offering the same closed set (a source and a target unit, two currencies) get different
    # options: the same value twice is usually a degenerate no-op call.
    option_use: dict[str, int] = {}

    def fill(p: str) -> Argument:
        s = tool.param_schema(p)
        if decisions[p].kind == "observation":
            return Argument.observation(s.get("description") or f"an existing {p.replace('_', ' ')}", field=p)
        complete = effect_complete_literal(tool, p, s)
        if complete is not None:
            return Argument.literal(complete)
        key = repr(s.get("enum") or _described_options(s.get("description", "")))
        nth = option_use.get(key, 0)
        option_use[key] = nth + 1
        return Argument.literal(literal_for(p, s, option=nth if key != "[]" else 0))

    templates: list[Template] = []
    # Effect-complete template first (F7): every required parameter, every optional one filled too, so each
    # constructible optional gets a literal somewhere (rules 2, 16); optional references stay observations (15).
    full = {p: fill(p) for p in tool.param_names}
    optional = [p for p in tool.param_names if p not in required]
    required_only = {p: (full[p] if p in required else Argument.omit()) for p in tool.param_names}
    revealing = is_read_tool(tool) and len(optional) > 1
    if not revealing:
        templates.append(Template("complete", full, "success"))
    if optional:
        # A second success template leaves every optional parameter out (rule 14).
        templates.append(Template("required_only", required_only, "success"))
    if revealing:
        for p in criterion_order(tool, optional, decisions)[:MAX_CRITERION_TEMPLATES]:
            templates.append(
                Template(
                    f"by_{p}",
                    {q: (full[q] if q in required or q == p else Argument.omit()) for q in tool.param_names},
                    "success",
                )
            )
    base = required_only if revealing else full
    taken_names = {t.name for t in templates}
    for p, value in value_variants(tool, full, decisions):
        name = _variant_name(p, value, taken_names)
        taken_names.add(name)
        templates.append(Template(name, {**base, p: Argument.literal(value)}, "success"))
    # Expected failure: only when a required reference exists; it is swapped for a value that cannot exist.
    ref = next((p for p in tool.param_names if p in required and decisions[p].kind == "observation"), None)
    if ref is not None:
        bad = sentinel_for(tool.param_schema(ref))
        if bad is not None:
            args = {p: (Argument.literal(bad) if p == ref else full[p]) for p in tool.param_names if p in required}
            templates.append(Template(f"nonexistent_{ref}", args, "failure"))

    exports = argument_exports(tool)
    taken = {e.name for e in exports}
    exports.extend(response_exports(tool, taken))
    success, failure = outcome_schemas(tool)
    notes = [f"{p}: {d.kind} ({d.reason})" for p, d in decisions.items()]
    return Contract(
        tool=tool.name,
        templates=templates,
        exports=exports,
        success=success,
        failure=failure,
        proposer="offline",
        notes=notes,
    )


# ---------------------------------------------------------------------------------------------------------------
# Revision from same-tool feedback
# ---------------------------------------------------------------------------------------------------------------

# Diagnostic fields explain a failure; they carry no reusable value (rule 24), so revision never exports them.
DIAGNOSTIC_FIELDS = {"error", "errors", "traceback", "exception"}

#: A word of at least two letters numbered by a short trailing suffix (``address1``), see :func:`_is_field_name`.
_NUMBERED_FIELD = re.compile(r"[A-Za-z_]*[A-Za-z]{2}\d{1,3}")


def _is_field_name(key: str) -> bool:
    """Whether a mapping key looks like a schema field rather than data used as a key (ids, names, dates).

    Data keys must never be written into paths (rule 32), so anything with spaces, no lower-case letter, or digits
    other than a short suffix of a word is treated as data and replaced by a wildcard. A short numeric suffix
    (``address1``, ``line2``, ``sha256``) numbers a field the way developers do; ids and dates used as keys
    (``C100001``, ``2024-01-01``, ``user_42``) carry their digits as the value itself.
    """
    if not (_IDENT.match(key) and any(c.islower() for c in key)):
        return False
    return _NUMBERED_FIELD.fullmatch(key) is not None or not any(c.isdigit() for c in key)


def observed_leaves(
    value: Any, path: str = "$", label: list[str] | None = None, depth: int = 0
) -> dict[str, tuple[list[str], str]]:
    """Generic paths of the scalar leaves of an observed value: {path: (field labels, json type)}.

    Lists and data-keyed mappings become ``[*]`` so the path describes structure, never a concrete value.
    """
    label = label or []
    out: dict[str, tuple[list[str], str]] = {}
    if depth > 8:
        return out
    if isinstance(value, dict) and len(value) == 1 and "$ref" in value:
        return out  # a back reference to another part of the same structure, not a value
    if isinstance(value, dict):
        fieldlike = all(_is_field_name(str(k)) for k in value)
        for k, v in value.items():
            if fieldlike:
                out.update(observed_leaves(v, child_path(path, str(k)), label + [str(k)], depth + 1))
            else:
                out.update(observed_leaves(v, f"{path}[*]", label, depth + 1))
    elif isinstance(value, list):
        for v in value:
            out.update(observed_leaves(v, f"{path}[*]", label, depth + 1))
    elif is_scalar(value) and not (label and label[-1] in DIAGNOSTIC_FIELDS):
        out.setdefault(path, (label, json_type(value)))
    return out


def uncovered_leaves(
    contract: Contract, args: dict[str, Any], record: dict[str, Any]
) -> list[tuple[str, str, list[str], str]]:
    """Observed scalar leaves of a record's output and state changes that no export reaches.

    Returns (source, generic path, field labels, JSON type). A leaf counts as reached when an export's path
    equals its generic path or when evaluating the exports yields its concrete location.
    """
    rec = record_dict(record)
    reached = {(x.source, canonical_path(re.sub(r"\[\d+\]", "[*]", x.path))) for x in extract(contract, args, rec)}
    reached |= {(x.source, canonical_path(x.path)) for x in extract(contract, args, rec)}
    declared = {(e.source, canonical_path(e.path)) for e in contract.exports}
    out = []
    for source, value in (("response", rec.get("output")), ("state_changes", rec.get("state_changes"))):
        if value is None or value == {} or value == []:
            continue
        for path, (label, jt) in sorted(observed_leaves(value).items()):
            key = (source, canonical_path(path))
            if key in declared or key in reached:
                continue
            if source == "response" and path == "$" and ("response", "$") in declared:
                continue
            out.append((source, path, label, jt))
    return out


def _text_key(source: str, path: str, kind: str, inner: str) -> tuple[str, str, str, str]:
    return (source, canonical_path(path), kind, canonical_path(inner))


def uncovered_text(contract: Contract, record: dict[str, Any]) -> list[tuple[str, str, FromText, list[str], str]]:
    """Values inside a successful output's text that no export reaches: (source, path of the text, extractor,
    field labels, JSON type), one per extractor and text location.

    Why: most MCP tools answer with text ("Changes committed successfully with hash ..."), and an identifier in
    it reaches the next tool only through an export that reads inside the text. Which extractors apply is read
    from the text's form alone (:func:`~.text_values.text_findings`): an embedded JSON document or Python
    literal, several lines, identifiers of a recognisable form. Only strings that are text (inner whitespace, or
    a printed structure) are read, so a single token -- an id, a SMILES string -- stays the value it is.
    """
    output = record_dict(record).get("output")
    if output is None:
        return []
    have = {
        _text_key(e.source, e.path, e.from_text.kind, e.from_text.path)
        for e in contract.exports
        if e.from_text is not None
    }
    out: list[tuple[str, str, FromText, list[str], str]] = []
    seen: set[tuple[str, str, str, str]] = set()
    texts = [("$", [], output)] if isinstance(output, str) else []
    if not texts:
        for path, (label, jt) in sorted(observed_leaves(output).items()):
            if jt == "string":
                try:
                    values = jsonpath.findall(path, output)
                except jsonpath.JSONPathError:
                    continue
                texts.extend((path, label, v) for v in values[:3])
    for path, label, text in texts:
        if not is_text(text):
            continue
        for kind, inner, inner_label, jt in text_findings(text):
            key = _text_key("response", path, kind, inner)
            if key in have or key in seen:
                continue
            seen.add(key)
            out.append(("response", path, FromText(kind, inner), label + (inner_label or [kind]), jt))
    return out


def text_exports(contract: Contract, tool: Tool, records: list[dict[str, Any]], taken: set[str]) -> list[Export]:
    """Exports reading the values inside the text of successful outputs (:func:`uncovered_text`); names are the
    field labels found inside the text (``name`` in printed JSON), else the extractor's kind (``hex_id``),
    prefixed with ``text`` only when needed to stay unique."""
    out: list[Export] = []
    seen: set[tuple[str, str, str, str]] = set()
    for rec in records:
        for source, path, text, label, jt in uncovered_text(contract, rec):
            key = _text_key(source, path, text.kind, text.path)
            if key in seen:
                continue
            seen.add(key)
            name = _export_name(label, taken, text.kind, prefix="text")
            taken.add(name)
            leaf = {"type": jt}
            propagate = should_propagate(label[-1], leaf) if text.kind in STRUCTURED_KINDS else True
            out.append(Export(name, source, path, leaf, propagate, text))
    return out


def _shape(value: Any) -> dict[str, Any]:
    """The structure of an observed payload as a schema: its JSON type, an object's field names, the shape shared
    by a list's items. Never a value (rule 32), so a learned refusal shape cannot match on data."""
    jt = json_type(value)
    out: dict[str, Any] = {"type": jt}
    if isinstance(value, dict) and value and all(_is_field_name(str(k)) for k in value):
        out["required"] = sorted(str(k) for k in value)
    if isinstance(value, list) and value:
        shapes = [_shape(v) for v in value]
        out["minItems"] = 1
        if all(sh == shapes[0] for sh in shapes):
            out["items"] = shapes[0]
    return out


def _describe_shape(shape: dict[str, Any]) -> str:
    if shape.get("type") == "object" and shape.get("required"):
        return f"object with {', '.join(shape['required'])}"
    if shape.get("type") == "array" and isinstance(shape.get("items"), dict):
        return f"array of {_describe_shape(shape['items'])}"
    return str(shape.get("type"))


def _repair_success_shape(
    contract: Contract, tool: Tool, rec: dict[str, Any], contrast: list[dict[str, Any]]
) -> list[str]:
    """Repair S+/S- for a success record whose output S+ rejects; edits ``contract`` in place, returns notes.

    Two readings of the same symptom, told apart by contrast with the tool's other calls:

    - this call changed nothing, and another call of this tool succeeded with an output this one's shape does
      not describe: the odd shape is what the tool answers when it refuses (a sign-in gate's message where the
      records should be), so it is learned as a refusal of this tool -- on calls that change nothing, as a
      refusal never does -- and never folded into the success schema;
    - nothing contrasts with it: the declared response type is wrong (an annotation that lies), and observed
      behaviour wins -- S+ accepts the observed type, and the mismatch is recorded in the notes and flags.
    """
    seen = json_type(rec.get("output"))
    shape = _shape(rec.get("output"))
    others = [r for r in contrast if r is not rec]
    unchanged = rec.get("state_changes") in (None, {}, [])
    if unchanged and others and not any(schema_accepts(shape, r.get("output")) for r in others):
        learned = {
            "type": "object",
            "properties": {"status": {"const": "success"}, "output": shape, "state_changes": {"maxProperties": 0}},
            "required": ["status", "output"],
        }
        refusal = refusal_of(contract.success)
        refusal = {"anyOf": [refusal, learned]} if refusal is not None else learned
        contract.success, contract.failure = with_refusals(contract.success, contract.failure, refusal)
        return [
            (
                f"output shaped as {_describe_shape(shape)} appears only where other calls of this tool succeed "
                "with another shape: learned as a refusal"
            )
        ]
    out_schema = contract.success.get("properties", {}).get("output")
    if not (isinstance(out_schema, dict) and "type" in out_schema):
        return []
    declared = out_schema["type"] if isinstance(out_schema["type"], list) else [out_schema["type"]]
    out_schema["type"] = sorted(set(declared) | {seen})
    if "declared_type_mismatch" not in contract.flags:
        contract.flags.append("declared_type_mismatch")
    return [
        (
            f"success output type widened to include observed {seen} (declared response type "
            f"{'/'.join(declared)} does not match what the tool returns)"
        )
    ]


def _clip_message(message: str, limit: int = 80) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


def literal_repairs(contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[tuple[str, str, Any, str]]:
    """Literals to replace after the tool rejected a success template: (template, parameter, new value, message).

    The tool's own validation message names what it wanted (a required prefix, the allowed values, a format, a
    bound); :func:`~libra.schema.repair_literal` turns that into a value and the parameter is the one the message
    names (else the template's only literal). Only literal arguments of success templates are repaired, once per
    template per revision, and only with a value that fits the parameter's schema -- the feedback loop of the
    paper (rules 27-29) applied to a rejection's text rather than to an output's structure.
    """
    templates = {t.name: t for t in contract.templates}
    out: list[tuple[str, str, Any, str]] = []
    done: set[str] = set()
    for fb in feedback:
        t = templates.get(str(fb.get("template", "")))
        if t is None or t.name in done or t.expected != "success":
            continue
        rec = record_dict(fb["record"])
        if classify(contract, rec) == "success":
            continue
        message = rejection_message(rec)
        if not message:
            continue
        args = fb.get("arguments", {}) or {}
        literals = {
            p: a.value for p, a in t.arguments.items() if a.kind == "literal" and args.get(p, a.value) == a.value
        }
        param = message_parameter(message, literals, others=[p for p in t.arguments if p not in literals])
        if param is None:
            continue
        value = repair_literal(param, tool.param_schema(param), literals[param], message)
        if value is not None:
            out.append((t.name, param, value, message))
            done.add(t.name)
    return out


#: At most this many templates one revision adds when it splits templates over inputs that exclude one another.
MAX_EXCLUSIVE_TEMPLATES = 6


def _argument_for(contract: Contract, tool: Tool, param: str) -> Argument:
    """The argument the contract already gives ``param`` somewhere (a literal or an observation), else the one the
    proposer would: an input one template left out is filled as another template fills it."""
    for t in contract.templates:
        a = t.arguments.get(param)
        if a is not None and a.kind != "omit" and t.expected == "success":
            return a
    schema = tool.param_schema(param)
    if decide_parameter(tool, param, schema).kind == "observation":
        return Argument.observation(schema.get("description") or f"an existing {param.replace('_', ' ')}", field=param)
    return Argument.literal(literal_for(param, schema))


def exclusive_repairs(
    contract: Contract, tool: Tool, feedback: list[dict[str, Any]]
) -> list[tuple[str, Exclusive, list[dict[str, Argument]], str]]:
    """Success templates the tool refused for giving several of a set of inputs that exclude one another (or none
    of them): (template, the set, the argument sets to use instead, message).

    Why: the proposer fills every optional input in one template and none in another, and a tool that takes
    exactly one of a track, an album or a playlist id refuses both ("Exactly one of track_id, album_id or
    playlist_id must be given, found 3"). The message names the set (:func:`~.exclusive.exclusive_inputs`);
    the template is replaced by one per input of the set it gave, each keeping exactly that one
    (:func:`~.exclusive.exclusive_choices`), so every input of the set is exercised and can receive offered values.
    A template that gave none, where none is not allowed, gets one per input, filled as other templates fill it.
    """
    templates = {t.name: t for t in contract.templates}
    out: list[tuple[str, Exclusive, list[dict[str, Argument]], str]] = []
    for fb in feedback:
        t = templates.get(str(fb.get("template", "")))
        if t is None or t.expected != "success" or t.name in {name for name, *_ in out}:
            continue
        rec = record_dict(fb["record"])
        if classify(contract, rec) == "success":
            continue
        message = rejection_message(rec)
        group = exclusive_inputs(message or "", tool.param_names)
        if group is None:
            continue
        given = {p: a for p, a in t.arguments.items() if a.kind != "omit"}
        offered = {p: _argument_for(contract, tool, p) for p in group.inputs}
        choices = exclusive_choices(given, group, offered)
        if choices:
            omitted = {p: Argument.omit() for p in group.inputs}
            out.append((t.name, group, [{**t.arguments, **omitted, **c} for c in choices], message or ""))
    return out


def _split_exclusive(new: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Apply :func:`exclusive_repairs`: each refused template gives way to its argument sets, named
    ``only_<input>`` (or ``<template>_only_<input>`` when taken); a set another template already has is not added
    twice, and at most :data:`MAX_EXCLUSIVE_TEMPLATES` are added. Returns what changed, for the notes."""
    changed: list[str] = []
    added = 0
    for name, group, choices, message in exclusive_repairs(new, tool, feedback):
        at = next(i for i, t in enumerate(new.templates) if t.name == name)
        seen = [
            {p: a.to_dict() for p, a in t.arguments.items() if a.kind != "omit"}
            for t in new.templates
            if t.name != name
        ]
        replacement: list[Template] = []
        for args in choices:
            key = {p: a.to_dict() for p, a in args.items() if a.kind != "omit"}
            if key in seen or added >= MAX_EXCLUSIVE_TEMPLATES:
                continue
            kept = next(p for p in group.inputs if args[p].kind != "omit")
            taken = {t.name for t in new.templates} | {t.name for t in replacement}
            tname = f"only_{kept}" if f"only_{kept}" not in taken else f"{name}_only_{kept}"
            replacement.append(Template(tname, args, "success"))
            seen.append(key)
            added += 1
        new.templates[at : at + 1] = replacement
        kept_names = ", ".join(t.name for t in replacement) or "none new"
        changed.append(
            f"template {name}: split over inputs that exclude one another ({', '.join(group.inputs)}) into "
            f"{kept_names} ({_clip_message(message)})"
        )
    return changed


#: Words of a rejection saying a named thing is not there ("not found", "did not match any files", "did not
#: resolve to an object", "no such file", "does not exist", "unknown branch").
_MISSING = re.compile(
    (
        r"\b(?:not found|no such|does not exist|doesn't exist|did not match|didn't match|did not resolve|could "
        r"not resolve|cannot resolve|unknown|no matching|not exist|(?:could|can)(?:n'?t| ?not) find)\b"
    ),
    re.IGNORECASE,
)


def string_leaves(
    value: Any, pointer: tuple[str | int, ...] = (), depth: int = 0
) -> list[tuple[tuple[str | int, ...], str]]:
    """(pointer, string) for every string leaf inside a structured value: keys and list indices from the top."""
    if depth > 6:
        return []
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in string_leaves(v, (*pointer, str(k)), depth + 1)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in string_leaves(v, (*pointer, i), depth + 1)]
    return [(pointer, value)] if isinstance(value, str) else []


def _strings(value: Any) -> list[str]:
    """The strings a passed argument holds: itself, or its string leaves when structured."""
    return [value] if isinstance(value, str) else [v for _p, v in string_leaves(value)]


def missing_references(
    contract: Contract, feedback: list[dict[str, Any]]
) -> list[tuple[str, str, list[str | int] | None]]:
    """Literal inputs a success template passed that the tool refused as naming nothing: (parameter, message,
    pointer), the pointer locating the refused leaf inside a structured literal (None: the whole value).

    Why: the proposer decides from metadata alone whether a name is chosen by the call or refers to something
    that exists (rules 10, 11), and verbs mislead it ("add" creates in one API and stages existing files in
    another). When the tool's own refusal repeats the invented value and says it was not found, did not match or
    does not exist, the input names an existing record: it becomes an observation, so values other calls
    produce are offered to it like to any reference. Only a string value (or a list of strings) that the message
    quotes verbatim counts, so a refusal about another input never turns this one. In a structured literal (a
    list of objects) only the refused leaf names a record -- ``entityName`` among the contents to add to that
    entity -- so only that leaf is marked (:data:`~.model.NESTED_REFERENCE`), once. A message that quotes the
    values of several inputs ("rename 'a' -> 'b': no such file") does not say which of them names nothing, so it
    turns no whole input into a reference.
    """
    out: list[tuple[str, str, list[str | int] | None]] = []
    templates = {t.name: t for t in contract.templates}
    nested = contract.nested_references()
    for fb in feedback:
        t = templates.get(str(fb.get("template", "")))
        if t is None or t.expected != "success":
            continue
        rec = record_dict(fb["record"])
        if classify(contract, rec) == "success":
            continue
        message = rejection_message(rec) or ""
        if not _MISSING.search(message):
            continue
        passed = fb.get("arguments", {}) or {}
        given = {**{p: a.value for p, a in t.arguments.items() if a.kind == "literal"}, **passed}
        quoted = {p for p, v in given.items() if any(len(x.strip()) >= 3 and x in message for x in _strings(v))}
        for p, a in t.arguments.items():
            if a.kind != "literal" or p in nested or p in {q for q, _m, _x in out} or passed.get(p, a.value) != a.value:
                continue
            values = a.value if isinstance(a.value, list) else [a.value]
            if values and all(isinstance(v, str) and len(v.strip()) >= 3 for v in values):
                if any(v in message for v in values) and quoted == {p}:
                    out.append((p, message, None))
            elif isinstance(a.value, (dict, list)):
                hits = [ptr for ptr, v in string_leaves(a.value) if len(v.strip()) >= 3 and v in message]
                if len(hits) == 1:
                    out.append((p, message, list(hits[0])))
    return out


def revise(contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None:
    """A revised contract from same-tool execution feedback, or None when nothing needs to change.

    ``feedback`` items carry ``arguments`` (what was passed), ``record`` (the normalized invocation record) and
    optionally ``expected``. Only structure is used -- field names, paths and JSON types (rules 27-33): no runtime
    scalar is copied into a literal, name, path or schema. Outcome schemas are repaired when a record matched
    neither (or both) of S+ and S- (:func:`_repair_success_shape`); a literal the tool rejected is replaced from
    its rejection message (:func:`literal_repairs`); exports are added for observed scalar leaves the contract
    does not reach.
    """
    if contract.revision >= MAX_REVISIONS or not feedback:
        return None
    new = contract.copy()
    changed: list[str] = []
    taken = {e.name for e in new.exports}
    known_paths = {(e.source, canonical_path(e.path)) for e in new.exports}

    # Successes under the current schemas, before any repair: the contrast a payload of another shape is judged by.
    contrast = [record_dict(fb["record"]) for fb in feedback if classify(new, record_dict(fb["record"])) == "success"]
    for fb in feedback:
        rec = record_dict(fb["record"])
        if classify(new, rec) != "unmatched":
            continue
        if rec.get("status") == "success":
            changed.extend(_repair_success_shape(new, tool, rec, contrast))
        if classify(new, rec) == "unmatched":
            # Still ambiguous or unexplained: fall back to the plain status split (refusals kept), which is
            # disjoint and total.
            refusal = refusal_of(new.success) or refusal_schema(flags=not is_read_tool(tool))
            new.success, new.failure = with_refusals(BASE_SUCCESS, BASE_FAILURE, refusal)
            changed.append("outcome schemas reset to the status split")

    for name, param, value, message in literal_repairs(new, tool, feedback):
        template = next(t for t in new.templates if t.name == name)
        template.arguments[param] = Argument.literal(value)
        if CHECKED_LITERAL + param not in new.flags:
            new.flags.append(CHECKED_LITERAL + param)
        changed.append(
            f"template {name}: literal for {param} repaired from the tool's rejection ({_clip_message(message)})"
        )

    changed.extend(_split_exclusive(new, tool, feedback))

    for param, message, pointer in missing_references(new, feedback):
        if pointer is not None:
            new.flags.append(f"{NESTED_REFERENCE}{param}:{json.dumps(pointer)}")
            changed.append(
                f"{param}: {'/'.join(map(str, pointer))} names an existing record (the tool refused the "
                f"invented value: {_clip_message(message)})"
            )
            continue
        for template in new.templates:
            arg = template.arguments.get(param)
            if arg is not None and arg.kind == "literal" and template.expected == "success":
                schema = tool.param_schema(param)
                template.arguments[param] = Argument.observation(
                    schema.get("description") or f"an existing {param.replace('_', ' ')}", field=param
                )
        changed.append(
            f"{param}: observation (the tool refused the invented value as naming nothing: {_clip_message(message)})"
        )

    successes = [(fb.get("arguments", {}) or {}, record_dict(fb["record"])) for fb in feedback]
    successes = [(a, r) for a, r in successes if classify(new, r) == "success"]
    # Declared response exports that reached nothing in any successful output point at the wrong place; an
    # observed leaf with the same field label relocates them instead of adding a near-duplicate.
    live = {x.name for a, r in successes for x in extract(new, a, r) if x.source == "response"}
    dead = (
        {e.name: e for e in new.exports if e.source == "response" and e.name not in live and e.path != "$"}
        if successes
        else {}
    )
    for args, rec in successes:
        for source, path, label, jt in uncovered_leaves(new, args, rec):
            if (source, canonical_path(path)) in known_paths:
                continue
            base = label or [scalar_response_name(tool) if source == "response" else "state_value"]
            stale = dead.pop(base[-1], None) if source == "response" else None
            if stale is not None:
                stale.path, stale.schema = path, {**stale.schema, "type": jt}
                known_paths.add((source, canonical_path(path)))
                changed.append(f"export {stale.name} moved to {source}:{path}")
                continue
            if source == "response":
                name = _export_name(base, taken, "value", prefix="response")
            else:  # state paths share generic tails (after, name): keep the whole structural label
                name = _export_name(["_".join(["state"] + base)], taken, "state_value")
            taken.add(name)
            known_paths.add((source, canonical_path(path)))
            leaf = {"type": jt}
            new.exports.append(Export(name, source, path, leaf, should_propagate(base[-1], leaf)))
            changed.append(f"export {name} added at {source}:{path}")
    for export in text_exports(new, tool, [r for _a, r in successes], taken):
        new.exports.append(export)
        changed.append(
            f"export {export.name} added: {export.from_text.kind} values inside the text at "
            f"{export.source}:{export.path}"
        )
    if not changed:
        return None
    new.revision = contract.revision + 1
    new.notes = list(contract.notes) + [f"revision {new.revision}: " + "; ".join(dict.fromkeys(changed))]
    if "revised" not in new.flags:
        new.flags.append("revised")
    return new


class OfflineProposer:
    """The default heuristic proposer; plugs into the same :class:`~libra.contracts.check.Proposer` slot as an LLM."""

    name = "offline"

    def propose(self, tool: Tool) -> Contract:
        return propose(tool)

    def revise(self, contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None:
        return revise(contract, tool, feedback)
