"""Outcome classification and export extraction over normalized invocation records.

Both are pure functions of (contract, arguments, record), so a checker can re-classify stored records after a
revision instead of re-running the tool.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import jsonpath
import jsonschema

from libra.contracts.leaves import is_scalar
from libra.contracts.model import Contract
from libra.contracts.text_values import STRUCTURED_KINDS, is_text, text_values
from libra.runtime.base import InvocationRecord

Outcome = Literal["success", "failure", "unmatched"]


@lru_cache(maxsize=4096)
def _validator(schema_json: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_json))


_KEYS: dict[int, tuple[Any, str]] = {}


def schema_key(schema: Any) -> str:
    """A schema's canonical JSON text, remembered per schema object.

    Outcome schemas are validated against every record a build produces; serialising them each time cost more
    than validating. A remembered text is reused only while the object still equals the snapshot it was made
    from, so a schema edited in place (as revision does) gets a fresh key.
    """
    hit = _KEYS.get(id(schema))
    if hit is not None and hit[0] == schema:
        return hit[1]
    text = json.dumps(schema, sort_keys=True)
    if len(_KEYS) > 4096:
        _KEYS.clear()
    _KEYS[id(schema)] = (copy.deepcopy(schema), text)
    return text


def schema_accepts(schema: dict[str, Any], instance: Any) -> bool:
    """Validation with compiled validators cached by schema text (outcome schemas repeat across many records)."""
    return _validator(schema_key(schema)).is_valid(instance)


def record_dict(record: InvocationRecord | dict[str, Any]) -> dict[str, Any]:
    return record.to_dict() if isinstance(record, InvocationRecord) else record


def classify(contract: Contract, record: InvocationRecord | dict[str, Any]) -> Outcome:
    """Which declared outcome a record shows.

    A record that fits both S+ and S- is reported as unmatched: the two schemas must be disjoint (rule 38), so an
    overlap is a contract defect that revision should repair, not a success to count.
    """
    return classify_keyed(schema_key(contract.success), schema_key(contract.failure), record)


def classify_keyed(success: str, failure: str, record: InvocationRecord | dict[str, Any]) -> Outcome:
    """:func:`classify` with the contract's S+ and S- given by their :func:`schema_key` texts.

    Why: a caller that classifies many records against contracts it knows to be fixed (the exploration, whose
    contracts were checked and revised before it started) takes the two keys once per contract, instead of
    having :func:`schema_key` compare each schema with its snapshot on every record; the verdict is the same.
    """
    rec = record_dict(record)
    split = _split_refusals(success, failure)
    if split is None:
        ok, bad = _validator(success).is_valid(rec), _validator(failure).is_valid(rec)
    else:
        # Same verdict as validating the two schemas, with the refusal (the costly part) decided once.
        refused = _refused(split[2], rec)
        ok = not refused and _validator(split[0]).is_valid(rec)
        bad = refused or _validator(split[1]).is_valid(rec)
    if ok and not bad:
        return "success"
    if bad and not ok:
        return "failure"
    return "unmatched"


@lru_cache(maxsize=8192)
def canonical_path(path: str) -> str:
    """One spelling per JSONPath (``$.a[*].b`` and ``$['a'][*]['b']`` compare equal)."""
    try:
        return str(jsonpath.compile(path))
    except jsonpath.JSONPathError:
        return path


@dataclass(frozen=True)
class Extracted:
    """One concrete exported value; ``path`` is the concrete (wildcard-free) location it came from."""

    name: str
    source: str
    path: str
    value: Any
    # The other short strings of the list element the value sits in (e.g. the account a password is for):
    # what tells one element of a list of look-alike records from the next.
    labels: tuple[str, ...] = ()

    def __iter__(self):  # allows ``name, source, path, value = item``
        return iter((self.name, self.source, self.path, self.value))


def _labels(match: Any) -> tuple[str, ...]:
    parent = getattr(match, "parent", None)
    record = getattr(parent, "obj", None)
    if not isinstance(record, dict) or not re.search(r"\[\d+\]$", str(getattr(parent, "path", ""))):
        return ()
    return tuple(
        sorted(
            {
                v.strip().lower()
                for k, v in record.items()
                if isinstance(v, str) and v is not match.obj and 0 < len(v) <= 40
            }
        )
    )


_NAMED_LIST = re.compile(r"^\$\.[A-Za-z_][A-Za-z0-9_]*(\[.*)$")


def extract(
    contract: Contract, template_args: dict[str, Any], record: InvocationRecord | dict[str, Any]
) -> list[Extracted]:
    """Evaluate every export path against the call's arguments, response and state changes.

    Only scalar leaves are returned: containers are not reusable values on their own (rule 30), and a ``[*]``
    path yields one item per element with its concrete path so later bindings can say exactly where a value
    came from.
    """
    rec = record_dict(record)
    data = {"arguments": template_args, "response": rec.get("output"), "state_changes": rec.get("state_changes")}
    out: list[Extracted] = []
    for exp in contract.exports:
        root = data.get(exp.source)
        if root is None:
            continue
        if exp.from_text is not None:
            out.extend(_from_text(exp, root))
            continue
        if isinstance(root, str):
            # python-jsonpath would parse a string root as JSON text; a string output is a single scalar leaf.
            if exp.path.strip() == "$":
                out.append(Extracted(exp.name, exp.source, "$", root))
            continue
        path = exp.path
        if isinstance(root, list):
            # Docs often name a return value ("user_tweets (List[Dict]): ...") that the tool returns bare: a path
            # into that name then reads the list itself.
            named = _NAMED_LIST.match(path)
            if named:
                path = "$" + named.group(1)
        try:
            matches = list(jsonpath.finditer(path, root))
        except jsonpath.JSONPathError:
            continue
        for m in matches:
            if is_scalar(m.obj):
                out.append(Extracted(exp.name, exp.source, m.path, m.obj, _labels(m)))
    return out


def _from_text(exp: Any, root: Any) -> list[Extracted]:
    """The values an export with ``from_text`` reads from every string its path selects (see
    :mod:`.text_values`); a value's path is the text's path plus where in the text it sat."""
    if isinstance(root, str):
        texts = [("$", root)] if exp.path.strip() == "$" else []
    else:
        try:
            texts = [(m.path, m.obj) for m in jsonpath.finditer(exp.path, root) if isinstance(m.obj, str)]
        except jsonpath.JSONPathError:
            return []
    out: list[Extracted] = []
    for where, text in texts:
        if exp.from_text.kind not in STRUCTURED_KINDS and not is_text(text):
            continue  # one token is a value already (the text's own export), not text holding values
        for inner, value, match in text_values(exp.from_text.kind, text, exp.from_text.path):
            out.append(
                Extracted(exp.name, exp.source, where + inner, value, _labels(match) if match is not None else ())
            )
    return out


# ---------------------------------------------------------------------------------------------------------------
# Refusals reported as data
# ---------------------------------------------------------------------------------------------------------------

#: Text that opens with an error word: "Error: ...", "Database error: no such table", "ValueError: ...", "Failed to
#: connect". Many tools return a refusal as a plain string instead of raising. The error word must close the
#: opening clause (a colon, "!", the end of the text, or "occurred/while/during" next), so a file named
#: ``error.log`` or a title such as "Errors in survey data" stays data.
FAILURE_TEXT = (
    r"(?i)^\W*(?:[a-z]+[ _-]){0,2}?[a-z]*(?:error|exception|failure)\s*(?:[:!]|$|\s(?:occurred|while|during)\b)"
    r"|^\W*(?:failed|unable) to\b"
)
#: A boolean field named as the call's own verdict (``success``, ``login_status``, ``is_valid``, ``verifiedOk``).
FLAG_NAME = (
    r"(?:^|_)(?:status|success|successful|succeeded|ok|valid|verified|authenticated|authorized)$"
    r"|[a-z0-9](?:Status|Success|Successful|Succeeded|Ok|Valid|Verified|Authenticated|Authorized)$"
)

_NON_EMPTY = {"not": {"enum": [None, "", False, 0, [], {}]}}
_FAILURE_TEXT: dict[str, Any] = {"type": "string", "pattern": FAILURE_TEXT}
#: One refusal: error text, an object carrying a non-empty ``error``/``errors`` value, or an object whose only
#: field is error text (``{"message": "Error: ..."}``).
REFUSAL_ITEM: dict[str, Any] = {
    "anyOf": [
        _FAILURE_TEXT,
        {"type": "object", "required": ["error"], "properties": {"error": _NON_EMPTY}},
        {"type": "object", "required": ["errors"], "properties": {"errors": _NON_EMPTY}},
        {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": _FAILURE_TEXT},
    ]
}
#: A payload that is a refusal: one refusal item, or a non-empty list holding nothing but refusal items (a read
#: that answers ``["Error: not authenticated"]`` instead of the records).
REFUSAL_PAYLOAD: dict[str, Any] = {"anyOf": [REFUSAL_ITEM, {"type": "array", "minItems": 1, "items": REFUSAL_ITEM}]}
#: An object whose verdict flag is false (``{"verification_status": false, ...}``).
FALSE_FLAG: dict[str, Any] = {"type": "object", "not": {"patternProperties": {FLAG_NAME: {"not": {"const": False}}}}}


#: Text saying an action did nothing: "No changes were staged", "Nothing to commit", "No change made".
NO_EFFECT_TEXT = r"(?i)^\W*(?:no changes?\b|nothing (?:to|was|were|has|have|changed)\b)"


def refusal_schema(flags: bool) -> dict[str, Any]:
    """Records whose status says success but whose payload says the call was refused.

    Tools often answer a refusal with data rather than an exception; counting those records as successes hides
    every gate (a read that needs a sign-in looks like it works from the fresh state). With ``flags`` -- for
    tools that act or verify, never for reads, where a boolean is the answer -- an object whose verdict flag is
    false is a refusal too, provided the call changed nothing: turning a setting off may well report
    ``{"wifi_status": false}``, and that call changed the state. Likewise, for such tools, a reply that opens by
    saying nothing was done (:data:`NO_EFFECT_TEXT`: "No changes were staged") on a call that changed nothing:
    servers answer an action they could not perform that way, with no error flag, and counting it as a success
    would make any value that reaches the action look like one it accepts.
    """
    ways: list[dict[str, Any]] = [{"properties": {"output": REFUSAL_PAYLOAD}}]
    if flags:
        ways.append({"properties": {"output": FALSE_FLAG, "state_changes": {"maxProperties": 0}}})
        ways.append(
            {
                "properties": {
                    "output": {"type": "string", "pattern": NO_EFFECT_TEXT},
                    "state_changes": {"maxProperties": 0},
                }
            }
        )
    return {
        "type": "object",
        "properties": {"status": {"const": "success"}},
        "required": ["status", "output"],
        "anyOf": ways,
    }


def with_refusals(
    success: dict[str, Any], failure: dict[str, Any], refusal: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """S+ without the refusals and S- with them: the pair stays disjoint, and a refusal counts as a failure.

    The refusal schema sits once under ``$defs`` of each schema, referenced by name, so both stay readable.
    Schemas that already carry one get the new refusal in its place (the call is idempotent).
    """
    ref = {"$ref": "#/$defs/refusal"}
    if refusal_of(success) is not None:
        s = copy.deepcopy(success)
        s["$defs"]["refusal"] = copy.deepcopy(refusal)
    else:
        defs = {**copy.deepcopy(success.get("$defs", {})), "refusal": copy.deepcopy(refusal)}
        body = {k: copy.deepcopy(v) for k, v in success.items() if k != "$defs"}
        s = {**body, "not": ref, "$defs": defs} if "not" not in body else {"allOf": [body, {"not": ref}], "$defs": defs}
    if refusal_of(failure) is not None:
        f = copy.deepcopy(failure)
        f["$defs"]["refusal"] = copy.deepcopy(refusal)
    else:
        f_defs = {**copy.deepcopy(failure.get("$defs", {})), "refusal": copy.deepcopy(refusal)}
        f = {"anyOf": [{k: copy.deepcopy(v) for k, v in failure.items() if k != "$defs"}, ref], "$defs": f_defs}
    return s, f


def refusal_of(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The refusal schema an outcome schema carries (see :func:`with_refusals`), if any."""
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    return defs.get("refusal") if isinstance(defs, dict) else None


