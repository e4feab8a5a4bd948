"""Contracts proposed by an LLM behind any OpenAI-compatible chat endpoint (paper §3.1, Appendix A).

Why this module looks the way it does:

- The paper's method is one initial generation call per tool plus at most two revisions driven by same-tool
  execution feedback, at temperature 0, so the number of LLM calls is linear in the catalog. A per-tool budget of
  ``1 + MAX_REVISIONS`` attempts enforces that; an unusable reply (not JSON, or a contract that fails
  :func:`~libra.contracts.validate.validate_contract`) spends one attempt and its problems go into the next one.
- A tool whose budget runs out still gets a contract: the offline heuristic one, flagged ``llm_fallback`` so a
  report can say how much of a library really came from the model.
- Transport, retries and the reply cache are :mod:`libra.llm.client`'s, shared with the LLM retrieval methods:
  the official ``openai`` SDK (so vLLM, Ollama, llama.cpp and hosted APIs all work), bounded retries visible in
  :attr:`LLMProposer.stats`, and replies cached on disk keyed by the model and a hash of the full request, so a
  rebuild replays the exact same answers with zero calls -- the only way an LLM-built library can be reproduced.
- Prompts are package data (``contracts/prompts/``), written in libra's own words; the prompt for a tool holds
  that tool's public metadata and nothing about other tools, tasks or gold annotations (rules 39-40).
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from libra.catalog import Catalog, Tool
from libra.contracts.model import CONTRACT_VERSION, MAX_REVISIONS, Contract, ContractError
from libra.contracts.offline.exports import argument_exports, response_exports
from libra.contracts.offline.proposer import OfflineProposer
from libra.contracts.offline.revision import revise as offline_revise
from libra.contracts.offline.vocabulary import is_read_tool
from libra.contracts.outcome import refusal_schema, with_refusals, without_refusals
from libra.contracts.registry import register_proposer
from libra.contracts.validate import validate_contract
from libra.errors import ConfigError
from libra.library.check import contract_schema
from libra.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    ChatClient,
    ChatConfig,
    ChatStats,
    LLMEndpointError,
    ReplyError,
    ResponseCache,
    parse_json_object,
)
from libra.llm.client import Attempt as _Attempt
from libra.llm.client import BadRequest as _BadRequest
from libra.llm.client import TransportExhausted as _TransportExhausted
from libra.runtime.base import INVOCATION_RECORD_SCHEMA
from libra.schema import schema_type

RuleProfile = Literal["shared", "registry", "stateful"]
CallingConvention = Literal["signature", "json_object"]
RULE_PROFILES: tuple[str, ...] = ("shared", "registry", "stateful")
CALLING_CONVENTIONS: tuple[str, ...] = ("signature", "json_object")
#: Tool.metadata keys that override the proposer-wide settings for one tool.
META_RULES = "contract_rules"
META_CONVENTION = "calling_convention"
FEEDBACK_POLICY = "complete_same_tool"
#: One initial call plus at most two feedback-driven revisions share this per-tool budget.
CALL_BUDGET = 1 + MAX_REVISIONS
FALLBACK_FLAG = "llm_fallback"
__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "LLMConfig",
    "LLMProposer",
    "LLMProposerError",
    "LLMStats",
    "ReplyError",
    "ResponseCache",
    "build_messages",
    "contract_from_reply",
    "contract_rules",
    "make_llm_proposer",
    "parse_reply",
    "prompt_templates",
]
_MAX_FEEDBACK_STRING = 400
_MAX_FEEDBACK_ITEMS = 20
_MAX_REPLY_EXCERPT = 1500


class LLMProposerError(LLMEndpointError):
    """The model endpoint cannot be used at all (unreachable, bad key, unknown model)."""


# ---------------------------------------------------------------------------------------------------------------
# Prompt templates (package data)
# ---------------------------------------------------------------------------------------------------------------


def _prompt_text(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


@cache
def prompt_templates() -> dict[str, Any]:
    """The prompt pieces shipped in ``libra/contracts/prompts`` (loaded once)."""
    return {
        "system": _prompt_text("system.txt").strip(),
        "system_registry_suffix": _prompt_text("system_registry_suffix.txt").strip(),
        "request": json.loads(_prompt_text("request.json")),
        "rules": json.loads(_prompt_text("rules.json")),
    }


def contract_rules(profile: RuleProfile = "stateful", calling_convention: CallingConvention = "signature") -> list[str]:
    """The numbered rule list for one rule profile.

    ``shared`` is rules 1-40 alone. ``registry`` adds the calling-convention rules after rule 1 (numbered 1.1-1.7),
    swaps in registry versions of rules 14, 15, 20 and 21 and appends two checks (41-42). ``stateful`` is
    ``registry`` with rule 1.7 and rule 37 replaced and three more rules appended (43-45).
    """
    if profile not in RULE_PROFILES:
        raise ConfigError(f"unknown contract rule profile {profile!r}: choose one of {list(RULE_PROFILES)}")
    if calling_convention not in CALLING_CONVENTIONS:
        raise ConfigError(
            f"unknown calling convention {calling_convention!r}: choose one of {list(CALLING_CONVENTIONS)}"
        )
    r = prompt_templates()["rules"]
    shared = list(r["shared"])
    if profile == "shared":
        return [f"{i}. {text}" for i, text in enumerate(shared, 1)]
    reg = r["registry"]
    convention = r["calling_conventions"][calling_convention]
    inserted = [convention if t == "{calling_convention_rule}" else t for t in reg["inserted_after_rule_1"]]
    for number, text in reg["replacements"].items():
        shared[int(number) - 1] = text
    appended = list(reg["appended"])
    if profile == "stateful":
        st = r["stateful"]
        inserted[6] = st["replace_inserted_rule_7"]
        shared[36] = st["replace_rule_37"]
        appended += st["appended"]
    out = [f"1. {shared[0]}"]
    out += [f"1.{j}. {text}" for j, text in enumerate(inserted, 1)]
    out += [f"{i}. {text}" for i, text in enumerate(shared[1:], 2)]
    out += [f"{i}. {text}" for i, text in enumerate(appended, len(shared) + 1)]
    return out


def _fill(template: Any, values: dict[str, Any]) -> Any:
    """Replace every ``"{name}"`` string of a template with ``values[name]`` (a JSON value)."""
    if isinstance(template, str):
        m = re.fullmatch(r"\{([a-z_]+)\}", template)
        if m:
            if m.group(1) not in values:
                raise KeyError(f"prompt template needs a value for {m.group(1)!r}")
            return values[m.group(1)]
        return template
    if isinstance(template, dict):
        return {k: _fill(v, values) for k, v in template.items() if not k.startswith("_")}
    if isinstance(template, list):
        return [_fill(v, values) for v in template]
    return template


def _clip(value: Any, depth: int = 0) -> Any:
    """Bound a feedback value so one verbose record cannot blow up a prompt (structure is what matters)."""
    if isinstance(value, str):
        return value if len(value) <= _MAX_FEEDBACK_STRING else value[:_MAX_FEEDBACK_STRING] + "...[truncated]"
    if depth > 12:
        return "...[nested too deep]"
    if isinstance(value, dict):
        return {str(k): _clip(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        items = [_clip(v, depth + 1) for v in value[:_MAX_FEEDBACK_ITEMS]]
        if len(value) > _MAX_FEEDBACK_ITEMS:
            items.append(f"...[{len(value) - _MAX_FEEDBACK_ITEMS} more items]")
        return items
    return value


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
#: Record fields that change from run to run without saying anything about the tool; dropping them keeps a
#: revision prompt (and so its cache key) identical across rebuilds.
VOLATILE_RECORD_FIELDS = ("duration_ms",)


def _stable(value: Any) -> Any:
    """Feedback with run-specific noise removed: timings, and object addresses inside reprs and messages."""
    if isinstance(value, str):
        return _ADDRESS.sub("0x?", value)
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def render_feedback(feedback: list[dict[str, Any]]) -> dict[str, Any]:
    """Same-tool feedback as the prompt shows it: the call that triggered the revision, then the others.

    The trigger is the first call whose record matched neither outcome schema; failing that, the first observed
    success (its structure may hold values no export reaches), else the first call.
    """

    def item(fb: dict[str, Any]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for key in ("template", "expected", "observed"):
            if key in fb:
                d[key] = fb[key]
        record = fb.get("record")
        if isinstance(record, dict):
            record = {k: v for k, v in record.items() if k not in VOLATILE_RECORD_FIELDS}
        d["arguments"] = _clip(_stable(fb.get("arguments") or {}))
        d["invocation_result"] = _clip(_stable(record))
        return d

    if not feedback:
        return {}
    trigger = next((i for i, fb in enumerate(feedback) if fb.get("observed") == "unmatched"), None)
    if trigger is None:
        trigger = next((i for i, fb in enumerate(feedback) if fb.get("observed") == "success"), 0)
    others = [item(fb) for i, fb in enumerate(feedback) if i != trigger]
    return {"triggering_call": item(feedback[trigger]), "other_calls": others}


def replies_in_text(tool: Tool) -> bool:
    """Whether a tool's reply may be text: declared as a string, or not declared at all."""
    r = tool.response_schema
    return r is None or schema_type(r) in (None, "string")


