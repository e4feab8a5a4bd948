"""One chat call to any OpenAI-compatible endpoint: transport, bounded retries, on-disk reply cache, counters.

Why a module of its own: the LLM contract proposer (:mod:`libra.contracts.llm.proposer`) and the paper's LLM retrieval
baselines (:mod:`libra.eval.baselines`) must reach a model the same way, so that every call of either is
cached under the same key, retried under the same policy and counted the same way:

- The official ``openai`` SDK is used (imported lazily) so vLLM, Ollama, llama.cpp and hosted APIs all work. Its
  own retries are disabled: retries here are bounded, use a configurable base delay (fast tests) and are visible
  in the counters.
- A reply is cached on disk under a hash of the model, the base URL and the exact request (messages included),
  so a rerun replays the same answers with zero calls. Unusable replies are cached as well (a replay then follows
  the same path); rate limits (429), timeouts, connection errors and 5xx are never cached.
- Errors no retry can fix (bad key, unknown model or URL) raise at once; a run of consecutive items whose
  retries all ran out means the endpoint is down, and raises rather than quietly filling results with fallbacks.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_json
from libra.errors import ConfigError, LibraError, MissingDependencyError

ENV_API_KEY = ("LIBRA_LLM_API_KEY", "OPENAI_API_KEY")
ENV_BASE_URL = "LIBRA_LLM_BASE_URL"
ENV_MODEL = "LIBRA_LLM_MODEL"


class LLMEndpointError(LibraError):
    """The model endpoint cannot be used at all (unreachable, bad key, unknown model)."""


class TransportExhausted(Exception):
    """Every retry of one chat call failed (connection, timeout, 429 or 5xx)."""


class BadRequest(Exception):
    """The endpoint rejected this particular request (e.g. HTTP 400, context too long)."""


class ReplyError(ValueError):
    """A reply that cannot be used; the message says what was wrong (and may go back to the model)."""


# ---------------------------------------------------------------------------------------------------------------
# Settings and counters
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class ChatConfig:
    """Everything that selects the endpoint and shapes the requests."""

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

    def resolved_api_key(self) -> str:
        """Explicit key, else $LIBRA_LLM_API_KEY, else $OPENAI_API_KEY, else "EMPTY" (what local servers accept)."""
        if self.api_key:
            return self.api_key
        for var in ENV_API_KEY:
            if os.environ.get(var):
                return os.environ[var]
        return "EMPTY"


@dataclass
class ChatStats:
    """What a run spent on the model, so its cost is visible next to its results."""

    calls: int = 0  # chat calls the endpoint answered
    requests: int = 0  # HTTP requests sent, retries included
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0  # replies that were unusable, or calls whose transport retries ran out
    fallbacks: int = 0  # items that got a non-LLM result because every attempt failed
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------------------------
# Reply cache
# ---------------------------------------------------------------------------------------------------------------


class ResponseCache:
    """Model replies on disk, one JSON file per request hash, so a rerun replays them exactly.

    One file per entry keeps concurrent writers independent: each write is atomic (temp file + rename), and two
    threads writing the same key write the same content.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(
                f"LLM cache path {str(self.root)!r} is a file: pass a directory (it is created if missing)"
            )

    @staticmethod
    def key(model: str, request: dict[str, Any], base_url: str | None = None) -> str:
        """Hash of the model, the exact request and (when given) the endpoint: another server never replays it."""
        ident: dict[str, Any] = {"model": model, "request": request}
        if base_url is not None:
            ident["base_url"] = base_url.rstrip("/")
        blob = json.dumps(ident, sort_keys=True, ensure_ascii=False)
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
# Reply parsing shared by every JSON-answering prompt
# ---------------------------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)
THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def parse_json_object(text: str | None) -> dict[str, Any]:
    """The JSON object in a model reply: bare, inside a Markdown fence, or with prose around it.

    Reasoning blocks (``<think>...</think>``) are dropped first. Raises :class:`ReplyError` saying what was wrong.
    """
    if not text or not text.strip():
        raise ReplyError("the reply was empty: return one JSON object")
    body = THINK.sub("", text).strip()
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
            raise ReplyError(
                f"the reply is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): return "
                "one JSON object"
            ) from None
    if not isinstance(obj, dict):
        raise ReplyError(f"the reply is JSON {type(obj).__name__}, not an object: return one JSON object")
    return obj


# ---------------------------------------------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Attempt:
    """One reply and whether it came from the cache."""

    content: str | None
    cached: bool


