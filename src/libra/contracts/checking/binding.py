"""Binding in contract checking: which observed value fills an observation input, by name and description.

A template's observation is filled from the values earlier successful calls exported (a pool per state, see
:class:`~libra.probing.pool.ValuePool`). Checking has no candidate compositions to go by, so it matches an input
and a pooled value lexically: the words of their names first, then of their descriptions; a sandbox fixture also
fits an input whose description opens by naming it. The value is passed as the input's schema wants it (wrapped
in a list for a list input) when its JSON type fits.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.model import Argument
from libra.runtime.base import json_type
from libra.schema import schema_type

_STOP = {
    "the",
    "a",
    "an",
    "of",
    "to",
    "in",
    "for",
    "from",
    "on",
    "at",
    "by",
    "with",
    "and",
    "or",
    "is",
    "be",
    "this",
    "that",
    "which",
    "used",
    "use",
    "can",
    "will",
    "it",
    "its",
    "as",
    "if",
    "only",
    "no",
    "not",
    "are",
    "current",
}


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


@functools.lru_cache(maxsize=1 << 16)
def _bag(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(text) if w not in _STOP)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class PoolValue:
    """A value checking may bind to an observation: where it was read (for the lexical match) and on which node
    it holds; ``id`` is its place in the checker's value list (a node records values by id)."""

    node: int
    tool: str
    export: str
    source: str
    path: str
    value: Any
    description: str = ""
    id: int = -1


def coerce(param_schema: dict[str, Any], value: Any) -> Any | None:
    """The argument to pass for a pooled value, or None when its JSON type cannot fit the parameter."""
    t = schema_type(param_schema)
    vt = json_type(value)
    if t == "array":
        items = param_schema.get("items") if isinstance(param_schema.get("items"), dict) else {}
        inner = coerce(items, value)
        return None if inner is None else [inner]
    if t is None or t == vt or (t == "number" and vt == "integer"):
        return value
    return None


def coercion(param_schema: dict[str, Any]) -> tuple[int, str | None]:
    """:func:`coerce` taken apart: how many lists a fitting value is wrapped in, and the JSON type it must have
    (None: any). Why: checking coerces every pooled value for every observation from every base state, and the
    schema's part of the answer is the same for all of them."""
    depth, t = 0, schema_type(param_schema)
    while t == "array":
        items = param_schema.get("items")
        param_schema = items if isinstance(items, dict) else {}
        depth, t = depth + 1, schema_type(param_schema)
    return depth, t


def match_score(param: str, arg: Argument, param_schema: dict[str, Any], pv: PoolValue) -> float:
    """How well a pooled value fits an observation: name overlap first, then description overlap.

    Shared head nouns (``tweet_id`` ~ ``id``, ``file_name`` ~ ``name``) count extra because the last word of a
    field name usually says what kind of value it is. When both names qualify their head noun and neither
    qualifier appears on the other side (``booking_id`` vs ``user_id``), they name different entities and the
    pair is penalised; a qualifier found in the other side's description (``receiver_id`` described as a user
    ID) keeps them compatible.
    """
    return _name_score(arg.field or param, arg.refers_to or "", pv.export, pv.description or "")


@functools.lru_cache(maxsize=1 << 18)
def _name_score(name: str, refers_to: str, export: str, description: str) -> float:
    """:func:`match_score` of an input named ``name`` (described as referring to ``refers_to``) and a value of
    ``export`` (described by ``description``): a pure function of the four texts, cached, because contract
    checking scores every pooled value for every observation from every base state, and the same few thousand
    name pairs recur throughout."""
    pn = [_stem(w) for w in words(name)]
    en = [_stem(w) for w in words(export)]
    if not pn or not en:
        return 0.0
    p_bag = set(pn) | _bag(refers_to)
    e_bag = set(en) | _bag(description)
    score = _jaccard(set(pn), set(en))
    if pn[-1] == en[-1]:
        score += 0.5
    if set(pn) == set(en):
        score += 0.5
    p_q, e_q = set(pn) - {pn[-1]}, set(en) - {en[-1]}
    if p_q and e_q and not (e_q & p_bag) and not (p_q & e_bag):
        score -= 0.6
    score += 0.4 * _jaccard(_bag(refers_to), _bag(description))
    return score


MIN_SCORE = 0.5


#: Pool values that are sandbox fixtures (facts the runtime's operator knows) carry this tool name and node.
FIXTURE = "fixture"


FIXTURE_NODE = -1


_PHRASE_END = {
    "of",
    "for",
    "to",
    "from",
    "sent",
    "in",
    "on",
    "at",
    "by",
    "with",
    "that",
    "which",
    "used",
    "returned",
    "is",
    "are",
    "was",
    "will",
    "must",
    "should",
    "can",
}


@functools.lru_cache(maxsize=1 << 14)
def _lead_phrase(description: str) -> str:
    """The words a description opens with, up to its first preposition or verb: what the input *is*
    ("The phone number to search for" -> "the phone number"; "The code sent to your email" -> "the code")."""
    out: list[str] = []
    for w in words(description):
        if w in _PHRASE_END:
            break
        out.append(w)
    return " ".join(out)


def fixture_score(param: str, arg: Argument, param_schema: dict[str, Any], pv: PoolValue) -> float:
    """How well a fixture fits an input: the engine's rule for fills, on the checker's lexical score.

    A fixture fits by name like any pooled value, and also fits an input whose description says that is what it
    is ("The phone number to search for" for ``phone_number``; "Your account phone_number" for ``username``): a
    sandbox fact the input's own text asks for. Only the description's opening phrase counts, because a fixture
    merely mentioned later ("the code sent to your email") names where the value came from, not what it is.
    """
    score = match_score(param, arg, param_schema, pv)
    named = " ".join(words(pv.export))
    return (
        max(score, 1.0)
        if named and f" {named} " in f" {_lead_phrase(str(param_schema.get('description', '')))} "
        else score
    )


def fitting(tool: Tool, param: str, arg: Argument, pool: list[PoolValue]) -> list[tuple[float, int, PoolValue, Any]]:
    """The pooled values that fit observation ``param`` as (score, -node, value, argument), in pool order:
    coerced to the input's schema and scored by name and kind (fixtures by :func:`fixture_score`)."""
    ps = tool.param_schema(param)
    depth, t = coercion(ps)  # (what coerce decides, the schema's part once)
    scored = []
    for pv in pool:
        val = pv.value
        if val is None:
            continue  # (coerce answers None, "does not fit", for it whatever the schema)
        if t is not None:
            vt = json_type(val)
            if t != vt and not (t == "number" and vt == "integer"):
                continue
        for _ in range(depth):
            val = [val]
        s = fixture_score(param, arg, ps, pv) if pv.tool == FIXTURE else match_score(param, arg, ps, pv)
        if s >= MIN_SCORE:
            scored.append((s, -pv.node, pv, val))
    return scored


def fill(
    literal_args: dict[str, Any], picks: dict[str, tuple[float, int, PoolValue, Any]]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Arguments and binding notes for one choice of pooled value per observation."""
    args = dict(literal_args)
    binds: dict[str, dict[str, Any]] = {}
    for p, (s, _, pv, val) in picks.items():
        args[p] = val
        binds[p] = {
            "tool": pv.tool,
            "export": pv.export,
            "source": pv.source,
            "path": pv.path,
            "score": round(s, 3),
        }
    return args, binds