def _refusal_text(value: Any, depth: int = 0) -> str | None:
    if depth > 3:
        return None
    if isinstance(value, str):
        return value if schema_accepts(_FAILURE_TEXT, value) else None
    if isinstance(value, dict):
        for key in ("error", "errors"):
            if value.get(key) not in (None, "", False, 0, [], {}):
                inner = value[key]
                return inner if isinstance(inner, str) else _refusal_text(inner, depth + 1) or json.dumps(inner)
        if len(value) == 1:
            return _refusal_text(next(iter(value.values())), depth + 1)
        if any(v is False and re.search(FLAG_NAME, str(k)) for k, v in value.items()):
            # a false verdict flag: the message is the text beside it ("message", "verification_failure")
            return next((v for v in value.values() if isinstance(v, str) and " " in v.strip()), None)
        return None
    if isinstance(value, list) and value:
        return _refusal_text(value[0], depth + 1)
    return None


def rejection_message(record: InvocationRecord | dict[str, Any]) -> str | None:
    """The text a tool gave when it refused a call: the record's error, else refusal text in its payload.

    Validation messages ("phone must start with '+'") are what the revision loop repairs literals from.
    """
    rec = record_dict(record)
    if rec.get("status") in ("rejected", "error") and rec.get("error"):
        return str(rec["error"])
    return _refusal_text(rec.get("output"))