def prompt_contract_schema(tool: Tool) -> dict[str, Any]:
    """The contract document schema as the prompt shows it for one tool: the ``from_text`` export form only for a
    tool whose reply may be text. Why: it is of no use for a structured reply, and leaving it out keeps the
    prompts (and so the cached replies) of such tools what they were before the form existed."""
    schema = contract_schema()
    if replies_in_text(tool):
        return schema
    schema = copy.deepcopy(schema)
    schema["$defs"].pop("from_text", None)
    schema["$defs"]["export"]["properties"].pop("from_text", None)
    return schema


def _public_contract(contract: Contract) -> dict[str, Any]:
    """A previous contract as the model sees it: contract fields only, no libra bookkeeping."""
    d = contract.to_dict()
    for key in ("notes", "flags", "proposer"):
        d.pop(key, None)
    d["success"], d["failure"] = without_refusals(d["success"], d["failure"])
    return d


def build_messages(
    tool: Tool,
    *,
    rules: RuleProfile = "shared",
    calling_convention: CallingConvention = "signature",
    revision: int = 0,
    previous: Contract | None = None,
    feedback: list[dict[str, Any]] | None = None,
    rejected: tuple[list[str], str] | None = None,
) -> list[dict[str, str]]:
    """The chat messages for one attempt on one tool.

    Only ``tool.document()`` (name, description, parameters, response) is serialized: no group, catalog, runtime
    metadata, task or gold annotation can reach the model (rules 39-40). ``rejected`` is (problems, raw reply) of
    the previous unusable attempt for this tool.
    """
    t = prompt_templates()
    system = t["system"] if rules == "shared" else f"{t['system']}\n{t['system_registry_suffix']}"
    values: dict[str, Any] = {
        "contract_version": CONTRACT_VERSION,
        "revision": revision,
        "feedback_policy": FEEDBACK_POLICY,
        "public_tool_metadata": tool.document(),
        "invocation_record_schema": INVOCATION_RECORD_SCHEMA,
        "contract_schema": prompt_contract_schema(tool),
        "contract_rules": contract_rules(rules, calling_convention),
    }
    request: dict[str, Any] = _fill(t["request"]["base_fields"], values)
    if previous is not None or feedback:
        values.update(
            previous_contract=_public_contract(previous) if previous is not None else None,
            same_tool_feedback=render_feedback(feedback or []),
            feedback_note=t["rules"]["feedback_notes"][FEEDBACK_POLICY] if feedback else None,
        )
        request.update(_fill(t["request"]["revision_fields"], values))
    if rejected is not None:
        problems, reply = rejected
        excerpt = reply if len(reply) <= _MAX_REPLY_EXCERPT else reply[:_MAX_REPLY_EXCERPT] + "...[truncated]"
        request.update(_fill(t["request"]["retry_fields"], {"problems": list(problems), "reply_excerpt": excerpt}))
    return [{"role": "system", "content": system}, {"role": "user", "content": json.dumps(request, ensure_ascii=False)}]


