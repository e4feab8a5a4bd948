"""What the exploration knows about the inputs of a catalog's tools before it runs anything.

Which provider fields are candidates for which consumer inputs (the candidate index), which of them may fill an
input and how well they are named for it (the name rule), which literal inputs receive offers (numbers, inputs of
a checked form, a creating tool's path, a reference inside a structured literal), and which values belong to which
tool group. All of it follows from the catalog, the contracts, the candidate compositions, the sandbox's facts and
the field-name similarity, none of it from what the exploration finds, so it is computed once per input and kept.

Why a collaborator of its own: binding, planning and the offers all ask these questions, and their answers are
the rules of the exploration rather than its state; kept apart, each rule reads in one place.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from typing import Any

from libra._util.text import words
from libra.catalog import Catalog, Tool
from libra.contracts.model import Contract, Export
from libra.contracts.offline.vocabulary import is_creation_tool
from libra.embeddings.fields import humanize
from libra.induction.candidates import input_accepts
from libra.induction.config import BuildConfig
from libra.induction.explore.types import FIXTURE, PoolValue
from libra.library.artifact import Candidate
from libra.schema import schema_type
from libra.values.prose import stated_form

__all__ = ["PATH_WORDS", "InputRules", "offerable_literal", "path_inside", "with_leaf"]

#: Words of an input that names a place in a file tree.
PATH_WORDS = frozenset({"path", "filepath", "dirpath"})
#: A (provider, export) pair, or a (consumer, input) pair, of the candidate index.
Key = tuple[str, str]


def offerable_literal(schema: dict[str, Any]) -> bool:
    """Whether a literal input is still offered values: numbers without a closed set of values.

    A number one tool returns and another takes (a timestamp, a coordinate, an amount) is a candidate composition
    like an id; a flag or an enumerated choice is the caller's to make, and text is too free to be replaced.
    """
    return schema_type(schema) in ("integer", "number") and "enum" not in schema and "const" not in schema


def path_inside(folder: Any, literal: Any) -> str | None:
    """``literal`` (a relative path a template chose) placed inside ``folder`` (a value some call produced), or None
    when either is no path: the folder must be a one-line string, the literal a relative path without ``..``."""
    if not (isinstance(folder, str) and isinstance(literal, str)):
        return None
    base, name = folder.strip().rstrip("/"), literal.strip()
    if (
        not base
        or not name
        or len(base) > 255
        or "\n" in base
        or name.startswith(("/", "~"))
        or ".." in name.split("/")
    ):
        return None
    return f"{base}/{name}"


def with_leaf(structure: Any, pointer: Sequence[str | int], value: str) -> Any | None:
    """A copy of ``structure`` with the string leaf at ``pointer`` replaced by ``value``, or None when the pointer
    does not lead to a string leaf."""
    out = copy.deepcopy(structure)
    node = out
    for i, step in enumerate(pointer):
        keyed = isinstance(node, dict) and isinstance(step, str) and step in node
        indexed = (
            isinstance(node, list) and isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(node)
        )
        if not (keyed or indexed):
            return None
        if i == len(pointer) - 1:
            if not isinstance(node[step], str):
                return None
            node[step] = value
            return out
        node = node[step]
    return None


def index_candidates(
    candidates: Sequence[Candidate], runnable: set[str]
) -> tuple[dict[Key, list[Key]], dict[Key, tuple[Key, ...]]]:
    """The candidate compositions between runnable tools, indexed both ways: provider (tool, export) -> consumer
    (tool, input) in the candidates' order, and consumer (tool, input) -> its providers (in no order that matters,
    see :meth:`InputRules.ranked_keys`). Compositions with a tool the runtime cannot execute are counted, never
    tested.

    One tuple per distinct (tool, name) pair is shared by every entry naming it: the index holds millions of
    entries (AppWorld: 2.1 M candidates) over a few thousand pairs, so a tuple per entry was most of its size.
    """
    by_provider: dict[Key, list[Key]] = {}
    pairs: dict[Key, Key] = {}
    providers: dict[Key, dict[Key, None]] = {}
    intern = pairs.setdefault  # (bound once: the loop runs millions of times)
    for c in candidates:
        if c.provider not in runnable or c.consumer not in runnable:
            continue
        provider = (c.provider, c.provider_field)
        provider = intern(provider, provider)
        consumer = (c.consumer, c.consumer_input)
        consumer = intern(consumer, consumer)
        row = by_provider.get(provider)
        if row is None:
            row = by_provider[provider] = []
        row.append(consumer)
        seen = providers.get(consumer)
        if seen is None:
            seen = providers[consumer] = {}
        seen[provider] = None
    # (a tuple per consumer input: it is only iterated)
    return by_provider, {k: tuple(v) for k, v in providers.items()}


class InputRules:
    """The static rules about inputs (see the module's docstring); every answer is cached per (consumer, input)."""

    def __init__(
        self,
        catalog: Catalog,
        contracts: dict[str, Contract],
        candidates: Sequence[Candidate],
        similarity: Callable[[str, str], float],
        config: BuildConfig,
        fixtures: dict[str, Any],
    ) -> None:
        self.catalog = catalog
        self.contracts = contracts
        self.similarity = similarity
        self.config = config
        self.fixtures = fixtures
        runnable = {t.name for t in catalog if t.executable and t.name in contracts}
        #: provider (tool, export) -> consumer (tool, input); consumer (tool, input) -> providers
        self.by_provider, self.by_consumer = index_candidates(candidates, runnable)
        self.runnable = runnable
        self.groups = {t.group.lower() for t in catalog if t.group}
        self.group_of = {t.name: t.group for t in catalog}
        self.tools = {t.name: t for t in catalog}
        #: tool -> input -> the pointer of the reference inside its structured literal (a leaf offer's place)
        self.nested = {name: c.nested_references() for name, c in contracts.items()}
        self._key_cache: dict[Key, list[tuple[float, Key]]] = {}
        self._allowed_cache: dict[Key, dict[Key, float]] = {}
        self._offered_cache: dict[Key, bool] = {}
        self._literal_fit_cache: dict[Key, bool] = {}
        self._checked_cache: dict[Key, bool] = {}
        self._inside_cache: dict[Key, bool] = {}

    def add_candidates(self, provider: str, exports: Sequence[Export]) -> int:
        """Index the candidate pairs of exports a contract gained during the exploration (see
        :func:`~libra.induction.explore.revising.export_first_reply`): each to every input of another runnable tool
        that accepts its type, as :func:`~libra.induction.candidates.candidate_compositions` pairs them before the
        build; how many pairs were added. A provider field already indexed keeps its row (its offers are counted by
        position in it)."""
        added = 0
        for export in exports:
            key = (provider, export.name)
            if not export.propagate or key in self.by_provider or provider not in self.runnable:
                continue
            kind = schema_type(export.schema)
            row = [
                (t.name, p)
                for t in self.catalog
                if t.name in self.runnable and t.name != provider
                for p in t.param_names
                if input_accepts(t.param_schema(p), kind)
            ]
            self.by_provider[key] = row
            for consumer in row:
                self.by_consumer[consumer] = (*self.by_consumer.get(consumer, ()), key)
                self._key_cache.pop(consumer, None)
                self._allowed_cache.pop(consumer, None)
            added += len(row)
        return added

    def forget(self, consumer: str, param: str) -> None:
        """Drop what is cached about an input whose template argument was revised (see :mod:`.revising`)."""
        key = (consumer, param)
        for cache in (self._offered_cache, self._literal_fit_cache, self._checked_cache, self._inside_cache):
            cache.pop(key, None)

    # ------------------------------------------------------------------------------------------- the name rule
    def ranked_keys(self, consumer: str, param: str) -> list[tuple[float, Key]]:
        """(similarity, (provider, export)) pairs that may fill an input, best match first (static, cached)."""
        cache_key = (consumer, param)
        keys = self._key_cache.get(cache_key)
        if keys is None:
            keys = []
            desc = (
                " "
                + " ".join(
                    re.findall(
                        r"[a-z0-9]+", str(self.catalog[consumer].param_schema(param).get("description", "")).lower()
                    )
                )
                + " "
            )

            def fit(name: str) -> float:
                # A value also fits an input whose description names it ("username: Your account phone_number.").
                # Rounded: float noise (1.0 against 0.99999988 for a name equal to the input's) is no better name,
                # and the ranks that follow (a tool before a sandbox fact, the consumer's own group) decide.
                sim = round(float(self.similarity(name, param)), 6)
                return max(sim, 1.0) if f" {humanize(name)} " in desc else sim

            for prov, export in self.by_consumer.get(cache_key, ()):
                sim = fit(export)
                if prov != consumer and sim >= self.config.fill_alignment:
                    keys.append((sim, (prov, export)))
            for name in self.fixtures:
                sim = fit(name)
                if sim > self.config.tau:
                    keys.append((sim, (FIXTURE, name)))
            keys.sort(key=lambda x: (-x[0], x[1]))
            self._key_cache[cache_key] = keys
        return keys

    def allowed(self, consumer: str, param: str) -> dict[Key, float]:
        """:meth:`ranked_keys` as a mapping (provider, export) -> similarity (static, cached)."""
        cache_key = (consumer, param)
        allowed = self._allowed_cache.get(cache_key)
        if allowed is None:
            allowed = self._allowed_cache[cache_key] = {k: sim for sim, k in self.ranked_keys(consumer, param)}
        return allowed

    # -------------------------------------------------------------------------------------- literal inputs
    def known_fits(self, consumer: str, param: str) -> bool:
        """Whether a literal input is one a sandbox fact fits (the name/description rule of :meth:`ranked_keys`).

        Closed sets, flags and numbers keep their literal (any of their values is legitimate), and so does a value
        the call chooses anew (``new_password``, "the name of the new folder"): filling it with a known value
        would make a creation collide with the record it names.
        """
        key = (consumer, param)
        hit = self._literal_fit_cache.get(key)
        if hit is None:
            schema = self.catalog[consumer].param_schema(param)
            new = "new" in words(param) or "new" in words(str(schema.get("description", "")))
            free = schema_type(schema) in (None, "string") and "enum" not in schema and "const" not in schema
            hit = self._literal_fit_cache[key] = (
                bool(self.fixtures)
                and free
                and not new
                and any(k[0] == FIXTURE for _s, k in self.ranked_keys(consumer, param))
            )
        return hit

    def checked_form(self, consumer: str, param: str) -> bool:
        """Whether the tool checks the form of a literal input: it refused the proposer's first literal and a
        revision repaired it from the message (:meth:`Contract.checked_literals`: "use one of mm, cm, m, km", "on
        or after 1980"), or the input declares or its description states a form (:func:`stated_form`: an ISO
        date). Cached.

        Why: such an input is no free choice. A value another tool returns that the tool accepts there is of the
        checked kind (a unit, a timestamp after 1980, a date), so it is a candidate like an id is: it is offered
        (text too, see :meth:`~libra.induction.explore.offers.OffersMixin._offers`) and, when the template's own
        literal works as well, the test concludes compatibility. A literal the tool never refused may take any
        number or any text, and both succeeding then shows only that.
        """
        key = (consumer, param)
        hit = self._checked_cache.get(key)
        if hit is None:
            schema = self.catalog[consumer].param_schema(param)
            closed = "enum" in schema or "const" in schema
            text = schema_type(schema) in (None, "string") and stated_form(schema)
            hit = not closed and (param in self.contracts[consumer].checked_literals() or text)
            self._checked_cache[key] = hit
        return hit

    def offered_literal(self, consumer: str, param: str) -> bool:
        """Whether a literal input receives offers: a number without a closed set (:func:`offerable_literal`), or
        an input whose form the tool checks (:meth:`checked_form`). Cached (every binding asks)."""
        key = (consumer, param)
        hit = self._offered_cache.get(key)
        if hit is None:
            hit = self._offered_cache[key] = offerable_literal(
                self.catalog[consumer].param_schema(param)
            ) or self.checked_form(consumer, param)
        return hit

    def placed(self, consumer: str, param: str, placement: str, value: Any, literal: Any) -> Any | None:
        """The argument an offer of ``value`` passes: the value itself, the template's path literal inside it (a
        folder offer, :meth:`placed_path`), or the template's structured literal with its reference leaf replaced
        (a leaf offer, :meth:`~libra.contracts.model.Contract.nested_references`); None when it cannot be placed."""
        if placement == "folder":
            return path_inside(value, literal)
        if placement == "leaf":
            pointer = self.nested.get(consumer, {}).get(param)
            return None if pointer is None or not isinstance(value, str) else with_leaf(literal, pointer, value)
        return value

    def placed_path(self, consumer: str, param: str) -> bool:
        """Whether a creating tool's path input, which its template fills with a relative literal, receives values
        as the folder to create in (:func:`path_inside`). Cached.

        Why: a tool that creates a file or folder at a path the caller chooses can create it inside a folder
        another call made -- and often only there: a nested path fails until its parent exists. Offering the
        produced path *as the parent* of the template's own name keeps the name the caller's choice and makes
        that dependency testable: the call succeeds after the folder's creation and fails before it (a state
        relation, found by the state test every success after a change gets). Only inputs named as paths
        (:data:`PATH_WORDS`) of tools the proposer reads as creating something, so names, keys and contents are
        never joined.
        """
        key = (consumer, param)
        hit = self._inside_cache.get(key)
        if hit is None:
            tool = self.catalog[consumer]
            hit = (
                bool(set(words(param)) & PATH_WORDS)
                and is_creation_tool(tool)
                and schema_type(tool.param_schema(param)) in (None, "string")
            )
            self._inside_cache[key] = hit
        return hit

    def offer_name(self, consumer: str, param: str, placement: str) -> str:
        """The name an offered value's own name is matched against to order the offers: the input's name, or for a
        leaf offer the key of the leaf it replaces (``entityName`` inside ``observations``).

        Why: a structured input's name says what its items hold, the leaf's key what the reference names. Ranked
        by the container's name every provider looks alike, and the leaf offers' budget (shared with the number
        offers) goes to whichever values came first rather than to the ones named like the reference. Only the
        order changes, never what a test concludes."""
        if placement == "leaf":
            pointer = self.nested.get(consumer, {}).get(param) or []
            key = next((k for k in reversed(pointer) if isinstance(k, str)), None)
            if key:
                return key
        return param

    # ------------------------------------------------------------------------------------------------ groups
    def same_group_key(self, key: Key, tool: Tool) -> bool:
        """A value from the consumer's own group (or the sandbox) is the likelier fit among equally named ones:
        an app's API takes that app's token, not another app's."""
        return key[0] == FIXTURE or self.group_of[key[0]] == tool.group

    def same_group(self, pv: PoolValue, tool: Tool) -> bool:
        """Also true for a value its list element labels as this group's (the password listed for this app)."""
        return pv.for_group == tool.group.lower() if pv.for_group else self.same_group_key((pv.tool, pv.export), tool)

    def meant_for(self, pv: PoolValue, consumer: str) -> bool:
        """False for a value its record labels as another group's (another app's password)."""
        return not pv.for_group or self.group_of[consumer].lower() == pv.for_group
