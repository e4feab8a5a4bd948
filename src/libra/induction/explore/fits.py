"""Whether a value fits a tool's input: JSON Schema validation, shared and cached across inputs of one kind.

Why a collaborator of its own: the verdict is a pure function of an input's schema and the value, asked for every
binding, offer and control (millions of times in a large build), and the same few kinds of input (an id, an
e-mail address, a page number) recur across a catalog. Keeping the validators and their verdicts here lets every
phase ask the one question without knowing how it is answered fast.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from libra.catalog import Tool
from libra.values.constraints import documented_schema
from libra.values.repair import message_parameter

__all__ = ["ANNOTATIONS", "FIT_CACHE", "FIT_CACHE_CHARS", "FitChecker"]

#: (schema, value) verdicts of :meth:`FitChecker.as_passed` kept at most (about a hundred bytes each), and the
#: longest string kept among them
FIT_CACHE = 1 << 17
FIT_CACHE_CHARS = 256
#: JSON Schema keywords that annotate and never constrain (Draft 2020-12, meta-data vocabulary and comments)
ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
_MISS = object()  # no verdict cached


class FitChecker:
    """The validators of a catalog's inputs and their cached verdicts."""

    def __init__(self) -> None:
        self.validators: list[jsonschema.Draft202012Validator] = []  # see validator_id
        self._schema_by_text: dict[str, int] = {}
        #: (tool, input) -> validator id: see :meth:`schema_id`
        self.schema_ids: dict[tuple[str, str], int] = {}
        #: (tool, input) -> the form its refusals stated (see :meth:`learn_refusal`), as JSON Schema keywords
        self.learned: dict[tuple[str, str], dict[str, Any]] = {}
        # (validator id, value type, value) -> how the value is passed ("as is", "listed") or None: see as_passed
        self._fit_cache: dict[tuple[int, type, Any], str | None] = {}

    def as_passed(self, tool: Tool, param: str, value: Any) -> Any | None:
        """The value as it would be passed to ``param`` (a scalar may fill a list input), or None if invalid.

        Declared formats are checked too: a status message offered to an ``email`` input is a test that can only
        fail, and in a large catalog such offers would use up the consumer's budget before the real providers'.
        """
        schema_id = self.schema_id(tool, param)
        v = self.validators[schema_id]
        # The verdict is a pure function of the schema and the value, and the same pool values are offered to the
        # same kinds of input over and over (every binding, every offer): each is validated once per schema.
        # Keyed by type too, because 1, 1.0 and True are equal as dict keys but not to a schema; long text is
        # validated every time rather than kept alive by the cache.
        cached = isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= FIT_CACHE_CHARS)
        if cached:
            hit = self._fit_cache.get((schema_id, type(value), value), _MISS)
            if hit is not _MISS:
                return value if hit == "as is" else [value] if hit == "listed" else None
        if v.is_valid(value):
            out: Any = value
        elif isinstance(value, (str, int, float, bool)) and v.is_valid([value]):
            out = [value]
        else:
            out = None
        if cached:
            if len(self._fit_cache) >= FIT_CACHE:
                self._fit_cache.clear()  # bounded: a cleared cache only validates again
            self._fit_cache[(schema_id, type(value), value)] = (
                "as is" if out is value else "listed" if out is not None else None
            )
        return out

    def schema_id(self, tool: Tool, param: str) -> int:
        """The validator id of an input (:meth:`validator_id`), cached per input: what :meth:`as_passed` decides
        by. The input's documentation counts as part of its schema (a stated length, characters, range or format,
        :func:`~libra.values.constraints.documented_schema`): an offer it rules out can only be refused."""
        key = (tool.name, param)
        schema_id = self.schema_ids.get(key)
        if schema_id is None:
            schema = documented_schema(tool.param_schema(param))
            learned = self.learned.get(key)
            if learned:
                schema = {**schema, **{k: v for k, v in learned.items() if k not in schema}}
            schema_id = self.schema_ids[key] = self.validator_id(schema)
        return schema_id

    def learn_refusal(self, tool: Tool, args: dict[str, Any], message: str | None) -> bool:
        """Take a refusal that states the form an input must have ("appointment_id 'P-1002' is not a valid UUID",
        "username must be 3-20 letters or digits") as part of that input's schema from now on; True if it did.

        Why: the form is the tool's own rule, as binding as its documentation, and offering that input more values
        of another form (other kinds of ids that happen to be strings) can only be refused again, spending the
        pair's offers before the value of the right form comes. Only a refusal that names the input is read."""
        if not message:
            return False
        literals = {p: v for p, v in args.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
        param = message_parameter(message, literals, others=[p for p in args if p not in literals])
        if param is None or param not in tool.param_names:
            return False
        schema = tool.param_schema(param)
        rules = documented_schema({**schema, "description": message})
        learned = {
            k: v for k, v in rules.items() if k not in schema and k in ("format", "pattern", "minLength", "maxLength")
        }
        if not learned or self.learned.get((tool.name, param)) == learned:
            return False
        self.learned[(tool.name, param)] = {**self.learned.get((tool.name, param), {}), **learned}
        self.schema_ids.pop((tool.name, param), None)
        return True

    def validator_id(self, schema: dict[str, Any]) -> int:
        """The id of the validator of a parameter schema, shared by every input whose schema differs only in
        annotations (:data:`ANNOTATIONS`: a description says nothing about which values are valid), so inputs of
        the same kind (an id, an e-mail address, a page number) share one validator and one cache of verdicts."""
        text = json.dumps({k: v for k, v in schema.items() if k not in ANNOTATIONS}, sort_keys=True, default=repr)
        schema_id = self._schema_by_text.get(text)
        if schema_id is None:
            schema_id = self._schema_by_text[text] = len(self.validators)
            self.validators.append(
                jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            )
        return schema_id