# ---------------------------------------------------------------------------------------------------------------
# Reply parsing
# ---------------------------------------------------------------------------------------------------------------


def parse_reply(text: str | None) -> dict[str, Any]:
    """The contract object in a model reply.

    Accepts a bare JSON object, one inside a Markdown code fence, or one wrapped as ``{"contract": {...}}``;
    reasoning blocks (``<think>...</think>``) and prose around a single object are ignored.
    """
    try:
        obj = parse_json_object(text)
    except ReplyError as exc:
        raise ReplyError(str(exc).replace("return one JSON object", "return the contract as one JSON object")) from None
    if isinstance(obj.get("contract"), dict):
        obj = obj["contract"]
    return obj


def add_mechanical_exports(d: dict[str, Any], tool: Tool, profile: RuleProfile) -> None:
    """Add the exports the prompt promised to add mechanically (rule 20; registry rules 20 and 21).

    Caller-argument exports always come from the signature. Under the registry profiles the scalar leaves of a
    structured public response are added too, and a scalar response gets its ``$`` export if the model gave none.
    An export already declared at the same place or under the same name is kept as the model wrote it.
    """
    exports = d.setdefault("exports", [])
    if not isinstance(exports, list):
        return
    declared = [e for e in exports if isinstance(e, dict)]
    names = {e.get("name") for e in declared}
    # a place is where an export reads and, for one reading inside text, with which extractor
    places = {
        (
            e.get("source"),
            e.get("path"),
            (e.get("from_text") or {}).get("kind") if isinstance(e.get("from_text"), dict) else None,
        )
        for e in declared
    }
    mech = argument_exports(tool)
    if profile != "shared":
        structured = tool.response is not None and schema_type(tool.response) in ("object", "array")
        declared_response = any(src == "response" for src, _path, _kind in places)
        # An undocumented response the model already exports from keeps the model's paths; a `$` export is only
        # implied for a scalar (or undocumented and unexported) response.
        if structured or not declared_response:
            mech += response_exports(tool, {e.name for e in mech} | {n for n in names if isinstance(n, str)})
    for e in mech:
        place = (e.source, e.path, e.from_text.kind if e.from_text is not None else None)
        if e.name in names or place in places:
            continue
        exports.append(e.to_dict())
        names.add(e.name)
        places.add(place)


