"""Whether each parameter of a tool is an observation (a value some earlier call must produce) or a literal (a
value the caller constructs), decided from the parameter's name, schema and description and the tool's name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from libra._util.text import compounds, words
from libra.catalog import Tool
from libra.contracts.offline.vocabulary import (
    CREDENTIALS,
    EXISTING_CUES,
    FLAG_PREFIXES,
    FREE_VALUE,
    ISSUED_IDENTITY,
    NAMED_REFERENCE,
    NEW_CUES,
    PERSON_REFERENCE,
    SEARCH_CUES,
    SECRETS,
    account_creation_kind,
    has_phrase,
    is_auth_tool,
    is_creation_tool,
)
from libra.schema import schema_type
from libra.values.conventions import CONTACT_ADDRESS
from libra.values.prose import described_choices, encoded_format


@dataclass(frozen=True)
class ParamDecision:
    """Whether a parameter is an observation or a literal, and the heuristic (with its rule) that decided."""

    kind: str  # "observation" | "literal"
    reason: str


def decide_parameter(tool: Tool, name: str, schema: dict[str, Any]) -> ParamDecision:
    """Observation or literal for one parameter, from its name, schema and description and the tool's name.

    The heuristics run in order and the first that fires decides; each names the rule it implements.
    """
    desc = schema.get("description", "") or ""
    toks = words(name)
    comp = compounds(toks)
    head_toks = toks[: toks.index("to")] if "to" in toks[1:] else toks  # "username_to_follow" -> "username"
    head = compounds(head_toks[-2:]) if head_toks else set()
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
    if "new" in toks or has_phrase(desc, NEW_CUES):
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
    if has_phrase(desc, EXISTING_CUES):
        return ParamDecision("observation", "H7 description says the value must already exist (rules 5, 11)")
    address = bool(comp & CONTACT_ADDRESS)
    named = bool(head & NAMED_REFERENCE) or last in NAMED_REFERENCE or last.rstrip("s") in NAMED_REFERENCE or address
    free_words = FREE_VALUE - {"number"} if address else FREE_VALUE  # "phone number" is no quantity
    person = bool(head & PERSON_REFERENCE) or last.rstrip("s") in PERSON_REFERENCE
    # H8 (rule 10): search and filter criteria are free even when they look like names.
    if named and has_phrase(desc, SEARCH_CUES):
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
