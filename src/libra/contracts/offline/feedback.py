"""What same-tool feedback shows a contract misses: observed leaves and values in text no export reaches, literals
the tool rejected with a message saying what it wanted, inputs that exclude one another, and literals the tool
refused as naming nothing. Contract checking asks these to know whether a tool needs revising; the reviser
(:mod:`.revision`) applies them."""

from __future__ import annotations

import re
from typing import Any

import jsonpath

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.exclusive import Exclusive, exclusive_choices, exclusive_inputs
from libra.contracts.leaves import observed_leaves
from libra.contracts.model import Argument, Contract, FromText
from libra.contracts.offline.decisions import decide_parameter
from libra.contracts.outcome import canonical_path, classify, extract, record_dict, rejection_message
from libra.contracts.text_values import is_text, text_findings
from libra.values.generator import drawn_for
from libra.values.repair import message_parameter, repair_literal


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


def text_key(source: str, path: str, kind: str, inner: str) -> tuple[str, str, str, str]:
    return (source, canonical_path(path), kind, canonical_path(inner))


def uncovered_text(contract: Contract, record: dict[str, Any]) -> list[tuple[str, str, FromText, list[str], str]]:
    """Values inside a successful output's text that no export reaches: (source, path of the text, extractor,
    field labels, JSON type), one per extractor and text location.

    Why: most MCP tools answer with text ("Changes committed successfully with hash ..."), and an identifier in
    it reaches the next tool only through an export that reads inside the text. Which extractors apply is read
    from the text's form alone (:func:`~libra.contracts.text_values.text_findings`): an embedded JSON document or Python
    literal, several lines, identifiers of a recognisable form. Only strings that are text (inner whitespace, or
    a printed structure) are read, so a single token -- an id, a SMILES string -- stays the value it is.
    """
    output = record_dict(record).get("output")
    if output is None:
        return []
    have = {
        text_key(e.source, e.path, e.from_text.kind, e.from_text.path)
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
            key = text_key("response", path, kind, inner)
            if key in have or key in seen:
                continue
            seen.add(key)
            out.append(("response", path, FromText(kind, inner), label + (inner_label or [kind]), jt))
    return out


def literal_repairs(contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> list[tuple[str, str, Any, str]]:
    """Literals to replace after the tool rejected a success template: (template, parameter, new value, message).

    The tool's own validation message names what it wanted (a required prefix, the allowed values, a format, a
    bound); :func:`~libra.values.repair.repair_literal` turns that into a value and the parameter is the one
    the message names (else the template's only literal). Only literal arguments of success templates are
    repaired, once per template per revision, and only with a value that fits the parameter's schema -- the
    feedback loop of the paper (rules 27-29) applied to a rejection's text rather than to an output's structure.
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
    drawn = drawn_for(param, schema, tool=tool.name)
    return Argument.literal(drawn.value, drawn.layer)


def exclusive_repairs(
    contract: Contract, tool: Tool, feedback: list[dict[str, Any]]
) -> list[tuple[str, Exclusive, list[dict[str, Argument]], str]]:
    """Success templates the tool refused for giving several of a set of inputs that exclude one another (or none
    of them): (template, the set, the argument sets to use instead, message).

    Why: the proposer fills every optional input in one template and none in another, and a tool that takes
    exactly one of a track, an album or a playlist id refuses both ("Exactly one of track_id, album_id or
    playlist_id must be given, found 3"). The message names the set
    (:func:`~libra.contracts.exclusive.exclusive_inputs`); the template is replaced by one per input of the set it
    gave, each keeping exactly that one (:func:`~libra.contracts.exclusive.exclusive_choices`), so every input of
    the set is exercised and can receive offered values.
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


def _names_only(message: str, param: str, params: Any) -> bool:
    """Whether a message quoting no value names ``param`` (its words, as a phrase) and no other input: "Channel
    does not exist!" for an invented ``channel``. A tool that does not repeat the value still says which input
    named nothing when it names the input."""
    text = f" {' '.join(words(message))} "

    def named(name: str) -> bool:
        return bool(words(name)) and f" {' '.join(words(name))} " in text

    return named(param) and not any(named(q) for q in params if q != param)


def missing_references(
    contract: Contract, feedback: list[dict[str, Any]], also: re.Pattern[str] | None = None
) -> list[tuple[str, str, list[str | int] | None]]:
    """Literal inputs a success template passed that the tool refused as naming nothing: (parameter, message,
    pointer), the pointer locating the refused leaf inside a structured literal (None: the whole value).

    Why: the proposer decides from metadata alone whether a name is chosen by the call or refers to something that
    exists (rules 10, 11), and verbs mislead it ("add" creates in one API and stages existing files in another). When
    the tool's own refusal repeats the invented value (or, quoting no value, names the input alone: "Channel does not
    exist!") and says it was not found, did not match or does not exist, the input names an existing record: it
    becomes an observation, so values other calls produce are offered to it like to any reference. Only a string
    value (or a list of strings) that the message quotes verbatim, or an input it names while naming no other and
    quoting nothing, counts, so a refusal about another input never turns this one. In a structured literal (a list
    of objects) only the refused leaf names a record -- ``entityName`` among the contents to add to that entity -- so
    only that leaf is marked (:data:`~libra.contracts.model.NESTED_REFERENCE`), once. A message that quotes the
    values of several inputs ("rename 'a' -> 'b': no such file") does not say which of them names nothing, so it
    turns no whole input into a reference. ``also`` adds wordings a caller reads as "nothing has that name" besides
    the common ones.
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
        if not (_MISSING.search(message) or (also is not None and also.search(message))):
            continue
        passed = fb.get("arguments", {}) or {}
        given = {**{p: a.value for p, a in t.arguments.items() if a.kind == "literal"}, **passed}
        quoted = {p for p, v in given.items() if any(len(x.strip()) >= 3 and x in message for x in _strings(v))}
        for p, a in t.arguments.items():
            if a.kind != "literal" or p in nested or p in {q for q, _m, _x in out} or passed.get(p, a.value) != a.value:
                continue
            values = a.value if isinstance(a.value, list) else [a.value]
            if values and all(isinstance(v, str) and len(v.strip()) >= 3 for v in values):
                if (any(v in message for v in values) and quoted == {p}) or (
                    not quoted and _names_only(message, p, t.arguments)
                ):
                    out.append((p, message, None))
            elif isinstance(a.value, (dict, list)):
                hits = [ptr for ptr, v in string_leaves(a.value) if len(v.strip()) >= 3 and v in message]
                if len(hits) == 1:
                    out.append((p, message, list(hits[0])))
    return out