def contract_from_reply(
    text: str | None, tool: Tool, *, revision: int = 0, profile: RuleProfile = "stateful"
) -> Contract:
    """Parse, complete and validate one reply; raises :class:`ReplyError` listing every problem found."""
    d = parse_reply(text)
    d = copy.deepcopy(d)
    d.setdefault("tool", tool.name)
    d.setdefault("contract_version", CONTRACT_VERSION)
    d["revision"] = revision
    d["proposer"] = "llm"
    d.pop("flags", None)
    if "notes" in d and not (isinstance(d["notes"], list) and all(isinstance(n, str) for n in d["notes"])):
        d.pop("notes")
    add_mechanical_exports(d, tool, profile)
    if isinstance(d.get("success"), dict) and isinstance(d.get("failure"), dict):
        # A model writes S+/S- over the status field; a refusal the tool reports as data (error text, an error
        # object, a false verdict flag) is recognised as for offline contracts (see outcome.refusal_schema).
        d["success"], d["failure"] = with_refusals(
            d["success"], d["failure"], refusal_schema(flags=not is_read_tool(tool))
        )
    errors = validate_contract(d, tool)
    if errors:
        raise ReplyError("; ".join(errors[:12]) + (f"; ... and {len(errors) - 12} more" if len(errors) > 12 else ""))
    try:
        return Contract.from_dict(d)
    except ContractError as exc:
        raise ReplyError(str(exc)) from None


# ---------------------------------------------------------------------------------------------------------------
# Response cache
# ---------------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------------
# The proposer
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class LLMStats(ChatStats):
    """What a build spent on the model; reported next to the library so its cost is visible.

    ``fallbacks`` counts tools whose initial contract is the offline one; ``failures`` attempts whose reply was
    unusable or whose transport retries ran out.
    """

    revision_fallbacks: int = 0  # revisions done offline because the tool's budget was spent


@dataclass
class LLMConfig(ChatConfig):
    """Everything that selects the endpoint and shapes the requests.

    ``rules``/``calling_convention`` are catalog-wide defaults; a tool overrides them with
    ``Tool.metadata["contract_rules"]`` / ``Tool.metadata["calling_convention"]``.
    """

    rules: RuleProfile = "shared"
    calling_convention: CallingConvention = "signature"
    #: consecutive attempts that exhausted transport retries before the endpoint is declared unusable
    abort_after_transport_failures: int = 3


