"""Template literals revised from a refusal the exploration met first.

Contract checking revises a template from the tool's own refusals (:func:`~libra.contracts.offline.revision.revise`):
a literal of the wrong form is repaired from the message ("not a valid emoji name, e.g. 'thumbsup'"), and an invented
value the tool says names nothing ("'sample creator' is not a member of ...") becomes an observation, filled with
values other calls produced. So does a literal the message sends the caller to another tool for ("Invalid API key.
Call `login` to obtain one."). Checking only sees the refusals of calls it can make from the starting state, though: a
tool behind a precondition (a message must exist before it can be reacted to, a workspace before a channel is made
in it) fails there for that precondition, and its other literals are first refused once the exploration has met the
precondition. The same two rules apply then, to the contract the exploration runs, and the refused item runs again.

The same holds for what a tool returns: a contract with no export of its reply was written without ever seeing one
(the tool never succeeded in checking, and its signature declares no fields), so the first reply the exploration
gets is read for its fields (:func:`export_first_reply`), before its values enter the pool.

The literal rules read only the refusal of a template's own literal (a value on offer is the offer's business), and each
template is revised at most :data:`MAX_REVISIONS` times, so a tool that keeps refusing for other reasons costs a few
calls at most.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.model import CHECKED_LITERAL, Argument, Contract, Template
from libra.contracts.offline.feedback import literal_repairs, missing_references
from libra.contracts.offline.revision import add_exports
from libra.contracts.outcome import rejection_message
from libra.values.generator import drawn_for

__all__ = [
    "MAX_REVISIONS",
    "SELF_TARGET",
    "UNKNOWN_NAME",
    "export_first_reply",
    "named_elsewhere",
    "other_than_own",
    "revise_template",
]

#: Wordings of a refusal that says nothing has the quoted name, beyond contract checking's ("not found", "no such",
#: ...): "'x' is not a member of workspace 'T1'", "No message with ts 'x'". Read here only, for a refusal met after
#: a precondition; contract checking keeps its narrower list, since there a lookup that says "no customer with phone
#: number x" is answered by the sandbox's own facts (its fixtures are offered to such an input), which a reference
#: would take the place of.
UNKNOWN_NAME = re.compile(
    r"\bis not (?:a )?(?:member|registered|known)\b|\bno \w+ (?:with|named|called|matching)\b", re.I
)

#: Wordings of a refusal that says the call aimed at its caller ("you cannot share a note with yourself", "the
#: organizer cannot invite themselves").
SELF_TARGET = re.compile(r"\b(?:yourself|themselves|himself|herself|itself|oneself)\b", re.I)

#: Revisions per template over a build: a repaired literal refused again gets another repair, then no more.
MAX_REVISIONS = 3


def revise_template(
    contract: Contract,
    tool: Tool,
    index: int,
    args: dict[str, Any],
    rec: dict[str, Any],
    pooled: Collection[str] = (),
    others: Collection[str] = (),
) -> list[str]:
    """Revise template ``index`` of ``contract`` in place after the call ``args`` was refused with ``rec``; the
    inputs it changed (none when the refusal is not about one of the template's own literals).

    ``pooled`` are the inputs that took a value some call produced. Such a value names something that exists, so
    a message quoting it beside an invented name ("'sample creator' is not a member of workspace 'T1'") is still
    about the invented one: only the observed inputs among them are left out of what the message is read against
    (a literal input filled from the pool stays, so that its own value, not the template's, is what was passed).
    ``others`` are the bare names of the catalog's other tools (see :func:`named_elsewhere`).
    """
    template = contract.templates[index]
    if template.expected != "success":
        return []
    passed = {
        p: v
        for p, v in args.items()
        if p not in pooled or (p in template.arguments and template.arguments[p].kind == "literal")
    }
    feedback = [{"template": template.name, "record": rec, "arguments": passed}]
    repairs = [(p, v) for name, p, v, _m in literal_repairs(contract, tool, feedback) if name == template.name]
    for param, value in repairs:
        template.arguments[param] = Argument.literal(value, "repaired")
        if CHECKED_LITERAL + param not in contract.flags:
            contract.flags.append(CHECKED_LITERAL + param)
    if repairs:
        return [p for p, _v in repairs]
    found = missing_references(contract, feedback, also=UNKNOWN_NAME)
    observed = [p for p, _message, pointer in found if pointer is None]
    # (a leaf of a structured literal is left to contract checking, which marks it with the record it needs)
    if not observed:
        named = named_elsewhere(template, passed, rec, others)
        observed = [named] if named else []
    for param in observed:
        schema = tool.param_schema(param)
        for t in contract.templates:
            arg = t.arguments.get(param)
            if arg is not None and arg.kind == "literal" and t.expected == "success":
                t.arguments[param] = Argument.observation(
                    schema.get("description") or f"an existing {param.replace('_', ' ')}", field=param
                )
    return observed


def named_elsewhere(
    template: Template, passed: dict[str, Any], rec: dict[str, Any], others: Collection[str]
) -> str | None:
    """The literal input a refusal sends the caller to another tool for ("Invalid API key. Call `login` to obtain
    one."): the message names the input and the name of another tool of the catalog (``others``, bare names).

    Why: such a message says where the value comes from, which is the definition of an observed input; no form
    repair can invent it. The input must be one the message names (not merely the only literal), so a refusal
    about the call as a whole turns nothing."""
    message = rejection_message(rec) or ""
    text = f" {' '.join(words(message))} "
    if not any(len(name) >= 4 and f" {' '.join(words(name))} " in text for name in others):
        return None
    literals = {p: a.value for p, a in template.arguments.items() if a.kind == "literal" and passed.get(p) == a.value}
    named = [(len(words(p)), p) for p in literals if words(p) and f" {' '.join(words(p))} " in text]
    return max(named)[1] if named else None


def export_first_reply(contract: Contract, tool: Tool, template: int, args: dict[str, Any], rec: dict[str, Any]) -> int:
    """Add exports for the fields of a successful reply to a contract that exports no field of its replies (at
    most the reply as a whole, all a proposer can say of a reply it never saw); how many it added (0 when the
    contract already exports a field of its reply: checking saw one, or the signature declares it, and its exports
    stand)."""
    if any(e.source == "response" and e.path != "$" for e in contract.exports):
        return 0
    before = len(contract.exports)
    name = contract.templates[template].name
    add_exports(contract, tool, [{"template": name, "record": rec, "arguments": args}])
    return len(contract.exports) - before


def other_than_own(
    contract: Contract, tool: Tool, index: int, args: dict[str, Any], rec: dict[str, Any], own: Collection[str]
) -> int | None:
    """After a refusal saying the call aimed at its caller, a variant of template ``index`` that passes a value of
    its own to the input that held the caller's own value; the variant's index (an existing one when it was made
    before), or None when the refusal is not of that kind or no single input held such a value.

    ``own`` are the strings the path's state-changing calls were given (the user signed in as, the organizer
    set). Why: an input filled with the best-named value on the path gets the caller's own name there -- the only
    user or address the path knows -- and a tool that acts on someone else (sharing, inviting, transferring) refuses
    exactly that. The refusal says the input wants any value but that one, which is the definition of a free
    choice: the variant fills it with the generator's value for this tool (another person, drawn per tool), and
    keeps the template's other inputs as they are."""
    message = rejection_message(rec) or ""
    template = contract.templates[index]
    if template.expected != "success" or ":other_" in template.name or not SELF_TARGET.search(message):
        return None
    held = [p for p, v in args.items() if isinstance(v, str) and v in own and p in template.arguments]
    if len(held) != 1:
        return None
    param = held[0]
    name = f"{template.name}:other_{param}"
    for i, t in enumerate(contract.templates):
        if t.name == name:
            return i
    schema = tool.param_schema(param)
    description = str(schema.get("description", ""))
    drawn = next(
        (
            d
            for d in (drawn_for(param, schema, description, option=k, tool=tool.name) for k in range(3))
            if d.value != args[param]
        ),
        None,
    )
    if drawn is None:
        return None
    arguments = dict(template.arguments)
    arguments[param] = Argument.literal(drawn.value, drawn.layer)
    contract.templates.append(Template(name, arguments, "success"))
    return len(contract.templates) - 1
