"""The templates of a proposed contract: which calls of a tool its checking and exploration run, each with every
input filled (an observation, or a literal the caller constructs), and one call expected to fail."""

from __future__ import annotations

import json
import re
from typing import Any

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.model import Argument, Template
from libra.contracts.offline.decisions import ParamDecision
from libra.contracts.offline.vocabulary import is_read_tool, tool_words
from libra.schema import fits, schema_type
from libra.values.generator import drawn_for, sentinel_for
from libra.values.prose import described_choices, described_options


def closed_choices(description: str) -> list[str]:
    """The complete set of values a description allows, or [] when it lists none or only examples."""
    values, closed = described_choices(description)
    return values if closed else []


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
            if fits(schema, list(options)):
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


#: At most this many extra success templates per tool give a boolean its other value or a closed set its other values
#: (otherwise a call that turns a setting off is never made). The engine runs every success template in every explored
#: state, so each extra template costs one call per state it is tried in; two cover a flag both ways plus one more
#: choice.
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
            if json.dumps(v, sort_keys=True, default=str) != current and fits(schema, v)
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


def propose_templates(tool: Tool, decisions: dict[str, ParamDecision]) -> list[Template]:
    """The templates of a tool's initial contract, its parameters decided as ``decisions`` say.

    Success templates: ``complete`` (every parameter filled, F7) -- except for a read tool with several optional
    criteria, where conjoined invented criteria would match nothing; ``required_only`` when there are optional
    parameters; for such a read tool, ``by_<p>`` with one criterion each (:func:`criterion_order`, at most
    :data:`MAX_CRITERION_TEMPLATES`); and up to :data:`MAX_VALUE_VARIANTS` templates giving a flag or a closed
    choice its other values (:func:`value_variants`). A tool thus has at most
    ``MAX_VALUE_VARIANTS + MAX_CRITERION_TEMPLATES - 1`` success templates more than before these rules. One
    expected-failure template swaps a required reference for a value that cannot exist.
    """
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
            return Argument.literal(complete, "documented")
        key = repr(s.get("enum") or described_options(s.get("description", "")))
        nth = option_use.get(key, 0)
        option_use[key] = nth + 1
        drawn = drawn_for(p, s, option=nth if key != "[]" else 0, tool=tool.name)
        return Argument.literal(drawn.value, drawn.layer)

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
        templates.append(Template(name, {**base, p: Argument.literal(value, "documented")}, "success"))
    failure = _failure_template(tool, decisions, full)
    if failure is not None:
        templates.append(failure)
    return templates


def _failure_template(tool: Tool, decisions: dict[str, ParamDecision], full: dict[str, Argument]) -> Template | None:
    """Expected failure: only when a required reference exists; it is swapped for a value that cannot exist."""
    required = set(tool.required)
    ref = next((p for p in tool.param_names if p in required and decisions[p].kind == "observation"), None)
    if ref is None:
        return None
    bad = sentinel_for(tool.param_schema(ref))
    if bad is None:
        return None
    args = {p: (Argument.literal(bad, "sentinel") if p == ref else full[p]) for p in tool.param_names if p in required}
    return Template(f"nonexistent_{ref}", args, "failure")