class LLMProposer:
    """A :class:`~libra.contracts.registry.Proposer` backed by a chat model (registered as proposer ``"llm"``).

    ``propose`` starts a tool's three-call budget; ``revise`` spends what is left of it. ``propose_all`` proposes
    a whole catalog with at most ``concurrency`` requests in flight. Without arguments the endpoint comes from
    $LIBRA_LLM_BASE_URL and $LIBRA_LLM_MODEL, so ``get_proposer("llm")`` works when those are set.
    """

    name = "llm"

    def __init__(self, config: LLMConfig | None = None, *, client: Any = None, **overrides: Any) -> None:
        if config is None:
            base_url = overrides.pop("base_url", None) or os.environ.get(ENV_BASE_URL)
            model = overrides.pop("model", None) or os.environ.get(ENV_MODEL)
            if not base_url or not model:
                raise ConfigError(
                    "the llm proposer needs an endpoint and a model: pass --llm-base-url/--llm-model or set "
                    f"${ENV_BASE_URL} and ${ENV_MODEL}"
                )
            config = LLMConfig(base_url=base_url, model=model, **overrides)
        elif overrides:
            raise ConfigError("pass either an LLMConfig or keyword settings to LLMProposer, not both")
        if config.rules not in RULE_PROFILES:
            raise ConfigError(f"unknown contract rule profile {config.rules!r}: choose one of {list(RULE_PROFILES)}")
        if config.calling_convention not in CALLING_CONVENTIONS:
            raise ConfigError(
                f"unknown calling convention {config.calling_convention!r}: choose one of {list(CALLING_CONVENTIONS)}"
            )
        self.config = config
        self.stats = LLMStats()
        self.chat = ChatClient(
            config,
            self.stats,
            client=client,
            error=LLMProposerError,
            abort_after=config.abort_after_transport_failures,
            key_by_url=False,
        )
        self.cache = self.chat.cache
        self._lock = threading.Lock()
        self._used: dict[str, int] = {}
        self._offline = OfflineProposer()

    # -- settings per tool ---------------------------------------------------------------------------------
    def rules_for(self, tool: Tool) -> RuleProfile:
        profile = tool.metadata.get(META_RULES, self.config.rules)
        if profile not in RULE_PROFILES:
            raise ConfigError(
                f"tool {tool.name!r}: metadata {META_RULES}={profile!r} is not one of {list(RULE_PROFILES)}"
            )
        return profile

    def convention_for(self, tool: Tool) -> CallingConvention:
        conv = tool.metadata.get(META_CONVENTION, self.config.calling_convention)
        if conv not in CALLING_CONVENTIONS:
            raise ConfigError(
                f"tool {tool.name!r}: metadata {META_CONVENTION}={conv!r} is not one of {list(CALLING_CONVENTIONS)}"
            )
        return conv

    def messages(self, tool: Tool, **kwargs: Any) -> list[dict[str, str]]:
        """The chat messages this proposer would send for ``tool`` (see :func:`build_messages`)."""
        return build_messages(tool, rules=self.rules_for(tool), calling_convention=self.convention_for(tool), **kwargs)

    # -- transport (see libra.llm.client) ---------------------------------------------------------------------
    @property
    def client(self) -> Any:
        return self.chat.client

    def _bump(self, **counts: int) -> None:
        self.chat.bump(**counts)

    def _ask(self, messages: list[dict[str, str]]) -> _Attempt:
        """A reply for these messages, from the cache when possible."""
        return self.chat.ask(messages)

    # -- budget --------------------------------------------------------------------------------------------
    def _take(self, tool: str, contract: Contract | None) -> bool:
        """Spend one attempt of ``tool``'s budget; False when it is already spent.

        A contract this proposer did not start (loaded from disk, proposed elsewhere) is assumed to have cost one
        call per revision it carries.
        """
        with self._lock:
            used = self._used.get(tool)
            if used is None:
                used = CALL_BUDGET if contract is None else 1 + contract.revision
            if used >= CALL_BUDGET:
                return False
            self._used[tool] = used + 1
            return True

    def remaining(self, tool: str) -> int:
        """Attempts left in a tool's budget (after :meth:`propose` started it)."""
        with self._lock:
            return CALL_BUDGET - self._used.get(tool, CALL_BUDGET)

    def _attempts(
        self, tool: Tool, contract: Contract | None, revision: int, feedback: list[dict[str, Any]] | None
    ) -> tuple[Contract | None, list[str]]:
        """Ask until a usable contract comes back or the budget is spent; returns (contract, problems seen)."""
        problems: list[str] = []
        rejected: tuple[list[str], str] | None = None
        profile = self.rules_for(tool)
        while self._take(tool.name, contract):
            msgs = self.messages(tool, revision=revision, previous=contract, feedback=feedback, rejected=rejected)
            try:
                attempt = self._ask(msgs)
            except _TransportExhausted as exc:
                self._bump(failures=1)
                problems.append(f"transport: {exc}")
                continue
            except _BadRequest as exc:
                self._bump(failures=1)
                problems.append(str(exc))
                continue
            try:
                new = contract_from_reply(attempt.content, tool, revision=revision, profile=profile)
            except ReplyError as exc:
                self._bump(failures=1)
                problems.append(str(exc))
                rejected = ([str(exc)], attempt.content or "")
                continue
            return new, problems
        return None, problems

    # -- Proposer protocol ---------------------------------------------------------------------------------
    def propose(self, tool: Tool) -> Contract:
        """A contract for one tool from the model; the offline one (flagged) if every attempt failed."""
        with self._lock:
            self._used[tool.name] = 0
        new, problems = self._attempts(tool, None, 0, None)
        if new is not None:
            new.notes.append(f"llm {self.config.model}: accepted after {len(problems) + 1} attempt(s)")
            return new
        self._bump(fallbacks=1)
        fallback = self._offline.propose(tool)
        fallback.flags.append(FALLBACK_FLAG)
        fallback.notes.append(
            f"llm {self.config.model}: no usable contract in {CALL_BUDGET} attempts; last problem: "
            f"{problems[-1] if problems else 'none'}"
        )
        return fallback

    def revise(self, contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None:
        """A revised contract from same-tool feedback, or None when nothing changed.

        Uses what is left of the tool's budget; once it is spent the offline reviser repairs the contract
        instead (flagged ``llm_fallback``), so a tool never stays worse off for having used the model.
        """
        if contract.revision >= MAX_REVISIONS or not feedback:
            return None
        revision = contract.revision + 1
        new, problems = self._attempts(tool, contract, revision, feedback)
        if new is None:
            fixed = offline_revise(contract, tool, feedback)
            if fixed is None:
                return None
            self._bump(revision_fallbacks=1)
            if FALLBACK_FLAG not in fixed.flags:
                fixed.flags.append(FALLBACK_FLAG)
            return fixed
        if _same_contract(new, contract):
            return None
        new.notes = list(contract.notes) + [
            f"revision {revision}: llm {self.config.model} revised from same-tool feedback"
        ]
        new.flags = [f for f in contract.flags if f != FALLBACK_FLAG]
        if "revised" not in new.flags:
            new.flags.append("revised")
        return new

    def propose_all(self, catalog: Catalog | list[Tool]) -> dict[str, Contract]:
        """Contracts for every tool, proposed concurrently (at most ``concurrency`` requests in flight)."""
        tools = list(catalog)
        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="libra-llm") as pool:
            futures = [pool.submit(self.propose, t) for t in tools]
            try:
                results = [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return {t.name: c for t, c in zip(tools, results)}


def _same_contract(a: Contract, b: Contract) -> bool:
    keys = ("templates", "exports", "success", "failure")
    da, db = a.to_dict(), b.to_dict()
    return all(da[k] == db[k] for k in keys)


def make_llm_proposer(
    base_url: str,
    model: str,
    cache_path: str | os.PathLike[str] | None = None,
    concurrency: int = 4,
    *,
    api_key: str | None = None,
    rules: RuleProfile = "shared",
    calling_convention: CallingConvention = "signature",
    **settings: Any,
) -> LLMProposer:
    """The factory behind ``--proposer llm --llm-base-url URL --llm-model M [--llm-cache DIR]``.

    Extra ``settings`` are :class:`LLMConfig` fields (temperature, timeout, max_retries, retry_base_delay...).
    """
    if not base_url or not model:
        raise ConfigError("--proposer llm needs --llm-base-url and --llm-model")
    unknown = set(settings) - set(LLMConfig.__dataclass_fields__)
    if unknown:
        raise ConfigError(
            f"unknown LLM setting(s) {sorted(unknown)}: choose among {sorted(LLMConfig.__dataclass_fields__)}"
        )
    config = LLMConfig(
        base_url=base_url,
        model=model,
        api_key=api_key,
        concurrency=concurrency,
        cache_path=str(cache_path) if cache_path is not None else None,
        rules=rules,
        calling_convention=calling_convention,
        **settings,
    )
    return LLMProposer(config)


register_proposer("llm", LLMProposer)
