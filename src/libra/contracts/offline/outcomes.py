"""The outcome schemas of a proposed contract: S+ and S- over the normalized invocation record (rules 34-38, F7)."""

from __future__ import annotations

import copy
from typing import Any

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.offline.vocabulary import is_read_tool
from libra.contracts.outcome import refusal_schema, with_refusals
from libra.schema import schema_type

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
    call that changed nothing) is a failure wherever the tool puts it: see
    :func:`~libra.contracts.outcome.refusal_schema`.
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