def without_refusals(success: dict[str, Any], failure: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The inverse of :func:`with_refusals`: the schemas as their author wrote them (for showing them back)."""
    if refusal_of(success) is None:
        return copy.deepcopy(success), copy.deepcopy(failure)

    def defs_left(schema: dict[str, Any]) -> dict[str, Any]:
        rest = {k: v for k, v in schema.get("$defs", {}).items() if k != "refusal"}
        return {"$defs": copy.deepcopy(rest)} if rest else {}

    if "allOf" in success and success["allOf"][-1:] == [{"not": {"$ref": "#/$defs/refusal"}}]:
        s = {**copy.deepcopy(success["allOf"][0]), **defs_left(success)}
    else:
        s = {k: copy.deepcopy(v) for k, v in success.items() if k not in ("not", "$defs")} | defs_left(success)
    f = failure
    if (
        refusal_of(failure) is not None
        and isinstance(failure.get("anyOf"), list)
        and failure["anyOf"][-1:] == [{"$ref": "#/$defs/refusal"}]
    ):
        f = {**copy.deepcopy(failure["anyOf"][0]), **defs_left(failure)}
    return s, copy.deepcopy(f)


# ---------------------------------------------------------------------------------------------------------------
# Deciding refusals fast
# ---------------------------------------------------------------------------------------------------------------
# The engine classifies tens of thousands of records per build; validating the refusal schema with jsonschema for
# every record (twice: S+ and S-) cost twenty times the plain status split. classify() therefore splits a pair
# built by with_refusals() into its bodies and its refusal, and decides the standard refusal schema with the
# Python predicate below, which mirrors refusal_schema() clause by clause (tests check the two agree). Anything
# else -- refusal shapes learned in revision, schemas written by hand or by a model -- is validated as written.


@lru_cache(maxsize=4096)
def _split_refusals(success_json: str, failure_json: str) -> tuple[str, str, str] | None:
    """(S+ body, S- body, refusal) as JSON texts when the pair has exactly the :func:`with_refusals` form."""
    success, failure = json.loads(success_json), json.loads(failure_json)
    refusal = refusal_of(success)
    if refusal is None or refusal_of(failure) != refusal:
        return None
    base_s, base_f = without_refusals(success, failure)
    if with_refusals(base_s, base_f, refusal) != (success, failure):
        return None
    return json.dumps(base_s, sort_keys=True), json.dumps(base_f, sort_keys=True), json.dumps(refusal, sort_keys=True)


def _refusal_parts(schema: dict[str, Any]) -> tuple[bool | None, list[dict[str, Any]]]:
    """A refusal schema as (flags of its standard part or None, the other alternatives)."""
    for flags in (True, False):
        if schema == refusal_schema(flags):
            return flags, []
    if set(schema) == {"anyOf"} and isinstance(schema["anyOf"], list):
        found: bool | None = None
        rest: list[dict[str, Any]] = []
        for alt in schema["anyOf"]:
            flags, more = _refusal_parts(alt) if isinstance(alt, dict) else (None, [alt])
            if flags is not None and found is None:
                found = flags
            elif flags is not None:
                rest.append(refusal_schema(flags))
            rest.extend(more)
        return found, rest
    return None, [schema]


@lru_cache(maxsize=4096)
def _compiled_refusal(refusal_json: str) -> tuple[bool | None, tuple[str, ...]]:
    flags, rest = _refusal_parts(json.loads(refusal_json))
    return flags, tuple(json.dumps(r, sort_keys=True) for r in rest)


_FAILURE_RE = re.compile(FAILURE_TEXT)
_FLAG_RE = re.compile(FLAG_NAME)
_NO_EFFECT_RE = re.compile(NO_EFFECT_TEXT)
_EMPTY = (None, "", False, 0, [], {})


def _text_refusal(value: Any) -> bool:
    return isinstance(value, str) and _FAILURE_RE.search(value) is not None


def _item_refusal(value: Any) -> bool:
    """:data:`REFUSAL_ITEM` as a predicate."""
    if _text_refusal(value):
        return True
    if not isinstance(value, dict):
        return False
    if any(key in value and value[key] not in _EMPTY for key in ("error", "errors")):
        return True
    return len(value) == 1 and _text_refusal(next(iter(value.values())))


def _standard_refusal(rec: Any, flags: bool) -> bool:
    """:func:`refusal_schema` as a predicate."""
    if not isinstance(rec, dict) or "output" not in rec or rec.get("status", None) != "success" or "status" not in rec:
        return False
    out = rec["output"]
    if _item_refusal(out) or (isinstance(out, list) and out and all(_item_refusal(v) for v in out)):
        return True
    if not flags or not isinstance(out, (dict, str)):
        return False
    changes = rec.get("state_changes")
    if isinstance(changes, dict) and changes:
        return False
    if isinstance(out, str):
        return _NO_EFFECT_RE.search(out) is not None
    return any(v is False and _FLAG_RE.search(k) for k, v in out.items())


def _refused(refusal_json: str, rec: Any) -> bool:
    flags, rest = _compiled_refusal(refusal_json)
    if flags is not None and _standard_refusal(rec, flags):
        return True
    return any(_validator(r).is_valid(rec) for r in rest)
