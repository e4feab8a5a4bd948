"""Contracts proposed by an LLM behind any OpenAI-compatible chat endpoint (paper §3.1, Appendix A).

Why this module looks the way it does:

- The paper's method is one initial generation call per tool plus at most two revisions driven by same-tool
  execution feedback, at temperature 0, so the number of LLM calls is linear in the catalog. A per-tool budget of
  ``1 + MAX_REVISIONS`` attempts enforces that; an unusable reply (not JSON, or a contract that fails
  :func:`~libra.contracts.validate.validate_contract`) spends one attempt and its problems go into the next one.
- A tool whose budget runs out still gets a contract: the offline heuristic one, flagged ``llm_fallback`` so a
  report can say how much of a library really came from the model.
- The official ``openai`` SDK is used (imported lazily) so vLLM, Ollama, llama.cpp and hosted APIs all work. Its
  own retries are disabled: retries here are bounded and use a configurable base delay, which keeps tests fast
  and makes the retry count visible in :attr:`LLMProposer.stats`.
- Replies are cached on disk keyed by the model and a hash of the full request, so a rebuild replays the exact
  same answers with zero calls -- the only way an LLM-built library can be reproduced.
- Prompts are package data (``contracts/prompts/``), written in libra's own words; the prompt for a tool holds
  that tool's public metadata and nothing about other tools, tasks or gold annotations (rules 39-40).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from .._io import atomic_write_json
from ..catalog import Catalog, Tool
from ..errors import ConfigError, LibraError, MissingDependencyError
from ..runtime.base import INVOCATION_RECORD_SCHEMA
from .check import register_proposer
from .model import CONTRACT_VERSION, MAX_REVISIONS, Contract, ContractError
from .offline import OfflineProposer, argument_exports, is_read_tool, response_exports, revise as offline_revise, schema_type
from .outcome import refusal_schema, with_refusals, without_refusals
from .validate import contract_schema, validate_contract

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
ENV_API_KEY = ("LIBRA_LLM_API_KEY", "OPENAI_API_KEY")
ENV_BASE_URL = "LIBRA_LLM_BASE_URL"
ENV_MODEL = "LIBRA_LLM_MODEL"
_MAX_FEEDBACK_STRING = 400
_MAX_FEEDBACK_ITEMS = 20
_MAX_REPLY_EXCERPT = 1500


class LLMProposerError(LibraError):
    """The model endpoint cannot be used at all (unreachable, bad key, unknown model)."""


# ---------------------------------------------------------------------------------------------------------------
# Prompt templates (package data)
# ---------------------------------------------------------------------------------------------------------------


def _prompt_text(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
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
        raise ConfigError(f"unknown calling convention {calling_convention!r}: choose one of {list(CALLING_CONVENTIONS)}")
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


class ReplyError(ValueError):
    """A reply that cannot become a contract; the message goes back to the model as a problem to fix."""


_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def parse_reply(text: str | None) -> dict[str, Any]:
    """The contract object in a model reply.

    Accepts a bare JSON object, one inside a Markdown code fence, or one wrapped as ``{"contract": {...}}``;
    reasoning blocks (``<think>...</think>``) and prose around a single object are ignored.
    """
    if not text or not text.strip():
        raise ReplyError("the reply was empty: return the contract as one JSON object")
    body = _THINK.sub("", text).strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        start, end = body.find("{"), body.rfind("}")
        try:
            if start < 0 or end <= start:
                raise exc
            obj = json.loads(body[start : end + 1])
        except json.JSONDecodeError:
            raise ReplyError(f"the reply is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): return one JSON object") from None
    if isinstance(obj, dict) and isinstance(obj.get("contract"), dict):
        obj = obj["contract"]
    if not isinstance(obj, dict):
        raise ReplyError(f"the reply is JSON {type(obj).__name__}, not an object: return the contract as one JSON object")
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
    places = {(e.get("source"), e.get("path"), (e.get("from_text") or {}).get("kind") if isinstance(e.get("from_text"), dict) else None) for e in declared}
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


def contract_from_reply(text: str | None, tool: Tool, *, revision: int = 0, profile: RuleProfile = "stateful") -> Contract:
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
        d["success"], d["failure"] = with_refusals(d["success"], d["failure"], refusal_schema(flags=not is_read_tool(tool)))
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


class ResponseCache:
    """Model replies on disk, one JSON file per (model, request hash), so a rebuild replays them exactly.

    One file per entry keeps concurrent writers independent: each write is atomic (temp file + rename), and two
    threads writing the same key write the same content. Unusable replies are cached too, so a replay follows
    the same attempts as the original build; transport failures are never cached.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"LLM cache path {str(self.root)!r} is a file: pass a directory (it is created if missing)")

    @staticmethod
    def key(model: str, request: dict[str, Any]) -> str:
        blob = json.dumps({"model": model, "request": request}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        atomic_write_json(self._path(key), {**entry, "key": key}, indent=None)

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0


# ---------------------------------------------------------------------------------------------------------------
# The proposer
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class LLMStats:
    """What a build spent on the model; reported next to the library so its cost is visible."""

    calls: int = 0  # chat calls the endpoint answered
    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0  # attempts whose reply was unusable or whose transport retries ran out
    fallbacks: int = 0  # tools whose initial contract is the offline one
    revision_fallbacks: int = 0  # revisions done offline because the tool's budget was spent
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class LLMConfig:
    """Everything that selects the endpoint and shapes the requests.

    ``rules``/``calling_convention`` are catalog-wide defaults; a tool overrides them with
    ``Tool.metadata["contract_rules"]`` / ``Tool.metadata["calling_convention"]``.
    """

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    json_mode: bool = False
    timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 0.5
    retry_max_delay: float = 8.0
    concurrency: int = 4
    cache_path: str | None = None
    rules: RuleProfile = "shared"
    calling_convention: CallingConvention = "signature"
    #: consecutive attempts that exhausted transport retries before the endpoint is declared unusable
    abort_after_transport_failures: int = 3

    def resolved_api_key(self) -> str:
        """Explicit key, else $LIBRA_LLM_API_KEY, else $OPENAI_API_KEY, else "EMPTY" (what local servers accept)."""
        if self.api_key:
            return self.api_key
        for var in ENV_API_KEY:
            if os.environ.get(var):
                return os.environ[var]
        return "EMPTY"


@dataclass
class _Attempt:
    content: str | None
    cached: bool


class LLMProposer:
    """A :class:`~libra.contracts.check.Proposer` backed by a chat model (registered as proposer ``"llm"``).

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
                raise ConfigError(f"the llm proposer needs an endpoint and a model: pass --llm-base-url/--llm-model or set ${ENV_BASE_URL} and ${ENV_MODEL}")
            config = LLMConfig(base_url=base_url, model=model, **overrides)
        elif overrides:
            raise ConfigError("pass either an LLMConfig or keyword settings to LLMProposer, not both")
        if config.rules not in RULE_PROFILES:
            raise ConfigError(f"unknown contract rule profile {config.rules!r}: choose one of {list(RULE_PROFILES)}")
        if config.calling_convention not in CALLING_CONVENTIONS:
            raise ConfigError(f"unknown calling convention {config.calling_convention!r}: choose one of {list(CALLING_CONVENTIONS)}")
        if config.concurrency < 1:
            raise ConfigError(f"LLM concurrency must be at least 1, got {config.concurrency}")
        self.config = config
        self.stats = LLMStats()
        self.cache = ResponseCache(config.cache_path) if config.cache_path else None
        self._client = client
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._used: dict[str, int] = {}
        self._transport_streak = 0
        self._offline = OfflineProposer()

    # -- settings per tool ---------------------------------------------------------------------------------
    def rules_for(self, tool: Tool) -> RuleProfile:
        profile = tool.metadata.get(META_RULES, self.config.rules)
        if profile not in RULE_PROFILES:
            raise ConfigError(f"tool {tool.name!r}: metadata {META_RULES}={profile!r} is not one of {list(RULE_PROFILES)}")
        return profile

    def convention_for(self, tool: Tool) -> CallingConvention:
        conv = tool.metadata.get(META_CONVENTION, self.config.calling_convention)
        if conv not in CALLING_CONVENTIONS:
            raise ConfigError(f"tool {tool.name!r}: metadata {META_CONVENTION}={conv!r} is not one of {list(CALLING_CONVENTIONS)}")
        return conv

    def messages(self, tool: Tool, **kwargs: Any) -> list[dict[str, str]]:
        """The chat messages this proposer would send for ``tool`` (see :func:`build_messages`)."""
        return build_messages(tool, rules=self.rules_for(tool), calling_convention=self.convention_for(tool), **kwargs)

    # -- transport -----------------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    try:
                        import openai
                    except ImportError:
                        raise MissingDependencyError("the llm proposer needs the openai package: pip install 'libra-tools[openai]'") from None
                    self._client = openai.OpenAI(
                        api_key=self.config.resolved_api_key(), base_url=self.config.base_url, max_retries=0, timeout=self.config.timeout
                    )
        return self._client

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        req: dict[str, Any] = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature}
        if self.config.max_tokens is not None:
            req["max_tokens"] = self.config.max_tokens
        if self.config.json_mode:
            req["response_format"] = {"type": "json_object"}
        return req

    def _bump(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                setattr(self.stats, k, getattr(self.stats, k) + v)

    def _retry_delay(self, attempt: int, exc: Exception) -> float:
        delay = self.config.retry_base_delay * (2**attempt)
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        try:
            delay = max(delay, float(headers.get("retry-after", 0)))
        except (TypeError, ValueError):
            pass
        # A little jitter keeps concurrent workers from retrying in lockstep.
        return min(self.config.retry_max_delay, delay) * (1 + 0.1 * random.random())

    def _send(self, req: dict[str, Any]) -> str | None:
        """One chat call with bounded exponential backoff on 408/409/429/5xx and connection errors.

        Raises :class:`LLMProposerError` at once for errors no retry can fix (bad key, unknown model or URL) and
        ``_TransportExhausted`` when every retry failed.
        """
        client = self.client  # raises the install hint first when the SDK is missing
        import openai

        last: Exception | None = None
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self._bump(retries=1)
                time.sleep(self._retry_delay(attempt - 1, last))  # type: ignore[arg-type]
            self._bump(requests=1)
            try:
                with self._slots:
                    resp = client.chat.completions.create(**req)
            except openai.APIStatusError as exc:
                code = exc.status_code
                if code in (401, 403):
                    raise LLMProposerError(f"the LLM endpoint refused the API key (HTTP {code}): set LIBRA_LLM_API_KEY or OPENAI_API_KEY") from None
                if code == 404:
                    raise LLMProposerError(f"the LLM endpoint has no model {self.config.model!r} or no chat API at {self.config.base_url} (HTTP 404): check --llm-base-url (usually ends in /v1) and --llm-model") from None
                if code in (408, 409, 429) or code >= 500:
                    last = exc
                    continue
                raise _BadRequest(f"the endpoint rejected the request (HTTP {code}): {exc.message}") from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                last = exc
                continue
            self._bump(calls=1)
            usage = getattr(resp, "usage", None)
            if usage is not None:
                self._bump(
                    prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                    completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                    total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
                )
            choices = getattr(resp, "choices", None) or []
            return choices[0].message.content if choices and choices[0].message is not None else None
        raise _TransportExhausted(f"{last.__class__.__name__}: {getattr(last, 'message', None) or last}")

    def _ask(self, messages: list[dict[str, str]]) -> _Attempt:
        """A reply for these messages, from the cache when possible."""
        req = self._request(messages)
        key = ResponseCache.key(self.config.model, req) if self.cache is not None else ""
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                self._bump(cache_hits=1)
                return _Attempt(entry.get("content"), True)
        content = self._send(req)
        if self.cache is not None:
            self.cache.put(key, {"model": self.config.model, "content": content})
        return _Attempt(content, False)

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

    def _attempts(self, tool: Tool, contract: Contract | None, revision: int, feedback: list[dict[str, Any]] | None) -> tuple[Contract | None, list[str]]:
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
                with self._lock:
                    self._transport_streak += 1
                    streak = self._transport_streak
                if streak >= self.config.abort_after_transport_failures:
                    raise LLMProposerError(f"the LLM endpoint {self.config.base_url} kept failing after {self.config.max_retries} retries ({exc}): check that the server is up") from None
                continue
            except _BadRequest as exc:
                self._bump(failures=1)
                problems.append(str(exc))
                continue
            with self._lock:
                self._transport_streak = 0
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
        fallback.notes.append(f"llm {self.config.model}: no usable contract in {CALL_BUDGET} attempts; last problem: {problems[-1] if problems else 'none'}")
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
        new.notes = list(contract.notes) + [f"revision {revision}: llm {self.config.model} revised from same-tool feedback"]
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


class _TransportExhausted(Exception):
    """Every retry of one chat call failed (connection, timeout, 429 or 5xx)."""


class _BadRequest(Exception):
    """The endpoint rejected this particular request (e.g. HTTP 400, context too long)."""


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
        raise ConfigError(f"unknown LLM setting(s) {sorted(unknown)}: choose among {sorted(LLMConfig.__dataclass_fields__)}")
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
