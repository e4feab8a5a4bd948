"""Structural and semantic validation of a contract against its tool's public interface."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonpath
import jsonschema

from libra.catalog import Tool
from libra.contracts.model import Contract
from libra.library.check import contract_schema


@lru_cache(maxsize=1)
def _contract_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(contract_schema())


def _where(err: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in err.absolute_path) or "<root>"


def _schema_errors(schema: Any) -> str | None:
    try:
        _checked_validator(_schema_text(schema))
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


def _schema_text(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, default=repr)


@lru_cache(maxsize=8192)
def _checked_validator(text: str) -> jsonschema.Draft202012Validator:
    """A validator of the schema ``text`` (sorted JSON), checked against the meta-schema once (raises SchemaError).

    Why cached: checking a schema against the meta-schema costs far more than validating a value, and contract
    checking validates the same few hundred parameter and outcome schemas thousands of times (every proposal and
    revision of every contract), which made it a visible share of a large catalog's build.
    """
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _literal_error(value: Any, schema: Any) -> str | None:
    """Why ``value`` does not fit ``schema`` (as :func:`jsonschema.validate` words it), or None when it fits."""
    error = jsonschema.exceptions.best_match(_checked_validator(_schema_text(schema)).iter_errors(value))
    return None if error is None else error.message


def validate_contract(contract: dict[str, Any] | Contract, tool: Tool) -> list[str]:
    """All problems that would make this contract unusable for ``tool``; an empty list means valid.

    Beyond the document schema this checks what only the tool's signature can decide: template keys are real
    parameter names, required parameters are never left out (rule 2), literals fit their parameter schema,
    outcome schemas compile (rule 34) and export paths parse (rule 19) without recursive catch-alls (rule 31).
    """
    d = contract.to_dict() if isinstance(contract, Contract) else contract
    errors = [f"{_where(e)}: {e.message}" for e in _contract_validator().iter_errors(d)]
    if errors or not isinstance(d, dict):
        return errors
    if d["tool"] != tool.name:
        errors.append(f"contract names tool {d['tool']!r} but is checked against {tool.name!r}")
    errors.extend(_template_errors(d["templates"], tool))
    for key in ("success", "failure"):
        msg = _schema_errors(d[key])
        if msg:
            errors.append(f"{key}: not a valid JSON Schema: {msg}")
    errors.extend(_export_errors(d["exports"], tool))
    return errors


def _template_errors(templates: list[dict[str, Any]], tool: Tool) -> list[str]:
    """Arguments that are no parameter, required parameters left out, literals that do not fit, no success."""
    errors: list[str] = []
    params = set(tool.param_names)
    required = tool.required
    success_templates = 0
    for i, t in enumerate(templates):
        label = f"templates/{i} ({t['name']})"
        if t["expected"] == "success":
            success_templates += 1
        for p in sorted(set(t["arguments"]) - params):
            errors.append(f"{label}: argument {p!r} is not a parameter of {tool.name}")
        for p in required:
            arg = t["arguments"].get(p)
            if arg is None or arg["kind"] == "omit":
                errors.append(f"{label}: required parameter {p!r} is missing or omitted")
        for p, arg in t["arguments"].items():
            if arg["kind"] != "literal" or p not in params:
                continue
            message = _literal_error(arg["value"], tool.param_schema(p))
            if message is not None:
                errors.append(f"{label}: literal for {p!r} does not fit its schema: {message}")
    if success_templates == 0:
        errors.append("no template is expected to succeed (at least one success template is required)")
    return errors


def _export_errors(exports: list[dict[str, Any]], tool: Tool) -> list[str]:
    """Duplicate names, recursive or unparsable paths, invalid schemas, argument exports of no parameter."""
    errors: list[str] = []
    params = set(tool.param_names)
    names: set[str] = set()
    for i, e in enumerate(exports):
        label = f"exports/{i} ({e['name']})"
        if e["name"] in names:
            errors.append(f"{label}: duplicate export name")
        names.add(e["name"])
        if ".." in e["path"]:
            errors.append(f"{label}: recursive descent paths are not allowed: {e['path']!r}")
        errors.extend(_path_errors(label, e))
        msg = _schema_errors(e["schema"])
        if msg:
            errors.append(f"{label}: schema is not a valid JSON Schema: {msg}")
        if e["source"] == "arguments":
            head = e["path"][2:].split(".")[0].split("[")[0] if e["path"].startswith("$.") else None
            if head is not None and head not in params:
                errors.append(f"{label}: argument export reads {head!r}, which is not a parameter of {tool.name}")
    return errors


def _path_errors(label: str, export: dict[str, Any]) -> list[str]:
    """The export's path, and its ``from_text`` path when it has one, where they do not parse."""
    errors: list[str] = []
    try:
        jsonpath.compile(export["path"])
    except jsonpath.JSONPathError as exc:
        errors.append(f"{label}: path {export['path']!r} does not parse: {str(exc).splitlines()[0]}")
    inner = (export.get("from_text") or {}).get("path")
    if inner is not None:
        try:
            jsonpath.compile(inner)
        except jsonpath.JSONPathError as exc:
            errors.append(f"{label}: from_text path {inner!r} does not parse: {str(exc).splitlines()[0]}")
    return errors
