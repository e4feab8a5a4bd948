"""Revision of an offline contract from same-tool execution feedback (rules 27-33): outcome schemas repaired,
literals replaced from the tool's rejection, templates split over inputs that exclude one another, refused
literals turned into observations, exports added for what successful outputs hold.

Only structure is used -- field names, paths and JSON types: no runtime scalar is copied into a literal, name,
path or schema.
"""

from __future__ import annotations

import json
from typing import Any

from libra.catalog import Tool
from libra.contracts.leaves import is_field_name
from libra.contracts.model import CHECKED_LITERAL, MAX_REVISIONS, NESTED_REFERENCE, Argument, Contract, Export, Template
from libra.contracts.offline.exports import export_name, scalar_response_name, should_propagate
from libra.contracts.offline.feedback import (
    exclusive_repairs,
    literal_repairs,
    missing_references,
    text_key,
    uncovered_leaves,
    uncovered_text,
)
from libra.contracts.offline.outcomes import BASE_FAILURE, BASE_SUCCESS
from libra.contracts.offline.vocabulary import is_read_tool
from libra.contracts.outcome import (
    canonical_path,
    classify,
    extract,
    record_dict,
    refusal_of,
    refusal_schema,
    schema_accepts,
    with_refusals,
)
from libra.contracts.text_values import STRUCTURED_KINDS
from libra.runtime.base import json_type


def text_exports(contract: Contract, tool: Tool, records: list[dict[str, Any]], taken: set[str]) -> list[Export]:
    """Exports reading the values inside the text of successful outputs (:func:`uncovered_text`); names are the
    field labels found inside the text (``name`` in printed JSON), else the extractor's kind (``hex_id``),
    prefixed with ``text`` only when needed to stay unique."""
    out: list[Export] = []
    seen: set[tuple[str, str, str, str]] = set()
    for rec in records:
        for source, path, text, label, jt in uncovered_text(contract, rec):
            key = text_key(source, path, text.kind, text.path)
            if key in seen:
                continue
            seen.add(key)
            name = export_name(label, taken, text.kind, prefix="text")
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
    if isinstance(value, dict) and value and all(is_field_name(str(k)) for k in value):
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


#: At most this many templates one revision adds when it splits templates over inputs that exclude one another.
MAX_EXCLUSIVE_TEMPLATES = 6


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


def revise(contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None:
    """A revised contract from same-tool execution feedback, or None when nothing needs to change.

    ``feedback`` items carry ``arguments`` (what was passed), ``record`` (the normalized invocation record) and
    optionally ``expected``. Only structure is used -- field names, paths and JSON types (rules 27-33): no runtime
    scalar is copied into a literal, name, path or schema. Outcome schemas are repaired when a record matched
    neither (or both) of S+ and S- (:func:`_repair_success_shape`); a literal the tool rejected is replaced from
    its rejection message (:func:`~.feedback.literal_repairs`); exports are added for observed scalar leaves the
    contract does not reach.
    """
    if contract.revision >= MAX_REVISIONS or not feedback:
        return None
    new = contract.copy()
    changed = _repair_outcomes(new, tool, feedback)
    changed.extend(_repair_literals(new, tool, feedback))
    changed.extend(_split_exclusive(new, tool, feedback))
    changed.extend(_observe_missing(new, tool, feedback))
    changed.extend(_add_exports(new, tool, feedback))
    if not changed:
        return None
    new.revision = contract.revision + 1
    new.notes = list(contract.notes) + [f"revision {new.revision}: " + "; ".join(dict.fromkeys(changed))]
    if "revised" not in new.flags:
        new.flags.append("revised")
    return new


def _repair_outcomes(new: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Repair S+/S- for every record that matched neither (or both); edits ``new`` in place, returns notes."""
    changed: list[str] = []
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
    return changed


def _repair_literals(new: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Replace the literals the tool rejected with what its message asks for (:func:`~.feedback.literal_repairs`)."""
    changed: list[str] = []
    for name, param, value, message in literal_repairs(new, tool, feedback):
        template = next(t for t in new.templates if t.name == name)
        template.arguments[param] = Argument.literal(value, "repaired")
        if CHECKED_LITERAL + param not in new.flags:
            new.flags.append(CHECKED_LITERAL + param)
        changed.append(
            f"template {name}: literal for {param} repaired from the tool's rejection ({_clip_message(message)})"
        )
    return changed


def _observe_missing(new: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Turn the literals the tool refused as naming nothing into observations, or mark the refused leaf of a
    structured literal as a nested reference (:func:`~.feedback.missing_references`)."""
    changed: list[str] = []
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
    return changed


def add_exports(contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Add to ``contract``, in place, exports for the leaves of successful replies (and state changes) that no
    export reaches; what changed, as notes. The rule :func:`revise` applies to checking's feedback, for a caller
    that meets a tool's first success later (the exploration, see :mod:`libra.induction.explore.revising`)."""
    return _add_exports(contract, tool, feedback)


def _add_exports(new: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[str]:
    """Exports for the observed leaves of successful outputs and state changes no export reaches, and for the values
    inside their text; a declared response export that reached nothing moves to a leaf of its own label."""
    changed: list[str] = []
    taken = {e.name for e in new.exports}
    known_paths = {(e.source, canonical_path(e.path)) for e in new.exports}
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
                name = export_name(base, taken, "value", prefix="response")
            else:  # state paths share generic tails (after, name): keep the whole structural label
                name = export_name(["_".join(["state"] + base)], taken, "state_value")
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
    return changed