class ChatClient:
    """Chat calls with retries, a reply cache and counters, shared by every LLM user in libra.

    ``error`` is the exception class raised when the endpoint is unusable (callers give their own subclass of
    :class:`LLMEndpointError` so their messages name them). ``abort_after`` consecutive calls whose retries all
    ran out raise it too: past that point the endpoint is down, not flaky. ``key_by_url`` puts the base URL in
    the cache key (the retrieval methods do; the contract proposer keeps its original key, model + request, so
    caches written before this module existed stay valid and replay on any port of a local server).
    """

    def __init__(
        self,
        config: ChatConfig,
        stats: Any = None,
        *,
        client: Any = None,
        error: type[LLMEndpointError] = LLMEndpointError,
        abort_after: int = 3,
        key_by_url: bool = True,
    ) -> None:
        if config.concurrency < 1:
            raise ConfigError(f"LLM concurrency must be at least 1, got {config.concurrency}")
        self.config = config
        self.stats = stats if stats is not None else ChatStats()
        self.cache = ResponseCache(config.cache_path) if config.cache_path else None
        self.error = error
        self.abort_after = abort_after
        self.key_by_url = key_by_url
        self._client = client
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._transport_streak = 0

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    try:
                        import openai
                    except ImportError:
                        raise MissingDependencyError(
                            "LLM calls need the openai package: pip install 'libra-tools[openai]'"
                        ) from None
                    self._client = openai.OpenAI(
                        api_key=self.config.resolved_api_key(),
                        base_url=self.config.base_url,
                        max_retries=0,
                        timeout=self.config.timeout,
                    )
        return self._client

    def request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        req: dict[str, Any] = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature}
        if self.config.max_tokens is not None:
            req["max_tokens"] = self.config.max_tokens
        if self.config.json_mode:
            req["response_format"] = {"type": "json_object"}
        return req

    def bump(self, **counts: int) -> None:
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

    def send(self, req: dict[str, Any]) -> str | None:
        """One chat call with bounded exponential backoff on 408/409/429/5xx, timeouts and connection errors.

        Raises ``self.error`` at once for errors no retry can fix (bad key, unknown model or URL),
        :class:`BadRequest` when the endpoint refuses this request and :class:`TransportExhausted` when every
        retry failed.
        """
        client = self.client  # raises the install hint first when the SDK is missing
        import openai

        last: Exception | None = None
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self.bump(retries=1)
                time.sleep(self._retry_delay(attempt - 1, last))  # type: ignore[arg-type]
            self.bump(requests=1)
            try:
                with self._slots:
                    resp = client.chat.completions.create(**req)
            except openai.APIStatusError as exc:
                code = exc.status_code
                if code in (401, 403):
                    raise self.error(
                        f"the LLM endpoint refused the API key (HTTP {code}): set LIBRA_LLM_API_KEY or OPENAI_API_KEY"
                    ) from None
                if code == 404:
                    raise self.error(
                        f"the LLM endpoint has no model {self.config.model!r} or no chat API at "
                        f"{self.config.base_url} (HTTP 404): check --llm-base-url (usually ends in /v1) and "
                        "--llm-model"
                    ) from None
                if code in (408, 409, 429) or code >= 500:
                    last = exc
                    continue
                raise BadRequest(f"the endpoint rejected the request (HTTP {code}): {exc.message}") from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                last = exc
                continue
            self.bump(calls=1)
            usage = getattr(resp, "usage", None)
            if usage is not None:
                self.bump(
                    prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                    completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                    total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
                )
            choices = getattr(resp, "choices", None) or []
            return choices[0].message.content if choices and choices[0].message is not None else None
        raise TransportExhausted(f"{last.__class__.__name__}: {getattr(last, 'message', None) or last}")

    def cache_key(self, req: dict[str, Any]) -> str:
        return ResponseCache.key(self.config.model, req, self.config.base_url if self.key_by_url else None)

    def ask(self, messages: list[dict[str, str]]) -> Attempt:
        """A reply for these messages, from the cache when possible.

        A :class:`TransportExhausted` is re-raised (the caller records it) unless it is the ``abort_after``-th in
        a row, which raises ``self.error``: the endpoint is down.
        """
        req = self.request(messages)
        key = self.cache_key(req) if self.cache is not None else ""
        if self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                self.bump(cache_hits=1)
                self._reset_streak()
                return Attempt(entry.get("content"), True)
        try:
            content = self.send(req)
        except TransportExhausted as exc:
            with self._lock:
                self._transport_streak += 1
                streak = self._transport_streak
            if streak >= self.abort_after:
                raise self.error(
                    f"the LLM endpoint {self.config.base_url} kept failing after {self.config.max_retries} "
                    f"retries ({exc}): check that the server is up"
                ) from None
            raise
        self._reset_streak()
        if self.cache is not None:
            self.cache.put(key, {"model": self.config.model, "base_url": self.config.base_url, "content": content})
        return Attempt(content, False)

    def _reset_streak(self) -> None:
        with self._lock:
            self._transport_streak = 0
